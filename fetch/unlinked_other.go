//go:build !unix

package fetch

import "os"

// keepOpen: here a consumer's open file could keep retention from
// deleting its segment, and unlinked cannot tell a removed name: the file
// is opened for each fetch, as before.
const keepOpen = false

func unlinked(*os.File) bool { return true }

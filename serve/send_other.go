//go:build !unix

package serve

import (
	"net"
	"os"
)

// sendMapped is the unix systems' (send_unix.go); elsewhere a range is
// always sent from the file.
func sendMapped(*net.TCPConn, *os.File, int64, int64) (bool, error) { return false, nil }

//go:build !linux

package verify

import "os"

var pageSize = os.Getpagesize()

// residency is unknown outside Linux: nothing is dropped.
func residency(*os.File, int64) []uint64 { return nil }

func dropPages(*os.File, int64, int64) {}

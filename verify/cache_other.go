//go:build !linux

package verify

import "os"

var pageSize = os.Getpagesize()

// residency is unknown outside Linux: nothing is dropped.
func residency(fder, int64) []uint64 { return nil }

func dropPages(fder, int64, int64) {}

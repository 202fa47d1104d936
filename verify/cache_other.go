//go:build !linux

package verify

import (
	"errors"
	"os"
)

var pageSize = os.Getpagesize()

// residency is unknown outside Linux: nothing is dropped.
func residency(fder, int64) []uint64 { return nil }

func dropPages(fder, int64, int64) {}

func lazyResidency(fder, int64) bool { return false }

func readAhead(fder) {}

func residencyFrom(fder, int64, int64) []uint64 { return nil }

func readCachedOnly(fder, []byte, int64) (int, error) { return 0, errors.ErrUnsupported }

func missingPage(error) bool { return false }

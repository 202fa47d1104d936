// Package klogtest holds helpers that tests in several packages share.
package klogtest

import "context"

// CancelAfter is a context whose Err turns context.Canceled after N calls:
// a signal arriving in the middle of a long read, at a point a test picks.
type CancelAfter struct {
	context.Context
	N int
}

// Err is nil for the first N calls and context.Canceled after.
func (c *CancelAfter) Err() error {
	if c.N--; c.N < 0 {
		return context.Canceled
	}
	return nil
}

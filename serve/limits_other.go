//go:build !unix

package serve

// fdLimit is unknown here: no topic budget.
func fdLimit() int { return 0 }

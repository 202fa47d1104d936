//go:build !unix

package serve

// diskSpace is unknown here (-1, as DescribeLogDirs reports it).
func diskSpace(string) (total, usable int64) { return -1, -1 }

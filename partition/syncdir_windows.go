//go:build windows

package partition

// syncDir does nothing on Windows: a directory cannot be opened for
// FlushFileBuffers there, and NTFS journals the rename itself (Kafka's
// Utils.flushDir skips Windows too).
func syncDir(dir string) error { return nil }

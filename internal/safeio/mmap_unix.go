//go:build unix

package safeio

import (
	"os"
	"runtime/debug"
	"syscall"
)

// Map maps a whole file read-only, as Kafka maps its index files
// (AbstractIndex: a MappedByteBuffer): reading a few entries of a huge or
// sparse index touches a few pages, whatever the file's size. The caller
// must call unmap when done. An empty file maps to nil.
//
// A file truncated while mapped faults when a page past its new end is
// touched: Map makes such faults panics (debug.SetPanicOnFault, until
// unmap) so that the caller can recover them (IsFault) instead of crashing.
func Map(path string) (data []byte, unmap func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, &os.PathError{Op: "mmap", Path: path, Err: ErrNotRegular}
	}
	if st.Size() == 0 {
		return nil, func() {}, nil
	}
	if st.Size() > 1<<40 {
		return nil, nil, &TooLargeError{Path: path, Size: st.Size(), Limit: 1 << 40}
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, &os.PathError{Op: "mmap", Path: path, Err: err}
	}
	prev := debug.SetPanicOnFault(true)
	return data, func() {
		debug.SetPanicOnFault(prev)
		syscall.Munmap(data)
	}, nil
}

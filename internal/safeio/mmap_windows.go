//go:build windows

package safeio

import (
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Map maps a whole file read-only (see the Unix version):
// CreateFileMapping and MapViewOfFile on Windows.
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
	size := st.Size()
	if size == 0 {
		return nil, func() {}, nil
	}
	if size > 1<<40 {
		return nil, nil, &TooLargeError{Path: path, Size: size, Limit: 1 << 40}
	}
	h, err := windows.CreateFileMapping(windows.Handle(f.Fd()), nil, windows.PAGE_READONLY, uint32(size>>32), uint32(size), nil)
	if err != nil {
		return nil, nil, &os.PathError{Op: "mmap", Path: path, Err: err}
	}
	addr, err := windows.MapViewOfFile(h, windows.FILE_MAP_READ, 0, 0, uintptr(size))
	windows.CloseHandle(h)
	if err != nil {
		return nil, nil, &os.PathError{Op: "mmap", Path: path, Err: err}
	}
	data = unsafe.Slice((*byte)(unsafe.Pointer(addr)), int(size))
	return data, func() { windows.UnmapViewOfFile(addr) }, nil
}

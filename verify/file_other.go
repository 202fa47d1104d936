//go:build !linux

package verify

import (
	"io"
	"os"
)

// file is an open file verify reads (an *os.File; Linux reads a bare
// descriptor, file_linux.go).
type file struct{ *os.File }

// openFile opens path for reading and returns it with its stat.
func openFile(path string) (*file, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return &file{f}, st, nil
}

// readOnce reads at off; fewer bytes than asked for at the end of the file.
func (f *file) readOnce(b []byte, off int64) (int, error) {
	n, err := f.ReadAt(b, off)
	if err == io.EOF {
		err = nil
	}
	return n, err
}

//go:build linux

package verify

import (
	"errors"
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// file is an open file verify reads: on Unix a bare descriptor, read with
// pread(2), so that opening costs openat and fstat and nothing more (an
// *os.File registers with the poller and toggles O_NONBLOCK: four fcntl
// and an epoll_ctl per file, most of the system calls of a log dir of
// small files).
type file struct {
	fd   int
	path string
	off  int64 // for Read
	// quick is set for a small regular file found all in the page cache
	// (residency): its reads and its close cannot wait for a disk, and
	// are made as raw system calls (rawSyscall).
	quick bool
}

// openFile opens path for reading and returns it with its stat.
func openFile(path string) (*file, os.FileInfo, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := &file{fd: fd, path: path}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return f, fileInfo(path, &st), nil
}

// ReadAt is pread(2), looping over short reads as os.File.ReadAt does.
func (f *file) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &os.PathError{Op: "read", Path: f.path, Err: errors.New("negative offset")}
	}
	n := 0
	for len(b) > 0 {
		m, err := f.pread(b, off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, &os.PathError{Op: "read", Path: f.path, Err: err}
		}
		if m == 0 {
			return n, io.EOF
		}
		n += m
		b = b[m:]
		off += int64(m)
	}
	return n, nil
}

// readOnce is one pread(2) at off: fewer bytes than asked for at the end
// of the file, 0 and no error at or past it.
func (f *file) readOnce(b []byte, off int64) (int, error) {
	for {
		n, err := f.pread(b, off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, &os.PathError{Op: "read", Path: f.path, Err: err}
		}
		return n, nil
	}
}

// Read reads sequentially from where the last Read stopped.
func (f *file) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		m, err := f.pread(b, f.off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, &os.PathError{Op: "read", Path: f.path, Err: err}
		}
		if m == 0 {
			return 0, io.EOF
		}
		f.off += int64(m)
		return m, nil
	}
}

// Fd is the descriptor, for the page-cache calls.
func (f *file) Fd() uintptr { return uintptr(f.fd) }

// Close closes the descriptor.
func (f *file) Close() error {
	if f.fd < 0 {
		return os.ErrClosed
	}
	var err error
	if f.quick {
		err = rawSyscall(syscall.SYS_CLOSE, uintptr(f.fd), 0, 0)
	} else {
		err = syscall.Close(f.fd)
	}
	f.fd = -1
	return err
}

// pread is pread(2) at off.
func (f *file) pread(b []byte, off int64) (int, error) {
	if !f.quick {
		return syscall.Pread(f.fd, b, off)
	}
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	n, _, e := syscall.RawSyscall6(syscall.SYS_PREAD64, uintptr(f.fd), uintptr(p), uintptr(len(b)), uintptr(off), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// rawSyscall makes a system call that cannot wait (for a disk, a lock held
// elsewhere) without telling the scheduler, as the runtime makes its own
// (syscall.RawSyscall). Told, the scheduler marks the goroutine's P as in
// a system call, and on a machine whose cores are all busy, sysmon hands
// that P to another thread whenever the call outlasts its 20 µs tick (the
// thread was preempted in the kernel, say): a futex wake-up for that
// thread and one more when the call returns and must find a P again. In a
// log dir of small files that was most of the futex calls, one every two
// files (strace and perf trace, 100 partitions).
func rawSyscall(trap, a1, a2, a3 uintptr) error {
	if _, _, e := syscall.RawSyscall(trap, a1, a2, a3); e != 0 {
		return e
	}
	return nil
}

// setQuick marks f as a small regular file all in the page cache.
func (f *file) setQuick() { f.quick = true }

// quickBytes is the largest file whose reads can be quick: one read window.
const quickBytes = logReadAhead

// fileStat is the os.FileInfo of an fstat.
type fileStat struct {
	name string
	st   syscall.Stat_t
}

func fileInfo(path string, st *syscall.Stat_t) os.FileInfo {
	return &fileStat{name: path, st: *st}
}

func (s *fileStat) Name() string       { return s.name }
func (s *fileStat) Size() int64        { return s.st.Size }
func (s *fileStat) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s *fileStat) IsDir() bool        { return s.Mode().IsDir() }
func (s *fileStat) Sys() any           { return &s.st }

func (s *fileStat) Mode() os.FileMode {
	m := os.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		m |= os.ModeDir
	case syscall.S_IFLNK:
		m |= os.ModeSymlink
	case syscall.S_IFIFO:
		m |= os.ModeNamedPipe
	case syscall.S_IFSOCK:
		m |= os.ModeSocket
	case syscall.S_IFBLK:
		m |= os.ModeDevice
	case syscall.S_IFCHR:
		m |= os.ModeDevice | os.ModeCharDevice
	}
	return m
}

package safeio

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// BrokerLockFile is the file a Kafka broker locks in each log directory
// while it runs (LogManager.lockLogDirs: FileLock.tryLock, a Java
// FileChannel.tryLock, which on Linux is fcntl(F_SETLK) with an exclusive
// lock over the whole file).
const BrokerLockFile = ".lock"

// BrokerLockError says a broker (or another process) holds the log
// directory's lock, or, with Self, that this process already holds it.
type BrokerLockError struct {
	Path string
	PID  int  // the holder, when the kernel reports one
	Self bool // this process holds it (a second LockBroker)
	// Writer says the holder's lock is shared: another klog writer's
	// (HoldBroker), not a broker's (a broker's tryLock is exclusive).
	Writer bool
}

func (e *BrokerLockError) Error() string {
	if e.Self {
		return e.Path + " is already locked by this process; one writable server per log directory"
	}
	msg := e.Path + " is locked by a running broker"
	if e.Writer {
		msg = e.Path + " is held by another klog writer"
	}
	if e.PID > 0 {
		msg += " (pid " + strconv.Itoa(e.PID) + ")"
	}
	if e.Writer {
		return msg + "; a broker (or klog serve --writable) cannot take the log directory while it writes"
	}
	return msg + "; stop it before writing to this log directory"
}

// BrokerLock is this process's hold on a log directory's .lock, from
// LockBroker or HoldBroker until Release.
//
// The rule (README, "The broker's lock"): a lock is taken on one
// descriptor, and .lock is never opened again while any lock of this
// process is on it. POSIX record locks belong to the process, and any
// close of any descriptor of the file drops them all: a probe that opened
// and closed .lock would release the lock the process holds. Every open
// of .lock therefore goes through this file, which keeps the table of the
// locks the process holds (as Java's FileLockTable does for a JVM) and
// answers from it. On Linux the lock is an open file description lock
// (F_OFD_SETLK), which conflicts with a broker's F_SETLK as a record lock
// does but is not dropped by a close elsewhere in the process.
type BrokerLock struct {
	h    *heldLock // nil: no .lock to hold (HoldBroker on a dir without one)
	once sync.Once
}

// heldLock is one .lock this process has locked, and its holders.
type heldLock struct {
	path      string
	f         *os.File
	fi        os.FileInfo
	exclusive bool
	refs      int
}

// held is the process's table of held locks; its mutex also orders every
// open of a .lock against taking and releasing locks.
var held struct {
	sync.Mutex
	locks []*heldLock
}

// lookupHeld returns the held lock on the file at p (by identity: device
// and inode on Unix), nil when none. The caller holds held's mutex.
func lookupHeld(p string) (*heldLock, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "lock", Path: p, Err: errors.New("is a symlink; a broker's lock file never is, and klog does not follow it")}
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "lock", Path: p, Err: ErrNotRegular}
	}
	for _, h := range held.locks {
		if os.SameFile(h.fi, fi) {
			return h, nil
		}
	}
	return nil, nil
}

// LockBroker takes logDir's .lock exclusively, as a broker does
// (LogManager.lockLogDirs), creating it if missing: klog serve --writable,
// which is the log directory's broker while it runs. It fails with a
// *BrokerLockError when any other process holds the lock (a broker, a
// klog writer) or this process does already.
func LockBroker(logDir string) (*BrokerLock, error) {
	return lockBroker(logDir, true)
}

// HoldBroker holds logDir's .lock shared for as long as a klog writer
// writes there (produce's appender, recover --output, redact, fetch's
// group commit): writers coexist with each other and with this process's
// own LockBroker, but a broker (whose tryLock is exclusive) cannot start
// meanwhile, and a running broker makes HoldBroker fail with a
// *BrokerLockError. A log directory without .lock has had no broker: the
// returned lock holds nothing, and no .lock is created.
func HoldBroker(logDir string) (*BrokerLock, error) {
	return lockBroker(logDir, false)
}

// CheckBrokerLock returns a *BrokerLockError when another process holds
// logDir/.lock as a broker does. It is HoldBroker released at once: only
// for a caller that writes nothing under logDir afterwards.
func CheckBrokerLock(logDir string) error {
	l, err := HoldBroker(logDir)
	if err != nil {
		return err
	}
	return l.Release()
}

func lockBroker(logDir string, exclusive bool) (*BrokerLock, error) {
	p := filepath.Join(logDir, BrokerLockFile)
	held.Lock()
	defer held.Unlock()
	h, err := lookupHeld(p)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !exclusive:
		return &BrokerLock{}, nil
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case h != nil && exclusive:
		return nil, &BrokerLockError{Path: p, Self: true}
	case h != nil:
		h.refs++
		return &BrokerLock{h: h}, nil
	}
	flag := os.O_RDONLY
	if exclusive {
		flag = os.O_RDWR | os.O_CREATE // as Kafka's FileLock opens it
	}
	f, err := OpenFile(p, flag, 0o644)
	if err != nil {
		return nil, err
	}
	// Nothing of this process is locked on f's file (lookupHeld), so
	// closing f on failure drops nothing.
	if err := setLock(f, exclusive); err != nil {
		pid, shared, conflict := lockHolder(f, err)
		f.Close()
		if conflict {
			return nil, &BrokerLockError{Path: p, PID: pid, Writer: shared}
		}
		return nil, &fs.PathError{Op: "lock", Path: p, Err: err}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	h = &heldLock{path: p, f: f, fi: fi, exclusive: exclusive, refs: 1}
	held.locks = append(held.locks, h)
	return &BrokerLock{h: h}, nil
}

// Release gives up this hold; the lock is released (and its descriptor
// closed) when its last holder releases it. Release is idempotent.
func (l *BrokerLock) Release() error {
	var err error
	l.once.Do(func() {
		if l.h == nil {
			return
		}
		held.Lock()
		defer held.Unlock()
		l.h.refs--
		if l.h.refs > 0 {
			return
		}
		for i, h := range held.locks {
			if h == l.h {
				held.locks = append(held.locks[:i], held.locks[i+1:]...)
				break
			}
		}
		err = l.h.f.Close()
	})
	return err
}

// Path is the lock file held, "" when nothing is held.
func (l *BrokerLock) Path() string {
	if l == nil || l.h == nil {
		return ""
	}
	return l.h.path
}

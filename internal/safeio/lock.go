package safeio

import "strconv"

// BrokerLockFile is the file a Kafka broker locks in each log directory
// while it runs (LogManager.lockLogDirs: FileLock.tryLock, a Java
// FileChannel.tryLock, which is a POSIX record lock on Linux).
const BrokerLockFile = ".lock"

// BrokerLockError says a broker (or another process) holds the log
// directory's lock.
type BrokerLockError struct {
	Path string
	PID  int // the holder, when the kernel reports one
}

func (e *BrokerLockError) Error() string {
	msg := e.Path + " is locked by a running broker"
	if e.PID > 0 {
		msg += " (pid " + strconv.Itoa(e.PID) + ")"
	}
	return msg + "; stop it before writing to this log directory"
}

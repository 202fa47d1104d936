package produce

import (
	"context"
	"errors"
	"os"
	"time"
)

// ErrLocked is returned by Open when another writer holds the partition and
// Options.Wait is false.
var ErrLocked = errors.New("partition directory is locked by another writer")

// forkGrace is how long a lock found held is tried again even without
// Options.Wait. A flock belongs to the open file description, and a
// process that forks (os/exec, on another goroutine) gives the child a
// copy of every descriptor until the child's exec closes them: a writer
// of this process that closed its appender a moment ago can still hold
// the lock through that copy. Another writer holds it far longer.
const forkGrace = 250 * time.Millisecond

// lockDir takes the partition's writer lock (see tryLock for each
// platform). With wait it retries until the lock is free or ctx ends;
// without, a lock still held after forkGrace is ErrLocked. The lock goes
// with the process: a killed writer releases it.
func lockDir(ctx context.Context, dir string, wait bool) (*os.File, error) {
	delay := 5 * time.Millisecond
	start := time.Now()
	for {
		f, err := tryLock(dir)
		if !errors.Is(err, ErrLocked) || !wait && time.Since(start) >= forkGrace {
			return f, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		case <-t.C:
		}
		delay = min(2*delay, 250*time.Millisecond)
	}
}

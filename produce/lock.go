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

// lockDir takes the partition's writer lock (see tryLock for each
// platform). With wait it retries until the lock is free or ctx ends;
// without, a held lock is ErrLocked. The lock goes with the process: a
// killed writer releases it.
func lockDir(ctx context.Context, dir string, wait bool) (*os.File, error) {
	delay := 5 * time.Millisecond
	for {
		f, err := tryLock(dir)
		if !errors.Is(err, ErrLocked) || !wait {
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

package tail

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klog-dev/klog/produce"
)

// TestEvents: the iterator yields the replayed batches and stops the tail
// when the loop breaks; a path that does not exist ends it with the error.
func TestEvents(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "orders-0")
	a := openAppender(t, dir, produce.Options{})
	appendN(t, a, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	batches := 0
	for ev, err := range Events(ctx, []string{dir}, Options{FromBeginning: true}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == TypeBatch {
			if batches++; batches == 3 {
				break
			}
		}
	}
	if batches != 3 || ctx.Err() != nil {
		t.Fatalf("%d batches (ctx %v)", batches, ctx.Err())
	}
	var last error
	for _, err := range Events(ctx, []string{filepath.Join(dir, "missing")}, Options{}) {
		last = err
	}
	if !errors.Is(last, os.ErrNotExist) {
		t.Errorf("missing path: %v, want ErrNotExist", last)
	}
}

//go:build linux

package partition

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
)

// TestWatchLimitError: inotify's ENOSPC and EMFILE name the sysctl to raise.
func TestWatchLimitError(t *testing.T) {
	t.Parallel()
	err := watchError("/data/orders-7", fmt.Errorf("wrapped: %w", syscall.ENOSPC), 8191)
	var wl *WatchLimitError
	if !errors.As(err, &wl) || !errors.Is(err, syscall.ENOSPC) || wl.Sysctl != "fs.inotify.max_user_watches" || wl.Watches != 8191 {
		t.Fatalf("ENOSPC: %#v", err)
	}
	for _, want := range []string{"/data/orders-7", "fs.inotify.max_user_watches", "8191 watches", "sysctl -w fs.inotify.max_user_watches="} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if wl.Limit != readLimit(sysctlMaxWatches) {
		t.Errorf("limit %d", wl.Limit)
	}
	err = watchError("", syscall.EMFILE, 0)
	if !errors.As(err, &wl) || wl.Sysctl != "fs.inotify.max_user_instances" || !strings.Contains(err.Error(), "max_user_instances") {
		t.Fatalf("EMFILE: %v", err)
	}
	if err := watchError("/x", syscall.EACCES, 0); !errors.Is(err, syscall.EACCES) || errors.As(err, &wl) {
		t.Fatalf("EACCES: %v", err)
	}
	t.Logf("this machine: max_user_watches=%d max_user_instances=%d", readLimit(sysctlMaxWatches), readLimit(sysctlMaxInstances))
}

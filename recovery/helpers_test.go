package recovery

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/internal/verifytest"
	"github.com/klog-dev/klog/verify"
)

func segments(t testing.TB, parts ...string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(append([]string{"../testdata/segments"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func verifyPaths(paths ...string) (*verifytest.Report, error) {
	return verifytest.Run(context.Background(), paths, verify.Options{Jobs: 1})
}

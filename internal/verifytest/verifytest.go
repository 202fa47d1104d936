// Package verifytest collects a whole verify run for the tests of packages
// that check their output with verify (produce, redact, serve, replicate,
// recovery, inspect, cmd/klog).
package verifytest

import (
	"context"

	"github.com/klog-dev/klog/verify"
)

// Report is every file a run verified, in order.
type Report struct {
	Files []verify.FileReport
}

// Run collects verify.Files over paths.
func Run(ctx context.Context, paths []string, opts verify.Options) (*Report, error) {
	rep := &Report{}
	for f, err := range verify.Files(ctx, paths, opts) {
		if err != nil {
			return rep, err
		}
		rep.Files = append(rep.Files, *f)
	}
	return rep, nil
}

// Findings counts the findings of every file.
func (r *Report) Findings() int {
	n := 0
	for i := range r.Files {
		n += r.Files[i].Findings()
	}
	return n
}

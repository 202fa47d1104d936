package verify

import (
	"context"
	"io"
	"path/filepath"
	"time"
)

// runReport is a whole run collected from Files, for the tests.
type runReport struct {
	Files     []FileReport
	BytesRead int64         `json:"-"`
	Start     time.Time     `json:"-"`
	Duration  time.Duration `json:"-"`
}

// collect runs Files to the end, keeping every report.
func collect(ctx context.Context, paths []string, opts Options) (*runReport, error) {
	rep := &runReport{Start: time.Now()}
	var err error
	for f, ferr := range Files(ctx, paths, opts) {
		if ferr != nil {
			err = ferr
			break
		}
		rep.Files = append(rep.Files, *f)
		rep.BytesRead += f.BytesRead
	}
	rep.Duration = time.Since(rep.Start)
	return rep, err
}

// Findings counts all findings.
func (r *runReport) Findings() int {
	n := 0
	for i := range r.Files {
		n += r.Files[i].Findings()
	}
	return n
}

// IOErrors counts files whose check failed on I/O.
func (r *runReport) IOErrors() int {
	n := 0
	for i := range r.Files {
		if r.Files[i].ioErr != nil {
			n++
		}
	}
	return n
}

// writeMetrics writes rep's metrics as the CLI does.
func writeMetrics(w io.Writer, rep *runReport) error {
	m := NewMetrics(rep.Start)
	for i := range rep.Files {
		m.Add(&rep.Files[i])
	}
	return m.write(w, rep.Duration)
}

// writeMetricsFile is writeMetrics to a file, atomically.
func writeMetricsFile(path string, rep *runReport) error {
	m := NewMetrics(rep.Start)
	for i := range rep.Files {
		m.Add(&rep.Files[i])
	}
	return m.Write(filepath.Clean(path), rep.Duration)
}

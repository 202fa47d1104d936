package verify

import (
	"context"
	"io"

	"github.com/klog-dev/klog/format"
)

// LogChecker verifies .log segments read through any io.ReaderAt (the
// remote tier's objects, which are not files) with the checks Run makes of a
// .log file: every batch's CRC, framing, records and offsets, and the tail.
// It reuses its buffers; one goroutine uses it at a time.
type LogChecker struct {
	v *verifier
}

// NewLogChecker returns a checker with opts' limits (MaxBatchBytes,
// MaxDecompressedBytes); the other options are Run's.
func NewLogChecker(ctx context.Context, opts Options) *LogChecker {
	opts.budget = newDecompressBudget(opts.MaxDecompressedBytes)
	opts.KeepCache = true // the bytes are not files in the page cache
	return &LogChecker{v: newVerifier(ctx, opts, newReads(ctx, opts))}
}

// Check verifies the size bytes of r as a segment whose base offset is base
// (-1 when unknown), reported under name. onBatch, if set, is called with
// every batch read whole, before its records are checked (the batch is
// valid only during the call).
func (c *LogChecker) Check(name string, r io.ReaderAt, size, base int64, onBatch func(*format.Batch)) FileReport {
	f := FileReport{Path: name, Kind: "log", Bytes: size, FirstOffset: -1, LastOffset: -1, lastPos: -1}
	c.v.onBatch = onBatch
	err := c.v.scanLog(&f, task{path: name, kind: "log", base: base}, r, size, true)
	c.v.onBatch = nil
	if err != nil {
		f.ioErr = err
		f.Err = err.Error()
	}
	f.OK = f.Findings() == 0 && f.ioErr == nil
	return f
}

// IOError is the error that stopped the check of the file, if any.
func (f *FileReport) IOError() error { return f.ioErr }

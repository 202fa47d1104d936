package format

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// scanWindowed is scanAll with a Scanner that serves [from, to) of data
// from memory (UseWindow) before its first read.
func scanWindowed(t *testing.T, data []byte, opts ScanOptions, from, to int) scanResult {
	t.Helper()
	var res scanResult
	s := NewScanner(bytes.NewReader(data), int64(len(data)), opts)
	s.UseWindow(data[from:to], int64(from))
	for i := 0; ; i++ {
		if i > len(data)+2 {
			t.Fatalf("scanner made no progress at position %d", s.Pos())
		}
		before := s.Pos()
		b, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			res.errs = append(res.errs, err)
			res.errPos = append(res.errPos, before)
			if s.Done() {
				break
			}
			continue
		}
		res.batches = append(res.batches, b.Clone())
		res.ends = append(res.ends, s.Pos())
	}
	res.tail = s.Tail()
	return res
}

// TestScanUseWindow: a Scanner given part of its input in memory finds the
// same entries, errors and tail as one that reads everything, whether the
// window covers the input, a prefix, or a stretch that cuts entries in two
// at both ends; with and without read-ahead and in headers-only mode.
func TestScanUseWindow(t *testing.T) {
	for _, name := range logFiles(t, "") {
		data, err := os.ReadFile(filepath.Join(testSegmentsRoot, name))
		if err != nil {
			t.Fatal(err)
		}
		n := len(data)
		windows := [][2]int{{0, n}, {0, n / 2}, {n / 3, 2 * n / 3}, {n / 2, n}, {0, 0}}
		for _, opts := range []ScanOptions{{}, {ReadAhead: -1}, {HeadersOnly: true}} {
			want := scanAll(t, data, opts)
			for _, w := range windows {
				got := scanWindowed(t, data, opts, w[0], w[1])
				if len(got.batches) != len(want.batches) || len(got.errs) != len(want.errs) || got.tail != want.tail {
					t.Fatalf("%s %+v window %v: %d batches, %d errors, tail %+v; want %d, %d, %+v", name, opts, w,
						len(got.batches), len(got.errs), got.tail, len(want.batches), len(want.errs), want.tail)
				}
				for i := range want.batches {
					if d := headerDiff(want.batches[i], got.batches[i]); d != "" || got.ends[i] != want.ends[i] ||
						!bytes.Equal(got.batches[i].Raw, want.batches[i].Raw) {
						t.Fatalf("%s %+v window %v: batch %d: %s (end %d, want %d)", name, opts, w, i, d, got.ends[i], want.ends[i])
					}
				}
				for i := range want.errs {
					if got.errs[i].Error() != want.errs[i].Error() || got.errPos[i] != want.errPos[i] {
						t.Fatalf("%s %+v window %v: error %d %v at %d, want %v at %d", name, opts, w, i, got.errs[i], got.errPos[i], want.errs[i], want.errPos[i])
					}
				}
			}
		}
	}
}

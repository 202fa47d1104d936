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

// byteCounter counts the bytes read through it.
type byteCounter struct {
	r    io.ReaderAt
	read int64
}

func (c *byteCounter) ReadAt(b []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(b, off)
	c.read += int64(n)
	return n, err
}

// TestScanSmallWindows: a read window that cuts entries in two (every few
// entries, at sizes that are and are not whole pages) finds the same
// entries, errors and tail as reading each entry exactly, on every fixture
// segment, tails and corruption included.
func TestScanSmallWindows(t *testing.T) {
	for _, name := range logFiles(t, "") {
		data, err := os.ReadFile(filepath.Join(testSegmentsRoot, name))
		if err != nil {
			t.Fatal(err)
		}
		want := scanAll(t, data, ScanOptions{ReadAhead: -1})
		for _, ra := range []int{100, 1000, pageBytes, 2 * pageBytes, 3*pageBytes + 17, 64 << 10} {
			got := scanAll(t, data, ScanOptions{ReadAhead: ra})
			if len(got.batches) != len(want.batches) || len(got.errs) != len(want.errs) || got.tail != want.tail {
				t.Fatalf("%s window %d: %d batches, %d errors, tail %+v; want %d, %d, %+v", name, ra,
					len(got.batches), len(got.errs), got.tail, len(want.batches), len(want.errs), want.tail)
			}
			for i := range want.batches {
				if got.ends[i] != want.ends[i] || !bytes.Equal(got.batches[i].Raw, want.batches[i].Raw) {
					t.Fatalf("%s window %d: batch %d differs (end %d, want %d)", name, ra, i, got.ends[i], want.ends[i])
				}
			}
			for i := range want.errs {
				if got.errs[i].Error() != want.errs[i].Error() || got.errPos[i] != want.errPos[i] {
					t.Fatalf("%s window %d: error %d %v at %d, want %v at %d", name, ra, i, got.errs[i], got.errPos[i], want.errs[i], want.errPos[i])
				}
			}
		}
	}
}

// TestScanReadsEachByteOnce: the entry a window's read cuts in two is not
// read again from its start; the next read goes on from the window's end,
// so a scan of valid entries reads each byte of the input once.
func TestScanReadsEachByteOnce(t *testing.T) {
	one, err := os.ReadFile(filepath.Join(testSegmentsRoot, logFiles(t, "kafka-written")[0]))
	if err != nil {
		t.Fatal(err)
	}
	probe := scanAll(t, one, ScanOptions{ReadAhead: -1})
	if len(probe.errs) != 0 || probe.tail.Kind != TailNone {
		t.Fatalf("fixture %s is not a clean log: %v, tail %+v", logFiles(t, "kafka-written")[0], probe.errs, probe.tail)
	}
	var data []byte
	for len(data) < 1<<20 {
		data = append(data, one...)
	}
	for _, ra := range []int{16 << 10, 64 << 10} {
		c := &byteCounter{r: bytes.NewReader(data)}
		s := NewScanner(c, int64(len(data)), ScanOptions{ReadAhead: ra})
		n := 0
		for {
			_, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != len(probe.batches)*(len(data)/len(one)) {
			t.Fatalf("window %d: %d entries, want %d", ra, n, len(probe.batches)*(len(data)/len(one)))
		}
		if c.read != int64(len(data)) {
			t.Errorf("window %d: read %d bytes of a %d-byte input", ra, c.read, len(data))
		}
	}
}

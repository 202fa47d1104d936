package format_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/klog-dev/klog/format"
)

// pieces is a format.Viewer over data held in pieces of n bytes, counting
// the reads that copy (ReadAt).
type pieces struct {
	data   []byte
	n      int
	copies int
}

func (p *pieces) ReadAt(b []byte, off int64) (int, error) {
	p.copies++
	return bytes.NewReader(p.data).ReadAt(b, off)
}

func (p *pieces) View(pos int64, n int) []byte {
	if pos >= int64(len(p.data)) {
		return nil
	}
	end := min((pos/int64(p.n)+1)*int64(p.n), int64(len(p.data)))
	if d := p.data[pos:end]; len(d) >= n {
		return d
	}
	return nil
}

// TestScannerOverViewer: a Scanner over a Viewer returns what it returns
// over a plain ReaderAt (every batch, its CRC, a torn tail), reading
// through View and copying only the batches that span two pieces.
func TestScannerOverViewer(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var c format.Compressor
	var log []byte
	for i := range 300 {
		recs := make([]format.Record, 1+rng.IntN(20))
		for j := range recs {
			recs[j] = format.Record{Offset: int64(j), Value: make([]byte, rng.IntN(2000))}
		}
		h := &format.Batch{BaseOffset: int64(i * 100)}
		format.PrepareBatch(h, recs)
		var err error
		if log, err = c.AppendBatch(log, h, recs); err != nil {
			t.Fatal(err)
		}
	}
	log = append(log, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 9, 9, 9, 9, 9, 9) // a torn batch
	scan := func(r io.ReaderAt) (out []string, tail format.Tail) {
		sc := format.NewScanner(r, int64(len(log)), format.ScanOptions{})
		for {
			b, err := sc.Next()
			if err == io.EOF {
				return out, sc.Tail()
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(rune(b.BaseOffset))+string(b.Raw))
			if !b.Valid() {
				t.Fatalf("batch at %d: invalid CRC", b.Pos)
			}
		}
	}
	want, wantTail := scan(bytes.NewReader(log))
	p := &pieces{data: log, n: 256 << 10}
	got, gotTail := scan(p)
	if len(got) != len(want) || gotTail != wantTail {
		t.Fatalf("over a Viewer: %d batches, tail %+v; want %d, %+v", len(got), gotTail, len(want), wantTail)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("batch %d differs", i)
		}
	}
	if spans := len(log)/p.n + 2; p.copies == 0 || p.copies > spans {
		t.Errorf("%d copying reads for %d pieces: want only the entries across pieces", p.copies, len(log)/p.n+1)
	}
}

package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// indexSeeds are the real index files of the fixtures (partitions and
// the topic-0 of each UnifiedLog run).
func indexSeeds(f *testing.F, suffix string) {
	root := filepath.Join("..", "testdata", "segments", "kafka-written")
	matches, _ := filepath.Glob(filepath.Join(root, "*", "*"+suffix))
	deeper, _ := filepath.Glob(filepath.Join(root, "*", "*", "*"+suffix))
	for _, m := range append(matches, deeper...) {
		if data, err := os.ReadFile(m); err == nil {
			f.Add(data, int64(0), int64(3))
		}
	}
	f.Add([]byte{}, int64(0), int64(0))
	f.Add(make([]byte, 64), int64(5), int64(7))
}

// FuzzLookupOffsetIndexAt: the in-place lookup answers exactly what the
// in-memory OffsetIndex.Lookup answers, on any bytes.
func FuzzLookupOffsetIndexAt(f *testing.F) {
	indexSeeds(f, ".index")
	f.Fuzz(func(t *testing.T, data []byte, base, target int64) {
		base &= 1<<40 - 1
		idx := OffsetIndex{BaseOffset: base, Data: data}
		want := idx.Lookup(target)
		got, err := LookupOffsetIndexAt(bytes.NewReader(data), int64(len(data)), base, target)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("LookupOffsetIndexAt = %+v, Lookup = %+v", got, want)
		}
	})
}

// FuzzScanAbortedTxns: streaming a .txnindex yields AbortedTxns' entries
// and reports the partial tail.
func FuzzScanAbortedTxns(f *testing.F) {
	indexSeeds(f, ".txnindex")
	f.Fuzz(func(t *testing.T, data []byte, _, _ int64) {
		want := AbortedTxns(data)
		var got []AbortedTxn
		rest, err := ScanAbortedTxns(bytes.NewReader(data), func(i int, a AbortedTxn) bool {
			if i != len(got) {
				t.Fatalf("entry number %d, want %d", i, len(got))
			}
			got = append(got, a)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || rest != len(data)%AbortedTxnEntrySize {
			t.Fatalf("%d entries, rest %d; want %d, %d", len(got), rest, len(want), len(data)%AbortedTxnEntrySize)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("entry %d: %+v, want %+v", i, got[i], want[i])
			}
		}
	})
}

// FuzzScanOffsetIndex: streaming an .index yields its used entries.
func FuzzScanOffsetIndex(f *testing.F) {
	indexSeeds(f, ".index")
	f.Fuzz(func(t *testing.T, data []byte, base, _ int64) {
		base &= 1<<40 - 1
		idx := OffsetIndex{BaseOffset: base, Data: data}
		n := idx.Used()
		i := 0
		err := ScanOffsetIndex(bytes.NewReader(data), base, func(j int, e IndexEntry) bool {
			if j != i || e != idx.Entry(i) {
				t.Fatalf("entry %d: %+v, want %d: %+v", j, e, i, idx.Entry(i))
			}
			i++
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if i != n {
			t.Fatalf("%d entries, want %d", i, n)
		}
	})
}

// TestLookupOffsetIndexAtSparse: a 2 GiB index costs a few reads.
func TestLookupOffsetIndexAtSparse(t *testing.T) {
	r := &countingReader{size: 2 << 30}
	binary.BigEndian.PutUint32(r.first[:], 0)
	e, err := LookupOffsetIndexAt(r, r.size, 100, 150)
	if err != nil {
		t.Fatal(err)
	}
	if e.Offset != 100 || e.Pos != 0 {
		t.Errorf("lookup = %+v, want offset 100 position 0", e)
	}
	if r.reads > 64 {
		t.Errorf("%d reads for one lookup", r.reads)
	}
}

// countingReader is a zero-filled file of size bytes that counts reads.
type countingReader struct {
	size  int64
	first [8]byte
	reads int
}

func (c *countingReader) ReadAt(b []byte, off int64) (int, error) {
	c.reads++
	for i := range b {
		b[i] = 0
	}
	return len(b), nil
}

// failingReader fails every read past at with EIO.
type failingReader struct {
	data []byte
	at   int64
}

func (f *failingReader) ReadAt(b []byte, off int64) (int, error) {
	if off+int64(len(b)) > f.at {
		return 0, syscall.EIO
	}
	return copy(b, f.data[off:]), nil
}

// TestEndOfData: the scanner's three ends are told apart: io.EOF and a
// corrupt entry end the data, an I/O error does not.
func TestEndOfData(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "segments", "kafka-written", "v2-none", "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	drain := func(r io.ReaderAt, size int64) error {
		sc := NewScanner(r, size, ScanOptions{})
		for {
			if _, err := sc.Next(); err != nil {
				return err
			}
		}
	}
	if err := drain(bytes.NewReader(data), int64(len(data))); !EndOfData(err) || err != io.EOF {
		t.Errorf("clean end: %v", err)
	}
	junk := append(append([]byte{}, data...), bytes.Repeat([]byte{0xff}, 40)...)
	if err := drain(bytes.NewReader(junk), int64(len(junk))); !EndOfData(err) {
		t.Errorf("corrupt tail: %v, want the end of the data", err)
	}
	if err := drain(&failingReader{data: data, at: 100}, int64(len(data))); EndOfData(err) || !errors.Is(err, syscall.EIO) {
		t.Errorf("I/O error: %v, want EIO, not the end of the data", err)
	}
}

package format

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeadersOnlyScan: a headers-only scan sees the same entries, header
// fields and tail as a full scan, on every fixture.
func TestHeadersOnlyScan(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "testdata", "segments")
	n := 0
	filepath.WalkDir(root, func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() || !strings.HasSuffix(p, ".log") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		full := NewScanner(bytes.NewReader(data), int64(len(data)), ScanOptions{})
		hdr := NewScanner(bytes.NewReader(data), int64(len(data)), ScanOptions{HeadersOnly: true})
		for {
			a, errA := full.Next()
			b, errB := hdr.Next()
			if (errA == nil) != (errB == nil) || (errA == io.EOF) != (errB == io.EOF) {
				t.Fatalf("%s: full %v, headers-only %v", p, errA, errB)
			}
			if errA != nil {
				if full.Done() && full.Tail() != hdr.Tail() {
					t.Fatalf("%s: tails %+v vs %+v", p, full.Tail(), hdr.Tail())
				}
				if full.Done() {
					break
				}
				continue
			}
			if !sameHeader(a, b) {
				t.Fatalf("%s at %d: %+v vs %+v", p, a.Pos, a, b)
			}
			n++
		}
		return nil
	})
	if n < 100 {
		t.Fatalf("only %d batches compared", n)
	}
}

func sameHeader(a, b *Batch) bool {
	return a.Pos == b.Pos && a.Magic == b.Magic && a.BaseOffset == b.BaseOffset && a.BatchLength == b.BatchLength &&
		a.PartitionLeaderEpoch == b.PartitionLeaderEpoch && a.CRC == b.CRC && a.Attributes == b.Attributes &&
		a.LastOffsetDelta == b.LastOffsetDelta && a.BaseTimestamp == b.BaseTimestamp && a.MaxTimestamp == b.MaxTimestamp &&
		a.ProducerID == b.ProducerID && a.ProducerEpoch == b.ProducerEpoch && a.BaseSequence == b.BaseSequence &&
		a.RecordCount == b.RecordCount
}

func TestEntrySize(t *testing.T) {
	t.Parallel()
	entry := make([]byte, 40)
	entry[11] = 28 // size field: 28 bytes follow the 12-byte overhead
	cases := []struct {
		name string
		b    []byte
		want int
	}{
		{"whole", entry, 40},
		{"whole with more after", append(append([]byte(nil), entry...), 1, 2, 3), 40},
		{"cut", entry[:39], 0},
		{"header only", entry[:12], 0},
		{"short", entry[:5], 0},
		{"size below the minimum", append([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 13}, make([]byte, 20)...), 0},
		{"negative size", append([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xf0}, make([]byte, 20)...), 0},
	}
	for _, c := range cases {
		if got := EntrySize(c.b); got != c.want {
			t.Errorf("%s: EntrySize = %d, want %d", c.name, got, c.want)
		}
	}
}

package format

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzIndexEntries: any 8 and 12 bytes decode to entries that encode back
// to the same bytes, for any base offset.
func FuzzIndexEntries(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 5}, int64(0))
	f.Add(bytes.Repeat([]byte{0xff}, 12), int64(1<<40))
	// The first 16 bytes (two offset entries, or a time entry and a bit)
	// of every fixture index, with its segment's base offset.
	filepath.WalkDir(filepath.Join("..", "testdata", "segments"), func(p string, de os.DirEntry, err error) error {
		ext := filepath.Ext(p)
		if err != nil || de.IsDir() || (ext != ".index" && ext != ".timeindex") {
			return err
		}
		base, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(p), ext), 10, 64)
		if err != nil {
			return nil
		}
		fh, err := os.Open(p)
		if err != nil {
			return err
		}
		defer fh.Close()
		b := make([]byte, 16)
		if n, _ := io.ReadFull(fh, b); n >= TimeIndexEntrySize {
			f.Add(b[:n], base)
		}
		return nil
	})
	f.Fuzz(func(t *testing.T, b []byte, base int64) {
		if len(b) < TimeIndexEntrySize {
			return
		}
		ie := ParseIndexEntry(b, base)
		if got := AppendIndexEntry(nil, base, ie); !bytes.Equal(got, b[:OffsetIndexEntrySize]) {
			t.Fatalf("index entry %+v encodes to %x, want %x", ie, got, b[:OffsetIndexEntrySize])
		}
		te := ParseTimeEntry(b, base)
		if got := AppendTimeEntry(nil, base, te); !bytes.Equal(got, b[:TimeIndexEntrySize]) {
			t.Fatalf("time entry %+v encodes to %x, want %x", te, got, b[:TimeIndexEntrySize])
		}
	})
}

func TestIndexEntryCodec(t *testing.T) {
	cases := []struct {
		base int64
		ie   IndexEntry
		te   TimeEntry
	}{
		{0, IndexEntry{Offset: 0, Pos: 0}, TimeEntry{Timestamp: 0, Offset: 0}},
		{100, IndexEntry{Offset: 150, Pos: 4096}, TimeEntry{Timestamp: 1700000000000, Offset: 149}},
		{1 << 40, IndexEntry{Offset: 1<<40 + 1<<31 - 1, Pos: 1<<31 - 1}, TimeEntry{Timestamp: -1, Offset: 1 << 40}},
	}
	for _, c := range cases {
		b := AppendIndexEntry(nil, c.base, c.ie)
		if len(b) != OffsetIndexEntrySize || ParseIndexEntry(b, c.base) != c.ie {
			t.Errorf("index entry %+v: %x decodes to %+v", c.ie, b, ParseIndexEntry(b, c.base))
		}
		x := OffsetIndex{BaseOffset: c.base, Data: b}
		if x.Entry(0) != c.ie {
			t.Errorf("OffsetIndex.Entry: %+v", x.Entry(0))
		}
		b = AppendTimeEntry(nil, c.base, c.te)
		if len(b) != TimeIndexEntrySize || ParseTimeEntry(b, c.base) != c.te {
			t.Errorf("time entry %+v: %x decodes to %+v", c.te, b, ParseTimeEntry(b, c.base))
		}
	}
}

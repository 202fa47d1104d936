package partition

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLookups replaces a real segment's .index and .timeindex with
// arbitrary bytes (the first input byte says where to split them) and asks
// every kind of lookup: whatever the index files hold, the answer is an
// answer or an error, never a panic, and an answer names a record of the
// log.
func FuzzLookups(f *testing.F) {
	src := "testdata/kafka-listoffsets/unifiedlog-producer/topic-0"
	idx, err := os.ReadFile(filepath.Join(src, "00000000000000000016.index"))
	if err != nil {
		f.Fatal(err)
	}
	tidx, err := os.ReadFile(filepath.Join(src, "00000000000000000016.timeindex"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(append(append([]byte{byte(len(idx))}, idx...), tidx...))
	f.Add(append([]byte{0}, tidx...))
	f.Add(append(append([]byte{byte(len(idx))}, idx...), make([]byte, 36)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		n := min(int(data[0]), len(data)-1)
		dir := copyPartition(t, src)
		if err := os.WriteFile(filepath.Join(dir, "00000000000000000016.index"), data[1:1+n], 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "00000000000000000016.timeindex"), data[1+n:], 0o644); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []IndexMode{IndexesAsFound, IndexesRebuilt} {
			l, err := OpenLog(dir, LogOptions{Mode: mode})
			if err != nil {
				continue
			}
			for _, target := range []int64{EarliestTimestamp, LatestTimestamp, MaxTimestamp, 0, 1700001000017, 1700001000030, 1700001000049, 1 << 62} {
				r, err := l.FetchOffsetByTimestamp(target)
				if err == nil && r.Found && target != LatestTimestamp && (r.Offset < 0 || r.Offset >= 49) {
					t.Errorf("%v: target %d answered offset %d, outside the log", mode, target, r.Offset)
				}
				if _, err := l.ListOffsets(target, 48); err != nil && mode == IndexesRebuilt {
					t.Errorf("rebuilt indexes: %v", err)
				}
			}
			s := l.segs[1]
			idx, err := l.offsetIndex(s)
			if err != nil {
				continue
			}
			f, err := os.Open(s.Log)
			if err != nil {
				t.Fatal(err)
			}
			for off := int64(14); off < 34; off += 3 {
				if bp, ok, err := TranslateOffset(f, s.Size, idx, off, 0); err == nil && ok && (bp.LastOffset < off || bp.Pos < 0 || bp.Pos >= s.Size) {
					t.Errorf("translate %d: %+v", off, bp)
				}
			}
			f.Close()
		}
	})
}

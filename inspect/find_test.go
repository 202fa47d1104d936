package inspect

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
	"github.com/klog-dev/klog/verify"
)

// bruteRecord is one record found by reading a partition from the start,
// independently of the indexes: the oracle for Find.
type bruteRecord struct {
	log       string
	batchPos  int64
	batchLast int64
	offset    int64
	timestamp int64
}

func bruteRecords(t *testing.T, d *partition.Dir) []bruteRecord {
	t.Helper()
	var out []bruteRecord
	var rr format.RecordReader
	var rec format.Record
	for _, s := range d.Segments {
		data, err := os.ReadFile(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		sc := format.NewScanner(bytes.NewReader(data), int64(len(data)), format.ScanOptions{})
		for {
			b, err := sc.Next()
			if err != nil {
				break
			}
			if err := rr.Reset(b); err != nil {
				t.Fatalf("%s: %v", s.Log, err)
			}
			for rr.Next(&rec) == nil {
				out = append(out, bruteRecord{s.Log, b.Pos, b.LastOffset(), rec.Offset, rec.Timestamp})
			}
		}
	}
	return out
}

func openDir(t *testing.T, path string) *partition.Dir {
	t.Helper()
	d, err := partition.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestFindMatchesBruteForce asks Find for every offset (and every record
// timestamp) of real partitions and compares with a scan from the start.
func TestFindMatchesBruteForce(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"unifiedlog-producer/topic-0", "unifiedlog-v0/topic-0", "unifiedlog-v1/topic-0",
		"v2-baseoffset-sparseindex", "v2-active-segment-unclosed", "v2-transactions", "v1-gzip"} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			d := openDir(t, viewsFixture(t, dir))
			recs := bruteRecords(t, d)
			first, last := recs[0].offset, recs[len(recs)-1].offset
			for n := first; n <= last; n++ {
				res, err := Find(d, FindQuery{Offset: n}, FindOptions{})
				if err != nil {
					t.Fatalf("offset %d: %v", n, err)
				}
				i := 0
				for recs[i].offset < n {
					i++
				}
				want := recs[i]
				got := res.Record
				if !res.Found || got == nil || got.Offset != want.offset || res.Batch.Position != want.batchPos ||
					res.Lookups[len(res.Lookups)-1].Log != want.log || res.Exact != (want.offset == n) {
					t.Fatalf("offset %d: got %+v batch %+v, want %+v", n, got, res.Batch, want)
				}
				if len(res.Problems) != 0 {
					t.Errorf("offset %d: problems on a healthy partition: %+v", n, res.Problems)
				}
			}
			// Timestamps: the first record in log order with a timestamp
			// >= T, which is ListOffsets' answer when timestamps grow
			// with offsets, as in these fixtures.
			for _, r := range recs {
				for _, ts := range []int64{r.timestamp, r.timestamp + 1} {
					if ts < 0 {
						continue
					}
					res, err := Find(d, FindQuery{Timestamp: ts, ByTimestamp: true}, FindOptions{})
					if err != nil {
						t.Fatalf("timestamp %d: %v", ts, err)
					}
					var want *bruteRecord
					for i := range recs {
						if recs[i].timestamp >= ts {
							want = &recs[i]
							break
						}
					}
					if dir == "v2-active-segment-unclosed" {
						// Its preallocated .timeindex, as found, ends
						// in zero entries: the segment's largest
						// timestamp is 0, and Kafka 4.3.1 opened
						// cleanly answers nothing (its
						// kafka-listoffsets.json, clean_open).
						want = nil
						if lk := res.Lookups; len(lk) != 1 || !lk[0].Skipped || *lk[0].LargestTimestamp != 0 {
							t.Errorf("timestamp %d: lookups %+v, want the segment skipped at largest timestamp 0", ts, lk)
						}
					}
					switch {
					case want == nil && res.Found:
						t.Errorf("timestamp %d: found %+v, want none", ts, res.Record)
					case want != nil && (!res.Found || res.Record.Offset != want.offset):
						t.Errorf("timestamp %d: got %+v, want offset %d", ts, res.Record, want.offset)
					}
					if len(res.Problems) != 0 {
						t.Errorf("timestamp %d: problems on a healthy partition: %+v", ts, res.Problems)
					}
				}
			}
		})
	}
}

// TestFindSteps checks each step against the oracle dumps of the fixtures
// (the .index.dump.txt and .log.dump.txt Kafka printed).
func TestFindSteps(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		dir       string
		q         FindQuery
		lookups   int   // segments searched
		base      int64 // base offset of the segment holding the answer
		slot      int   // .index slot picked, -1 for position 0
		entryOff  int64
		entryPos  int64
		timeSlot  int // .timeindex slot, timestamp queries
		batchPos  int64
		recOffset int64
		exact     bool
	}{
		{"before the first entry", "v2-baseoffset-sparseindex", FindQuery{Offset: 1234567}, 1, 1234567, -1, 1234567, 0, 0, 0, 1234567, true},
		{"sparse index", "v2-baseoffset-sparseindex", FindQuery{Offset: 1234600}, 1, 1234567, 0, 1234587, 1119, 0, 2106, 1234600, true},
		{"exact entry", "v2-baseoffset-sparseindex", FindQuery{Offset: 1234605}, 1, 1234567, 1, 1234605, 2246, 0, 2246, 1234605, true},
		{"in the offset gap", "v2-baseoffset-sparseindex", FindQuery{Offset: 1234690}, 1, 1234567, 5, 1234677, 6822, 0, 7584, 1234697, false},
		{"second segment", "unifiedlog-producer/topic-0", FindQuery{Offset: 20}, 1, 16, 0, 20, 230, 0, 230, 20, true},
		{"last offset", "unifiedlog-producer/topic-0", FindQuery{Offset: 48}, 1, 32, 3, 47, 1017, 0, 1095, 48, true},
		{"legacy wrapper", "unifiedlog-v0/topic-0", FindQuery{Offset: 12}, 1, 12, -1, 12, 0, 0, 0, 12, true},
		{"timestamp in second segment", "unifiedlog-producer/topic-0", FindQuery{Timestamp: 1700001000030, ByTimestamp: true}, 2, 16, 2, 26, 694, 2, 694, 26, false},
		{"timestamp before all", "unifiedlog-producer/topic-0", FindQuery{Timestamp: 0, ByTimestamp: true}, 1, 0, -1, 0, 0, -1, 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := Find(openDir(t, viewsFixture(t, c.dir)), c.q, FindOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Found || len(res.Lookups) != c.lookups {
				t.Fatalf("found %v after %d lookups, want %d: %+v", res.Found, len(res.Lookups), c.lookups, res.Lookups)
			}
			lk := res.Lookups[len(res.Lookups)-1]
			if lk.BaseOffset != c.base || lk.IndexEntry.Slot != c.slot || lk.IndexEntry.Offset != c.entryOff || lk.IndexEntry.Position != c.entryPos || !lk.IndexEntry.OK {
				t.Errorf("lookup %+v, want base %d slot %d (offset %d, position %d)", lk, c.base, c.slot, c.entryOff, c.entryPos)
			}
			if c.q.ByTimestamp && lk.TimeIndexEntry.Slot != c.timeSlot {
				t.Errorf("time index slot %d, want %d", lk.TimeIndexEntry.Slot, c.timeSlot)
			}
			if lk.StartPosition != c.entryPos || lk.Rescanned {
				t.Errorf("scan started at %d (rescanned %v), want %d", lk.StartPosition, lk.Rescanned, c.entryPos)
			}
			if res.Batch.Position != c.batchPos || res.Record.Offset != c.recOffset || (!c.q.ByTimestamp && res.Exact != c.exact) {
				t.Errorf("batch at %d, record %d (exact %v), want %d, %d (%v)", res.Batch.Position, res.Record.Offset, res.Exact, c.batchPos, c.recOffset, c.exact)
			}
			var buf bytes.Buffer
			if err := WriteFindTable(&buf, res, 16); err != nil {
				t.Fatal(err)
			}
			buf.Reset()
			if err := WriteFindJSON(&buf, res); err != nil {
				t.Fatal(err)
			}
			var back FindResult
			if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back.Record.Offset != c.recOffset || strings.Count(buf.String(), "\n") != 1 {
				t.Errorf("JSON %q does not read back: %v", buf.String(), err)
			}
		})
	}
}

func TestFindOutOfRange(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		dir         string
		offset      int64
		start, leo  int64
		wantLookups bool
	}{
		{"below the first segment", "v2-baseoffset-sparseindex", 5, 1234567, -1, false},
		{"at the log end", "unifiedlog-producer/topic-0", 49, 0, 49, true},
		{"far past the end", "unifiedlog-v1/topic-0", 1 << 40, 0, 24, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Find(openDir(t, viewsFixture(t, c.dir)), FindQuery{Offset: c.offset}, FindOptions{})
			if !errors.Is(err, ErrOffsetOutOfRange) {
				t.Fatalf("err = %v, want ErrOffsetOutOfRange", err)
			}
			var oe *OffsetOutOfRangeError
			if !errors.As(err, &oe) || oe.Offset != c.offset || oe.LogStartOffset != c.start || oe.LogEndOffset != c.leo {
				t.Errorf("err = %+v, want start %d end %d", oe, c.start, c.leo)
			}
		})
	}
	// A timestamp past every record is an answer (none), not an error.
	res, err := Find(openDir(t, viewsFixture(t, "unifiedlog-producer/topic-0")), FindQuery{Timestamp: 1 << 50, ByTimestamp: true}, FindOptions{})
	if err != nil || res.Found || len(res.Problems) != 0 {
		t.Errorf("timestamp past the end: %+v, %v", res, err)
	}
}

// TestFindBadIndex edits one .index entry of a copy and checks that the
// lookup that picks it reports the entry and still finds the record.
func TestFindBadIndex(t *testing.T) {
	t.Parallel()
	// 00000000000000000016.index: (20, 230) (23, 490) (26, 694) (30, 972).
	cases := []struct {
		name   string
		slot   int
		relOff int32 // new relative offset, or -1 to keep it
		pos    int32 // new position, or -1 to keep it
		target int64
	}{
		{"position of another batch", 1, -1, 230, 24},
		{"position inside a batch", 1, -1, 231, 24},
		{"position past the log", 1, -1, 1 << 20, 24},
		{"offset of another batch", 2, 9, -1, 25},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := viewsCopyDir(t, viewsFixture(t, "unifiedlog-producer/topic-0"))
			viewsEditIndex(t, filepath.Join(dir, "00000000000000000016.index"), c.slot, c.relOff, c.pos)
			res, err := Find(openDir(t, dir), FindQuery{Offset: c.target}, FindOptions{})
			if err != nil {
				t.Fatal(err)
			}
			lk := res.Lookups[0]
			if lk.IndexEntry.Slot != c.slot || lk.IndexEntry.OK || !lk.Rescanned {
				t.Errorf("lookup %+v: want slot %d reported bad and a rescan", lk, c.slot)
			}
			if len(res.Problems) != 1 || res.Problems[0].Kind != verify.KindIndexMismatch || res.Problems[0].Position != int64(c.slot*format.OffsetIndexEntrySize) {
				t.Errorf("problems %+v, want one index-mismatch at entry %d", res.Problems, c.slot)
			}
			if !res.Found || res.Record.Offset != c.target || !res.Exact {
				t.Errorf("record %+v, want offset %d despite the bad entry", res.Record, c.target)
			}
		})
	}
}

// TestFindAcrossSegmentGap: an offset between segments is answered from
// the next segment, as the broker's read moves on.
func TestFindAcrossSegmentGap(t *testing.T) {
	t.Parallel()
	dir := viewsCopyDir(t, viewsFixture(t, "unifiedlog-producer/topic-0"))
	for _, suffix := range []string{".log", ".index", ".timeindex", ".txnindex", ".snapshot"} {
		if err := os.Remove(filepath.Join(dir, "00000000000000000016"+suffix)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Find(openDir(t, dir), FindQuery{Offset: 20}, FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Lookups) != 2 || res.Lookups[0].Found || res.Lookups[0].BaseOffset != 0 || !res.Lookups[1].Found || res.Lookups[1].BaseOffset != 32 {
		t.Errorf("lookups %+v, want segment 0 (nothing) then segment 32", res.Lookups)
	}
	if !res.Found || res.Exact || res.Record.Offset != 32 || res.Batch.Position != 0 {
		t.Errorf("record %+v in batch %+v, want offset 32 at position 0", res.Record, res.Batch)
	}
	// By timestamp the first segment is skipped on its time index alone.
	res, err = Find(openDir(t, dir), FindQuery{Timestamp: 1700001000020, ByTimestamp: true}, FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Lookups) != 2 || !res.Lookups[0].Skipped || res.Lookups[0].BytesRead != 0 || !res.Found || res.Record.Offset != 32 {
		t.Errorf("lookups %+v, record %+v", res.Lookups, res.Record)
	}
}

// countingOpener serves files from memory and counts the bytes read from
// each.
type countingOpener struct {
	files map[string][]byte
	read  map[string]int64
}

type countedFile struct {
	r    *bytes.Reader
	name string
	o    *countingOpener
}

func (f *countedFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.r.ReadAt(p, off)
	f.o.read[f.name] += int64(n)
	return n, err
}

func (f *countedFile) Close() error { return nil }

func (o *countingOpener) open(path string) (FindFile, int64, error) {
	b, ok := o.files[path]
	if !ok {
		return nil, 0, os.ErrNotExist
	}
	return &countedFile{r: bytes.NewReader(b), name: path, o: o}, int64(len(b)), nil
}

// bigSegment builds a segment of at least size bytes of uncompressed v2
// batches (1..16 records of 40..140-byte values, one ms apart) with the
// .index and .timeindex a broker writes with index.interval.bytes=4096
// (spec §2.5). It returns the log, both indexes, and the largest batch.
func bigSegment(t testing.TB, size int) (log, index, timeIndex []byte, maxBatch int64, lastOffset int64) {
	t.Helper()
	const interval = 4096
	var c format.Compressor
	log = make([]byte, 0, size+64<<10)
	var recs []format.Record
	offset, ts := int64(0), int64(1_700_000_000_000)
	value := bytes.Repeat([]byte("0123456789abcdef"), 10)
	since := 0
	maxTS, maxTSOffset := int64(-1), int64(-1)
	lastTimeIndexTS := int64(-1)
	for i := 0; len(log) < size; i++ {
		n := 1 + i%16
		recs = recs[:0]
		for j := 0; j < n; j++ {
			recs = append(recs, format.Record{Offset: offset + int64(j), Timestamp: ts, Key: []byte("k"), Value: value[:40+(i*7+j*13)%100]})
			ts++
		}
		h := &format.Batch{Magic: format.MagicV2, BaseOffset: offset, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: 0}
		format.PrepareBatch(h, recs)
		pos := len(log)
		var err error
		log, err = c.AppendBatch(log, h, recs)
		if err != nil {
			t.Fatal(err)
		}
		bsize := len(log) - pos
		maxBatch = max(maxBatch, int64(bsize))
		last := offset + int64(n) - 1
		if h.MaxTimestamp > maxTS {
			maxTS, maxTSOffset = h.MaxTimestamp, last
		}
		if since > interval {
			index = binary.BigEndian.AppendUint32(index, uint32(last))
			index = binary.BigEndian.AppendUint32(index, uint32(pos))
			if maxTS > lastTimeIndexTS {
				timeIndex = binary.BigEndian.AppendUint64(timeIndex, uint64(maxTS))
				timeIndex = binary.BigEndian.AppendUint32(timeIndex, uint32(maxTSOffset))
				lastTimeIndexTS = maxTS
			}
			since = 0
		}
		since += bsize
		offset = last + 1
	}
	return log, index, timeIndex, maxBatch, offset - 1
}

// TestFindReadsOnlyWhatItNeeds: finding an offset near the end of a 64 MiB
// segment reads the index and about one index interval of the log, not the
// segment.
func TestFindReadsOnlyWhatItNeeds(t *testing.T) {
	t.Parallel()
	size := 64 << 20
	if testing.Short() {
		size = 8 << 20
	}
	log, index, timeIndex, maxBatch, last := bigSegment(t, size)
	o := &countingOpener{files: map[string][]byte{"p/0.log": log, "p/0.index": index, "p/0.timeindex": timeIndex}, read: map[string]int64{}}
	d := &partition.Dir{Path: "p", Segments: []partition.Segment{{BaseOffset: 0, Log: "p/0.log", Index: "p/0.index", TimeIndex: "p/0.timeindex"}}}
	// The gap between indexed positions is more than 4096 bytes plus at
	// most one batch; the scan reads from one entry to the batch holding
	// the target, plus the 17-byte header peek of each batch.
	limit := 4096 + 2*maxBatch + 17*64
	for _, q := range []FindQuery{{Offset: last - 3}, {Timestamp: 1_700_000_000_000 + last - 3, ByTimestamp: true}} {
		clear(o.read)
		res, err := Find(d, q, FindOptions{Open: o.open})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Found || res.Record.Offset != last-3 || len(res.Problems) != 0 {
			t.Fatalf("%+v: found %+v, problems %+v", q, res.Record, res.Problems)
		}
		logRead := o.read["p/0.log"]
		t.Logf("query %+v: read %d of %d log bytes (%d batches), %d index bytes (%d entries), %d time index bytes; largest batch %d bytes",
			q, logRead, len(log), res.Lookups[0].BatchesScanned, o.read["p/0.index"], len(index)/8, o.read["p/0.timeindex"], maxBatch)
		if logRead > limit || logRead < res.Batch.SizeBytes {
			t.Errorf("read %d log bytes, want between one batch (%d) and %d", logRead, res.Batch.SizeBytes, limit)
		}
		if logRead != res.LogBytesRead {
			t.Errorf("Find reports %d log bytes read, the reader counted %d", res.LogBytesRead, logRead)
		}
		if o.read["p/0.index"] != int64(len(index)) {
			t.Errorf("read %d index bytes, want the whole index (%d)", o.read["p/0.index"], len(index))
		}
	}
}

// viewsEditIndex rewrites entry slot of an .index file (relOff/pos < 0:
// unchanged).
func viewsEditIndex(t *testing.T, path string, slot int, relOff, pos int32) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e := data[slot*format.OffsetIndexEntrySize:]
	if relOff >= 0 {
		binary.BigEndian.PutUint32(e, uint32(relOff))
	}
	if pos >= 0 {
		binary.BigEndian.PutUint32(e[4:], uint32(pos))
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// viewsFixture is the path of a kafka-written fixture directory.
func viewsFixture(t *testing.T, dir string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("../testdata/segments/kafka-written", dir))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// viewsCopyDir copies the segment files of a fixture directory (not the
// oracle outputs) into a writable temporary directory named like it.
func viewsCopyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.IsDir() || strings.HasSuffix(de.Name(), ".txt") {
			continue
		}
		in, err := os.Open(filepath.Join(src, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestFindShowsModTimeFallback: a segment whose time index has no entry is
// aged by its .log's modification time, and find says so, both when that
// time passes the segment over and when it makes the segment the one
// searched.
func TestFindShowsModTimeFallback(t *testing.T) {
	t.Parallel()
	dir := viewsCopyDir(t, viewsFixture(t, "unifiedlog-producer/topic-0"))
	if err := os.Truncate(filepath.Join(dir, "00000000000000000000.timeindex"), 0); err != nil {
		t.Fatal(err)
	}
	seg0 := filepath.Join(dir, "00000000000000000000.log")
	const target = 1700001000010 // offset 8 (1700001000012) is in segment 0
	cases := []struct {
		mtime   int64
		skipped bool
		offset  int64
	}{
		{target - 1, true, 16},   // aged below T: segment 16 answers
		{target + 500, false, 8}, // aged at or above T: segment 0 answers
	}
	for _, c := range cases {
		at := time.UnixMilli(c.mtime)
		if err := os.Chtimes(seg0, at, at); err != nil {
			t.Fatal(err)
		}
		res, err := Find(openDir(t, dir), FindQuery{Timestamp: target, ByTimestamp: true}, FindOptions{})
		if err != nil {
			t.Fatal(err)
		}
		lk := res.Lookups[0]
		if !lk.ByModTime || lk.Skipped != c.skipped || *lk.LargestTimestamp != c.mtime || *lk.MaxTimestamp != -1 {
			t.Errorf("mtime %d: first lookup %+v, want byModTime, skipped %v", c.mtime, lk, c.skipped)
		}
		if !res.Found || res.Record.Offset != c.offset {
			t.Errorf("mtime %d: record %+v, want offset %d", c.mtime, res.Record, c.offset)
		}
		var b strings.Builder
		if err := WriteFindTable(&b, res, 0); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "the .log's modification time (the time index has no entry)") {
			t.Errorf("mtime %d: the table does not say the modification time decided:\n%s", c.mtime, b.String())
		}
	}
}

// TestFindContext: a find that has to scan stops when its context ends.
func TestFindContext(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "t-0")
	a, err := produce.Open(dir, produce.Options{IndexIntervalBytes: 1 << 30}) // no index entries: scan from 0
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		if _, err := a.Append(&produce.Batch{Records: []format.Record{{Value: []byte("v")}}}); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	d, err := partition.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := FindContext(context.Background(), d, FindQuery{Offset: 999}, FindOptions{}); err != nil || !res.Found {
		t.Fatalf("find: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := FindContext(ctx, d, FindQuery{Offset: 999}, FindOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v, want context.Canceled", err)
	}
}

// TestFindDataFindings: a batch find reads whose CRC does not match is a
// finding (the answer is still given); a clean read has none.
func TestFindDataFindings(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		dir    string
		target int64
		kinds  []verify.Kind
	}{
		{"bad CRC in the answer's batch", "derived-corrupt/bad-crc-none", 0, []verify.Kind{verify.KindCRCMismatch}},
		{"clean", "v2-none", 0, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := Find(openDir(t, viewsFixture(t, c.dir)), FindQuery{Offset: c.target}, FindOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []verify.Kind
			for _, p := range res.Problems {
				kinds = append(kinds, p.Kind)
				if p.Position != 0 || p.Offset != 0 || !strings.HasSuffix(p.Path, ".log") {
					t.Errorf("problem %+v, want the .log at position 0, offset 0", p)
				}
			}
			if !slices.Equal(kinds, c.kinds) {
				t.Errorf("problems %+v, want kinds %v", res.Problems, c.kinds)
			}
			if !res.Found || res.Record.Offset != c.target {
				t.Errorf("record %+v, want offset %d", res.Record, c.target)
			}
		})
	}
}

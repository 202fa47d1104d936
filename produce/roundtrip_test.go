package produce_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// now is the fixed broker clock of these tests.
const nowMs = 1_750_000_000_000

func fixedNow() time.Time { return time.UnixMilli(nowMs) }

var codecs = []format.Compression{format.CompressionNone, format.CompressionGzip, format.CompressionSnappy,
	format.CompressionLZ4, format.CompressionZstd}

// sampleRecords returns n records covering what a record can hold: null and
// empty keys and values, every byte value, large compressible and
// incompressible values (past snappy's 32 KiB and lz4's 64 KiB blocks),
// headers with null, empty and binary values, and timestamps out of order.
func sampleRecords(n int, seed uint64) []format.Record {
	rng := rand.New(rand.NewPCG(seed, 99))
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	recs := make([]format.Record, n)
	for i := range recs {
		r := &recs[i]
		r.Timestamp = 1_700_000_000_000 + int64(i)*7 - int64(rng.IntN(20)) // not monotonic
		switch i % 8 {
		case 0:
			r.Key, r.Value = nil, nil
		case 1:
			r.Key, r.Value = []byte{}, []byte{}
		case 2:
			r.Key, r.Value = all, []byte(fmt.Sprintf("value %d", i))
		case 3:
			r.Key, r.Value = []byte(fmt.Sprintf("key-%d", i)), nil
		case 4:
			r.Key = nil
			r.Value = bytes.Repeat([]byte("compressible "), 100+rng.IntN(300))
			if i%24 == 4 {
				r.Value = bytes.Repeat([]byte("compressible "), 3000+rng.IntN(6000)) // 39..117 KB
			}
		case 5:
			r.Key = []byte{0, 0xff, 0}
			r.Value = make([]byte, 1+rng.IntN(2000))
			for j := range r.Value {
				r.Value[j] = byte(rng.Uint32())
			}
		case 6:
			r.Key, r.Value = []byte("k"), all
		case 7:
			r.Key, r.Value = []byte("\x00"), []byte("\xff")
		}
		switch i % 5 {
		case 1:
			r.Headers = []format.Header{{Key: []byte("h"), Value: nil}}
		case 2:
			r.Headers = []format.Header{{Key: []byte(""), Value: []byte{}}, {Key: []byte("bin"), Value: all[:17]},
				{Key: []byte("h"), Value: []byte("dup keys keep order")}, {Key: []byte("h"), Value: nil}}
		case 3:
			r.Headers = []format.Header{{Key: []byte("trace-id"), Value: []byte(fmt.Sprint(i))}}
		}
	}
	return recs
}

// want is what a reader must return for recs appended at base.
func want(recs []format.Record, base int64, logAppendTime bool) []rec {
	out := make([]rec, len(recs))
	for i, r := range recs {
		ts := r.Timestamp
		if logAppendTime {
			ts = nowMs
		}
		out[i] = rec{Offset: base + int64(i), Timestamp: ts, Key: r.Key, Value: r.Value, Headers: r.Headers}
	}
	return out
}

// wantKafkaGo is want as kafka-go reports it: it ignores LogAppendTime.
func wantKafkaGo(recs []format.Record, base int64) []rec { return want(recs, base, false) }

// batchSizes splits n records into batches of 1, 2, 3, ... records.
func batchSizes(n int) []int {
	var out []int
	for k := 1; n > 0; k++ {
		m := min(k, n)
		out = append(out, m)
		n -= m
	}
	return out
}

// appended is what one Append did, for the index expectations.
type appended struct {
	res   produce.Result
	maxTS int64
}

// appendAll appends recs in batches and checks each Result.
func appendAll(t *testing.T, a *produce.Appender, recs []format.Record, b produce.Batch) []appended {
	t.Helper()
	var out []appended
	i := 0
	for _, n := range batchSizes(len(recs)) {
		b.Records = recs[i : i+n]
		leo := a.LogEndOffset()
		res, err := a.Append(&b)
		if err != nil {
			t.Fatalf("append of records %d..%d: %v", i, i+n-1, err)
		}
		if res.BaseOffset != leo || res.LastOffset != leo+int64(n)-1 || a.LogEndOffset() != res.LastOffset+1 {
			t.Fatalf("append at log end %d of %d records: result %d..%d, log end now %d", leo, n, res.BaseOffset, res.LastOffset, a.LogEndOffset())
		}
		maxTS := int64(-1)
		for _, r := range b.Records {
			maxTS = max(maxTS, r.Timestamp)
		}
		if b.TimestampType == format.LogAppendTime {
			maxTS = nowMs
			if res.LogAppendTime != nowMs {
				t.Errorf("LogAppendTime batch: result logAppendTime %d, want %d", res.LogAppendTime, nowMs)
			}
		} else if res.LogAppendTime != -1 {
			t.Errorf("CreateTime batch: result logAppendTime %d, want -1", res.LogAppendTime)
		}
		out = append(out, appended{res, maxTS})
		i += n
	}
	return out
}

// expectIndexes computes the .index and .timeindex contents of every
// segment by the broker's rule (LogSegment.append): after a batch, if more
// than interval bytes were appended since the last entry, an offset entry
// (last offset, position of the batch) and a time entry (max timestamp so
// far, offset of its batch) are added, the time entry only if its timestamp
// is above the last one; a segment that is rolled, and the active segment
// when the appender closes, gets a final time entry (LogSegment.close).
// startBytes is the bytes-since-last-entry the first segment starts with.
func expectIndexes(apps []appended, interval int64) map[string][2][]byte {
	out := map[string][2][]byte{}
	type st struct {
		base, since, maxTS, maxOff, lastTS int64
		idx, tidx                          []byte
	}
	var cur *st
	var seg string
	timeEntry := func(s *st, ts, off int64) {
		if ts > s.lastTS {
			s.tidx = binary.BigEndian.AppendUint64(s.tidx, uint64(ts))
			s.tidx = binary.BigEndian.AppendUint32(s.tidx, uint32(off-s.base))
			s.lastTS = ts
		}
	}
	flush := func() {
		if cur == nil {
			return
		}
		if cur.maxTS >= 0 {
			timeEntry(cur, cur.maxTS, cur.maxOff)
		}
		out[seg] = [2][]byte{cur.idx, cur.tidx}
	}
	for _, a := range apps {
		if a.res.Segment != seg {
			flush()
			seg = a.res.Segment
			base, _, _ := partition.ParseFileName(filepath.Base(seg))
			cur = &st{base: base, maxTS: -1, lastTS: -1}
		}
		if a.maxTS > cur.maxTS {
			cur.maxTS, cur.maxOff = a.maxTS, a.res.LastOffset
		}
		if cur.since > interval {
			cur.idx = binary.BigEndian.AppendUint32(cur.idx, uint32(a.res.LastOffset-cur.base))
			cur.idx = binary.BigEndian.AppendUint32(cur.idx, uint32(a.res.Position))
			timeEntry(cur, cur.maxTS, cur.maxOff)
			cur.since = 0
		}
		cur.since += a.res.Size
	}
	flush()
	return out
}

func checkIndexes(t *testing.T, apps []appended, interval int64) {
	t.Helper()
	exp := expectIndexes(apps, interval)
	entries := 0
	for seg, e := range exp {
		base := seg[:len(seg)-len(partition.LogSuffix)]
		idx, err := os.ReadFile(base + partition.IndexSuffix)
		if err != nil {
			t.Fatal(err)
		}
		tidx, err := os.ReadFile(base + partition.TimeIndexSuffix)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(idx, e[0]) {
			t.Errorf("%s.index:\n got  %x\n want %x", base, idx, e[0])
		}
		if !bytes.Equal(tidx, e[1]) {
			t.Errorf("%s.timeindex:\n got  %x\n want %x", base, tidx, e[1])
		}
		entries += len(e[0]) / format.OffsetIndexEntrySize
	}
	t.Logf("%d segments, %d offset index entries", len(exp), entries)
	if entries == 0 {
		t.Errorf("no index entries at all: the test does not exercise index.interval.bytes")
	}
}

// checkSegments checks that the segments are named by the base offsets the
// results say, that every segment but the first has a producer snapshot
// named like it (taken at the roll), and that rolls happened only when the
// next batch would not fit.
func checkSegments(t *testing.T, dir string, apps []appended, segmentBytes int64) {
	t.Helper()
	d, err := partition.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	snaps := map[int64]bool{}
	for _, s := range d.Snapshots {
		snaps[s.Offset] = true
		data, err := os.ReadFile(s.Path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := format.ParseProducerSnapshot(data); err != nil {
			t.Errorf("%s: %v", s.Path, err)
		}
	}
	size := map[string]int64{}
	prev := ""
	for i, a := range apps {
		seg := a.res.Segment
		base, suffix, ok := partition.ParseFileName(filepath.Base(seg))
		if !ok || suffix != partition.LogSuffix || filepath.Dir(seg) != dir {
			t.Fatalf("result segment %q is not a segment of %s", seg, dir)
		}
		if seg != prev {
			if i > 0 {
				if base != a.res.BaseOffset {
					t.Errorf("rolled to %s, but its first batch starts at offset %d", seg, a.res.BaseOffset)
				}
				if size[prev]+a.res.Size <= segmentBytes {
					t.Errorf("rolled to %s although the batch (%d bytes) fit in %s (%d bytes of %d)", seg, a.res.Size, prev, size[prev], segmentBytes)
				}
				if !snaps[base] {
					t.Errorf("no producer snapshot %s taken at the roll to %s", partition.FileName(base, partition.SnapshotSuffix), seg)
				}
			}
			prev = seg
		}
		if a.res.Position != size[seg] {
			t.Errorf("batch at offset %d: position %d, want %d", a.res.BaseOffset, a.res.Position, size[seg])
		}
		size[seg] += a.res.Size
	}
	for seg, n := range size {
		st, err := os.Stat(seg)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() != n {
			t.Errorf("%s is %d bytes, the results add up to %d", seg, st.Size(), n)
		}
	}
}

// TestRoundTrip appends the same records with every codec and timestamp
// type and reads them back with klog, franz-go and kafka-go; verify finds
// nothing, offsets are contiguous from 0, the indexes hold exactly the
// broker's entries, and a small segment.bytes rolls segments named by their
// base offsets, each with a producer snapshot.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	recs := sampleRecords(60, 1)
	for _, codec := range codecs {
		for _, tt := range []format.TimestampType{format.CreateTime, format.LogAppendTime} {
			t.Run(fmt.Sprintf("codec=%v/ts=%v", codec, tt), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				const interval, segBytes = 1000, 8 << 10
				a, err := produce.Open(dir, produce.Options{IndexIntervalBytes: interval, SegmentBytes: segBytes, Now: fixedNow})
				if err != nil {
					t.Fatal(err)
				}
				apps := appendAll(t, a, recs, produce.Batch{Compression: codec, TimestampType: tt})
				leo := a.LogEndOffset()
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
				if leo != int64(len(recs)) {
					t.Fatalf("log end offset %d, want %d", leo, len(recs))
				}
				batches, got := readKlog(t, dir)
				for _, b := range batches {
					if b.Compression() != codec || b.TimestampType() != tt || b.ProducerID != -1 || b.BaseSequence != -1 {
						t.Errorf("batch at offset %d: codec %v, %v, producer %d, sequence %d", b.BaseOffset, b.Compression(), b.TimestampType(), b.ProducerID, b.BaseSequence)
					}
				}
				compareRecs(t, "klog", got, want(recs, 0, tt == format.LogAppendTime), true)
				compareRecs(t, "franz-go", readFranz(t, dir, leo), want(recs, 0, tt == format.LogAppendTime), true)
				compareRecs(t, "kafka-go", readKafkaGo(t, batches), wantKafkaGo(recs, 0), true)
				if len(segmentFiles(t, dir)) < 2 {
					t.Errorf("only one segment: segment.bytes %d did not roll", segBytes)
				}
				checkSegments(t, dir, apps, segBytes)
				checkIndexes(t, apps, interval)
				verifyClean(t, dir)
			})
		}
	}
}

// copyFixture copies the segment files of a testdata partition.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "testdata", "segments", "kafka-written", name)
	dir := t.TempDir()
	d, err := partition.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range d.Segments {
		for _, f := range []string{s.Log, s.Index, s.TimeIndex, s.TxnIndex} {
			if f == "" {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// TestAppendToKafkaSegment appends to a copy of a segment a Kafka broker
// wrote: the log end offset comes from its last valid batch, the broker's
// bytes are left as they were, the new batches continue the offsets, all
// three readers read old and new records, and verify finds nothing
// (including in the broker's index, which the appends extend).
func TestAppendToKafkaSegment(t *testing.T) {
	t.Parallel()
	dir := copyFixture(t, "v2-none")
	logPath := filepath.Join(dir, partition.FileName(0, partition.LogSuffix))
	before, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	batches0, old := readKlog(t, dir)
	fixtureLEO := batches0[len(batches0)-1].NextOffset()
	a, err := produce.Open(dir, produce.Options{IndexIntervalBytes: 512, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if a.LogEndOffset() != fixtureLEO || fixtureLEO != 59 {
		t.Fatalf("log end offset %d, the fixture's last batch ends at %d (59)", a.LogEndOffset(), fixtureLEO)
	}
	recs := sampleRecords(30, 2)
	for i := range recs {
		if i%8 == 4 { // keep this segment small
			recs[i].Value = []byte("v")
		}
	}
	appendAll(t, a, recs[:15], produce.Batch{Compression: format.CompressionZstd})
	appendAll(t, a, recs[15:], produce.Batch{Compression: format.CompressionNone, TimestampType: format.LogAppendTime})
	leo := a.LogEndOffset()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(after, before) {
		t.Fatalf("the broker's %d bytes were changed", len(before))
	}
	w := append(append([]rec{}, old...), want(recs[:15], fixtureLEO, false)...)
	w = append(w, want(recs[15:], fixtureLEO+15, true)...)
	batches, got := readKlog(t, dir)
	compareRecs(t, "klog", got, w, true)
	compareRecs(t, "franz-go", readFranz(t, dir, leo), w, true)
	wk := append(append([]rec{}, old...), wantKafkaGo(recs, fixtureLEO)...)
	compareRecs(t, "kafka-go", readKafkaGo(t, batches), wk, true)
	rep := verifyClean(t, dir)
	for _, f := range rep.Files {
		if f.Kind == "index" && f.Records <= 3 {
			t.Errorf("%s has %d entries: appends added none", f.Path, f.Records)
		}
	}
}

// TestIndexIntervalBoundary: an index entry is added only when strictly
// more than index.interval.bytes were appended since the last one
// (LogSegment.append: bytesSinceLastIndexEntry > indexIntervalBytes),
// before the batch that crosses it is counted.
func TestIndexIntervalBoundary(t *testing.T) {
	t.Parallel()
	recs := values("same size", 2)
	size := int64(len(encode(t, format.Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, 0, recs)))
	for _, c := range []struct {
		interval int64
		want     []int64 // batches (by index) that get an entry
	}{
		{size - 1, []int64{1, 2, 3, 4}},
		{size, []int64{2, 4}},
		{2*size - 1, []int64{2, 4}},
		{2 * size, []int64{3}},
	} {
		dir := t.TempDir()
		a := open(t, dir, produce.Options{IndexIntervalBytes: c.interval})
		for i := range 5 {
			for j := range recs {
				recs[j].Timestamp = 1_700_000_000_000 + int64(i*10+j)
			}
			r, err := a.Append(&produce.Batch{Records: recs})
			if err != nil {
				t.Fatal(err)
			}
			if r.Size != size {
				t.Fatalf("batch of %d bytes, want %d", r.Size, size)
			}
		}
		closeA(t, a)
		idx, err := os.ReadFile(filepath.Join(dir, partition.FileName(0, partition.IndexSuffix)))
		if err != nil {
			t.Fatal(err)
		}
		var want []byte
		for _, i := range c.want {
			want = binary.BigEndian.AppendUint32(want, uint32(2*i+1))  // the batch's last offset
			want = binary.BigEndian.AppendUint32(want, uint32(i*size)) // its position
		}
		if !bytes.Equal(idx, want) {
			t.Errorf("interval %d, batches of %d bytes: index %x, want %x", c.interval, size, idx, want)
		}
		verifyClean(t, dir)
	}
}

// TestAppendToCutKafkaSegment: the broker's segment with its last batch cut
// short (and the broker's index and time index still naming that batch) is
// refused; with TruncateInvalid the partial batch and the index entries
// pointing into it are cut, the log end offset is that of the last valid
// batch (9), and the appended log verifies clean.
func TestAppendToCutKafkaSegment(t *testing.T) {
	t.Parallel()
	dir := copyFixture(t, filepath.Join("derived-corrupt", "truncated-tail"))
	_, err := produce.Open(dir, produce.Options{})
	var ite *produce.InvalidTailError
	if !errors.As(err, &ite) || ite.T.Pos != 374 || ite.T.Bytes != 1951-10 {
		t.Fatalf("Open: %v, want an InvalidTailError at position 374 for 1941 bytes", err)
	}
	a := open(t, dir, produce.Options{TruncateInvalid: true, IndexIntervalBytes: 100})
	if a.LogEndOffset() != 9 || a.Truncated == nil || a.Truncated.Pos != 374 {
		t.Fatalf("log end offset %d, truncated %+v; want 9 and a cut at 374", a.LogEndOffset(), a.Truncated)
	}
	recs := values("after the cut", 6)
	appendAll(t, a, recs, produce.Batch{Compression: format.CompressionSnappy})
	leo := a.LogEndOffset()
	closeA(t, a)
	batches, got := readKlog(t, dir)
	if len(got) != 9+len(recs) {
		t.Fatalf("%d records, want %d", len(got), 9+len(recs))
	}
	w := append(append([]rec{}, got[:9]...), want(recs, 9, false)...)
	compareRecs(t, "klog", got, w, true)
	compareRecs(t, "franz-go", readFranz(t, dir, leo), w, true)
	compareRecs(t, "kafka-go", readKafkaGo(t, batches), w, true)
	verifyClean(t, dir)
}

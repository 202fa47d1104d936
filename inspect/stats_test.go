package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/klog-dev/klog/dump"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/verify"
)

func TestStatsHistogramBuckets(t *testing.T) {
	t.Parallel()
	var vals []uint64
	for v := uint64(0); v < 5000; v++ {
		vals = append(vals, v)
	}
	for e := 5; e < 63; e++ {
		p := uint64(1) << e
		vals = append(vals, p-1, p, p+1, p+p/3)
	}
	vals = append(vals, math.MaxInt64)
	for _, v := range vals {
		b := histBucket(v)
		u := histUpper(b)
		switch {
		case b < 0 || b >= histBuckets:
			t.Fatalf("value %d: bucket %d out of range", v, b)
		case u < v || histBucket(u) != b:
			t.Fatalf("value %d: bucket %d has upper bound %d", v, b, u)
		case v < histLinear && u != v:
			t.Fatalf("value %d: not exact below %d (upper %d)", v, histLinear, u)
		case u-v > v/16:
			t.Fatalf("value %d: upper bound %d is more than 1/16 above", v, u)
		}
	}
}

func TestStatsHistogramQuantiles(t *testing.T) {
	t.Parallel()
	seq := func(lo, hi int64) []int64 {
		var s []int64
		for v := lo; v <= hi; v++ {
			s = append(s, v)
		}
		return s
	}
	cases := []struct {
		name string
		vals []int64
	}{
		{"one value", []int64{7}},
		{"small exact", seq(1, 31)},
		{"1..100", seq(1, 100)},
		{"batch sizes", []int64{70, 90, 91, 95, 120, 400, 1 << 20, 1<<20 + 5, 3000, 61}},
		{"large", seq(100_000, 101_000)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var h statsHist
			sum := 0.0
			for _, v := range c.vals {
				h.add(v)
				sum += float64(v)
			}
			d := h.distribution()
			sorted := slices.Sorted(slices.Values(c.vals))
			exact := func(q float64) int64 { return sorted[max(0, int(math.Ceil(q*float64(len(sorted))))-1)] }
			if d.Count != int64(len(c.vals)) || d.Min != sorted[0] || d.Max != sorted[len(sorted)-1] || math.Abs(d.Mean-sum/float64(len(c.vals))) > 0.005 {
				t.Errorf("distribution %+v: count, min, max or mean wrong", d)
			}
			for _, q := range []struct {
				got int64
				q   float64
			}{{d.P50, 0.5}, {d.P90, 0.9}, {d.P99, 0.99}} {
				want := exact(q.q)
				if q.got < want || q.got-want > want/16 || (want < histLinear && q.got != want) {
					t.Errorf("p%v = %d, exact %d", q.q*100, q.got, want)
				}
			}
		})
	}
}

// statsOracle computes what CollectStats should report by decoding every
// record with a RecordReader (not the Decompressor length path stats uses).
type statsOracle struct {
	batches, records, bytes        int64
	control, transactional         int64
	producers                      []int64
	codecBatches, codecRecordBytes map[string]int64
}

func computeStatsOracle(t *testing.T, files []string) statsOracle {
	t.Helper()
	o := statsOracle{codecBatches: map[string]int64{}, codecRecordBytes: map[string]int64{}}
	var rr format.RecordReader
	var rec format.Record
	pids := map[int64]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := format.NewScanner(bytes.NewReader(data), int64(len(data)), format.ScanOptions{})
		for {
			b, err := sc.Next()
			if err != nil {
				break
			}
			o.batches++
			o.bytes += b.Size()
			codec := b.Compression().String()
			o.codecBatches[codec]++
			if b.IsControl() {
				o.control++
			}
			if b.IsTransactional() {
				o.transactional++
			}
			if b.IsV2() && b.ProducerID >= 0 {
				pids[b.ProducerID] = true
			}
			if err := rr.Reset(b); err != nil {
				t.Fatal(err)
			}
			for rr.Next(&rec) == nil {
				o.records++
				if b.Compression() != format.CompressionNone {
					o.codecRecordBytes[codec] += int64(rec.SizeInBytes)
				}
			}
		}
	}
	for id := range pids {
		o.producers = append(o.producers, id)
	}
	sort.Slice(o.producers, func(i, j int) bool { return o.producers[i] < o.producers[j] })
	return o
}

func TestCollectStatsAgreesWithRecords(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		paths []string
	}{
		{"partition with transactions and every v2 codec", []string{"unifiedlog-producer/topic-0"}},
		{"log directory", []string{"unifiedlog-v1"}},
		{"legacy wrappers", []string{"v0-gzip", "v0-lz4", "v1-snappy"}},
		{"v2 codecs", []string{"v2-gzip", "v2-lz4", "v2-snappy", "v2-zstd", "v2-none"}},
		{"one file", []string{"v2-transactions/00000000000000000000.log"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var paths []string
			for _, p := range c.paths {
				paths = append(paths, viewsFixture(t, p))
			}
			files, err := StatsFiles(paths)
			if err != nil {
				t.Fatal(err)
			}
			want := computeStatsOracle(t, files)
			r, err := CollectStats(context.Background(), paths, StatsOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Files != len(files) || r.Batches != want.batches || r.Records != want.records || r.Bytes != want.bytes ||
				r.ControlBatches != want.control || r.TransactionalBatches != want.transactional || r.ProblemCount != 0 {
				t.Errorf("got files %d batches %d records %d bytes %d control %d transactional %d problems %v;\nwant %+v",
					r.Files, r.Batches, r.Records, r.Bytes, r.ControlBatches, r.TransactionalBatches, r.Problems, want)
			}
			var ids []int64
			for _, p := range r.Producers.List {
				ids = append(ids, p.ProducerID)
			}
			if !slices.Equal(ids, want.producers) || r.Producers.Distinct != len(want.producers) {
				t.Errorf("producers %v, want %v", ids, want.producers)
			}
			var codecBatches, hourBytes int64
			for _, cs := range r.Codecs {
				codecBatches += cs.Batches
				if cs.Batches != want.codecBatches[cs.Codec] {
					t.Errorf("%s: %d batches, want %d", cs.Codec, cs.Batches, want.codecBatches[cs.Codec])
				}
				if cs.Codec != "none" && (cs.RecordBytes != want.codecRecordBytes[cs.Codec] || cs.StoredBytes <= 0 || cs.Undecodable != 0) {
					t.Errorf("%s: %d record bytes from %d stored, want %d record bytes", cs.Codec, cs.RecordBytes, cs.StoredBytes, want.codecRecordBytes[cs.Codec])
				}
			}
			for _, h := range r.Hours {
				hourBytes += h.Bytes
				if h.HourMs%msPerHour != 0 || h.Hour != statsISOHour(h.HourMs) {
					t.Errorf("hour bucket %+v", h)
				}
			}
			if codecBatches != r.Batches || hourBytes+r.NoTimestampBytes+r.OtherHoursBytes != r.Bytes {
				t.Errorf("codec batches %d or hour bytes %d+%d do not add up to %d batches, %d bytes", codecBatches, hourBytes, r.NoTimestampBytes, r.Batches, r.Bytes)
			}
			if r.BatchBytes.Count != r.Batches || r.RecordsPerBatch.Count != r.Batches {
				t.Errorf("distributions count %d and %d values for %d batches", r.BatchBytes.Count, r.RecordsPerBatch.Count, r.Batches)
			}
			checkStatsOutput(t, r)
		})
	}
}

func checkStatsOutput(t *testing.T, r *StatsReport) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteStatsJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var back StatsReport
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back.Type != "stats" || back.Batches != r.Batches || strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("JSON does not read back (%v): %s", err, buf.String())
	}
	buf.Reset()
	if err := WriteStatsTable(&buf, r, 2); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Summary", "Distributions", "Codecs", "Bytes per hour"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
}

// hoursSegment builds batches of producer ids pids (one batch each), an
// hour apart.
func hoursSegment(t *testing.T, pids []int64) []byte {
	t.Helper()
	var c format.Compressor
	var out []byte
	for i, pid := range pids {
		ts := int64(1_700_000_000_000) + int64(i)*msPerHour
		recs := []format.Record{{Offset: int64(i), Timestamp: ts, Value: []byte("v")}}
		h := &format.Batch{Magic: format.MagicV2, BaseOffset: int64(i), ProducerID: pid, ProducerEpoch: int16(i % 3), BaseSequence: 0}
		if pid < 0 {
			h.ProducerEpoch, h.BaseSequence = -1, -1
		}
		format.PrepareBatch(h, recs)
		var err error
		if out, err = c.AppendBatch(out, h, recs); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestStatsCaps(t *testing.T) {
	t.Parallel()
	seg := hoursSegment(t, []int64{5, 9, 5, -1, 9, 7, 5})
	cases := []struct {
		name                 string
		opts                 StatsOptions
		ids                  []int64
		other                int64
		truncated            bool
		hours                int
		otherHours           int64
		epochsOf5            []int16
		distinctEpochs       int
		noProducer, batches5 int64
	}{
		{"no caps reached", StatsOptions{}, []int64{5, 7, 9}, 0, false, 7, 0, []int16{0, 2}, 4, 1, 3},
		{"one producer", StatsOptions{MaxProducers: 1}, []int64{5}, 3, true, 7, 0, []int16{0, 2}, 2, 1, 3},
		{"two hours", StatsOptions{MaxHours: 2}, []int64{5, 7, 9}, 0, false, 2, 5, []int16{0, 2}, 4, 1, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sc := newStatsCollector(c.opts)
			if err := sc.add("mem.log", bytes.NewReader(seg), int64(len(seg))); err != nil {
				t.Fatal(err)
			}
			r := sc.report()
			var ids []int64
			for _, p := range r.Producers.List {
				ids = append(ids, p.ProducerID)
				if p.ProducerID == 5 && (!slices.Equal(p.Epochs, c.epochsOf5) || p.Batches != c.batches5) {
					t.Errorf("producer 5: %+v", p)
				}
			}
			ps := r.Producers
			if !slices.Equal(ids, c.ids) || ps.OtherBatches != c.other || ps.Truncated != c.truncated || ps.NoProducerBatches != c.noProducer || ps.DistinctEpochs != c.distinctEpochs {
				t.Errorf("producers %+v", ps)
			}
			if len(r.Hours) != c.hours || r.OtherHoursBatches != c.otherHours {
				t.Errorf("%d hours, %d batches over the cap; want %d, %d", len(r.Hours), r.OtherHoursBatches, c.hours, c.otherHours)
			}
		})
	}
}

// TestStatsMemoryBounded: the collector's allocations do not grow with the
// number of batches (fixed histograms, one hour bucket, no producers).
func TestStatsMemoryBounded(t *testing.T) {
	small, _, _, _, _ := bigSegment(t, 256<<10)
	large, _, _, _, _ := bigSegment(t, 8<<20)
	allocs := func(seg []byte) float64 {
		return testing.AllocsPerRun(3, func() {
			sc := newStatsCollector(StatsOptions{})
			if err := sc.add("mem.log", bytes.NewReader(seg), int64(len(seg))); err != nil {
				t.Fatal(err)
			}
		})
	}
	a, b := allocs(small), allocs(large)
	t.Logf("allocations: %.0f for %d bytes, %.0f for %d bytes", a, len(small), b, len(large))
	if b > a+8 {
		t.Errorf("allocations grow with the input: %.0f for %d bytes, %.0f for %d bytes", a, len(small), b, len(large))
	}
}

func TestStatsProblems(t *testing.T) {
	t.Parallel()
	corrupt := func(name string) string { return viewsFixture(t, filepath.Join("derived-corrupt", name)) }
	// A segment left preallocated: the v2-none log followed by zeros.
	zeroPadded := filepath.Join(t.TempDir(), "00000000000000000000.log")
	data, err := os.ReadFile(viewsFixture(t, "v2-none/00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(zeroPadded, append(data, make([]byte, 1024)...), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		path  string
		kind  verify.Kind
		count int
		err   error
	}{
		{"partial last batch (the kind verify gives)", corrupt("truncated-tail"), verify.KindTruncated, 1, nil},
		{"garbage", corrupt("garbage-log"), verify.KindTrailingBytes, 1, nil},
		{"bad CRC", corrupt("bad-crc-none"), verify.KindCRCMismatch, 1, nil},
		{"bad magic (read as v2, as Kafka reads it)", corrupt("bad-magic"), verify.KindBadMagic, 1, nil},
		{"clean", viewsFixture(t, "v2-none"), "", 0, nil},
		{"zero tail is a preallocated segment", zeroPadded, "", 0, nil},
		// A missing path is reported in Unreadable (the command exits 2),
		// the other paths are still read.
		{"missing path", filepath.Join(t.TempDir(), "nope"), "", 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r, err := CollectStats(context.Background(), []string{c.path}, StatsOptions{})
			if !errors.Is(err, c.err) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if err != nil {
				var ioe *dump.IOError
				if !errors.As(err, &ioe) {
					t.Errorf("err is %T, want *dump.IOError", err)
				}
				return
			}
			if r.ProblemCount != c.count || len(r.Problems) != c.count || (c.count > 0 && r.Problems[0].Kind != c.kind) {
				t.Errorf("problems %+v, want %d of kind %s", r.Problems, c.count, c.kind)
			}
			if missing := strings.HasSuffix(c.path, "nope"); missing != (len(r.Unreadable) == 1) {
				t.Errorf("unreadable %q", r.Unreadable)
			}
		})
	}
}

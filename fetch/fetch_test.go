package fetch

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

var fixedNow = func() time.Time { return time.UnixMilli(1700000000000) }

// open opens the partition model of dir.
func open(t testing.TB, dir string) *partition.Log {
	t.Helper()
	l, err := partition.OpenLog(dir, partition.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// dflt gives a request, or a consumer, that sets no byte limit the
// consumer defaults (fetch.max.bytes, max.partition.fetch.bytes), as the
// cases of these tests were written for.
func dflt(r Request) Request {
	if r.MaxBytes == 0 {
		r.MaxBytes = DefaultMaxBytes
	}
	if r.PartitionMaxBytes == 0 {
		r.PartitionMaxBytes = DefaultPartitionMaxBytes
	}
	return r
}

func dfltc(c ConsumerConfig) ConsumerConfig {
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.PartitionMaxBytes == 0 {
		c.PartitionMaxBytes = DefaultPartitionMaxBytes
	}
	return c
}

func ptr(v int64) *int64 { return &v }

// build appends batches of n records each (value size vsize) to a new
// partition and returns its directory and the batch sizes.
func build(t testing.TB, batches []int, vsize int, opts produce.Options) (string, []produce.Result) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "orders-0")
	opts.Now = fixedNow
	opts.Sync = produce.SyncNever
	a, err := produce.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var res []produce.Result
	for i, n := range batches {
		recs := make([]format.Record, n)
		for j := range recs {
			recs[j].Value = bytes.Repeat([]byte{byte('a' + i%26)}, vsize)
			recs[j].Key = []byte(strconv.Itoa(j))
		}
		r, err := a.Append(&produce.Batch{Records: recs})
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	return dir, res
}

func TestBrokerRules(t *testing.T) {
	t.Parallel()
	// Three batches of 10 records of 100 bytes: offsets 0-9, 10-19, 20-29.
	dir, rs := build(t, []int{10, 10, 10}, 100, produce.Options{})
	size := func(i int) int64 { return rs[i].Size }
	total := size(0) + size(1) + size(2)
	cases := []struct {
		rule      string
		req       Request
		hw        int64 // a high watermark set on the model, -1 none
		frame     int64
		truncated bool
		cutBytes  int64
		err       error
	}{
		{"reads every batch up to the high watermark", Request{FetchOffset: 0}, -1, total, false, 0, nil},
		{"KIP-74: first batch whole above max bytes", Request{FetchOffset: 0, PartitionMaxBytes: 10}, -1, size(0), false, 0, nil},
		{"raw slice cut inside the second batch", Request{FetchOffset: 0, PartitionMaxBytes: int32(size(0) + 50)}, -1, size(0) + 50, true, size(1), nil},
		{"response max bytes applies too", Request{FetchOffset: 0, MaxBytes: int32(size(0) + 50)}, -1, size(0) + 50, true, size(1), nil},
		{"fetch offset inside a batch returns the batch from its start", Request{FetchOffset: 15}, -1, size(1) + size(2), false, 0, nil},
		{"consumer bounded by a high watermark below the log end", Request{FetchOffset: 0}, 20, size(0) + size(1), false, 0, nil},
		{"follower reads to the log end past the high watermark", Request{FetchOffset: 0, Replica: true}, 10, total, false, 0, nil},
		{"fetch at the high watermark is empty", Request{FetchOffset: 20}, 20, 0, false, 0, nil},
		{"fetch between high watermark and log end is empty", Request{FetchOffset: 25}, 20, 0, false, 0, nil},
		{"fetch at the log end is empty", Request{FetchOffset: 30}, -1, 0, false, 0, nil},
		{"fetch past the log end is out of range", Request{FetchOffset: 31}, -1, 0, false, 0, ErrOffsetOutOfRange},
		{"fetch below the log start is out of range", Request{FetchOffset: -1}, -1, 0, false, 0, ErrOffsetOutOfRange},
		{"KIP-74 off: the slice is cut inside the first batch", Request{FetchOffset: 0, PartitionMaxBytes: 10, NoMinOneMessage: true}, -1, 10, true, size(0), nil},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			l := open(t, dir)
			if c.hw >= 0 {
				l.SetHighWatermark(c.hw)
			}
			f, err := Read(l, dflt(c.req), nil)
			if !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if int64(len(f.Frame)) != c.frame || f.Truncated != c.truncated || (c.truncated && f.TruncatedRecordBytes != c.cutBytes) {
				t.Errorf("frame %d truncated %v (%d), want %d %v (%d)", len(f.Frame), f.Truncated, f.TruncatedRecordBytes, c.frame, c.truncated, c.cutBytes)
			}
			if f.AbortedTransactions != nil {
				t.Errorf("read_uncommitted response has aborted transactions")
			}
		})
	}
}

func TestReadCommitted(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "orders-0")
	a, err := produce.Open(dir, produce.Options{Now: fixedNow, Sync: produce.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(v string) []format.Record { return []format.Record{{Value: []byte(v)}} }
	mustAppend := func(b *produce.Batch) produce.Result {
		r, err := a.Append(b)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	mustAppend(&produce.Batch{Records: rec("plain-0")})                                                            // 0
	mustAppend(&produce.Batch{Records: rec("aborted-1"), Producer: &produce.Producer{ID: 5}, Transactional: true}) // 1
	mustAppend(&produce.Batch{Records: rec("plain-2")})                                                            // 2
	if _, err := a.EndTxn(5, 0, false, 0); err != nil {                                                            // 3: ABORT
		t.Fatal(err)
	}
	mustAppend(&produce.Batch{Records: rec("committed-4"), Producer: &produce.Producer{ID: 6}, Transactional: true}) // 4
	if _, err := a.EndTxn(6, 0, true, 0); err != nil {                                                               // 5: COMMIT
		t.Fatal(err)
	}
	mustAppend(&produce.Batch{Records: rec("open-6"), Producer: &produce.Producer{ID: 7}, Transactional: true}) // 6: open
	mustAppend(&produce.Batch{Records: rec("plain-7")})                                                         // 7
	a.Close()

	l := open(t, dir)
	f, err := Read(l, dflt(Request{FetchOffset: 0, Isolation: ReadCommitted}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.LastStableOffset != 6 {
		t.Errorf("LSO %d, want 6 (the open transaction's first offset)", f.LastStableOffset)
	}
	if len(f.AbortedTransactions) != 1 || f.AbortedTransactions[0] != (AbortedTransaction{ProducerID: 5, FirstOffset: 1}) {
		t.Errorf("aborted transactions %v", f.AbortedTransactions)
	}
	c, err := NewConsumer(dir, dfltc(ConsumerConfig{Isolation: ReadCommitted}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for r, err := range c.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(r.Value))
	}
	if want := "[plain-0 plain-2 committed-4]"; fmtList(got) != want {
		t.Errorf("read_committed saw %v, want %s", got, want)
	}
	if c.Position() != 6 {
		t.Errorf("position %d, want the LSO 6", c.Position())
	}
	// read_uncommitted sees everything that is not a marker.
	c2, _ := NewConsumer(dir, dfltc(ConsumerConfig{}))
	got = got[:0]
	for r, err := range c2.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(r.Value))
	}
	if want := "[plain-0 aborted-1 plain-2 committed-4 open-6 plain-7]"; fmtList(got) != want {
		t.Errorf("read_uncommitted saw %v", got)
	}
	// A read_committed fetch at the LSO is empty with an empty list.
	f, _ = Read(l, dflt(Request{FetchOffset: 6, Isolation: ReadCommitted}), nil)
	if len(f.Frame) != 0 || f.AbortedTransactions == nil {
		t.Errorf("fetch at LSO: frame %d, aborted %v", len(f.Frame), f.AbortedTransactions)
	}
}

func fmtList(s []string) string {
	b := []byte{'['}
	for i, x := range s {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, x...)
	}
	return string(append(b, ']'))
}

func TestConsumerRandomMaxBytes(t *testing.T) {
	t.Parallel()
	sizes := make([]int, 40)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range sizes {
		sizes[i] = 1 + r.IntN(20)
	}
	dir, res := build(t, sizes, 50, produce.Options{SegmentBytes: 4000})
	leo := res[len(res)-1].LastOffset + 1
	for seed := uint64(0); seed < 5; seed++ {
		c, err := NewConsumer(dir, dfltc(ConsumerConfig{}))
		if err != nil {
			t.Fatal(err)
		}
		rr := rand.New(rand.NewPCG(seed, 9))
		next := int64(0)
		for polls := 0; c.Position() < leo; polls++ {
			c.cfg.PartitionMaxBytes = int32(1 + rr.IntN(3000))
			recs, _, err := c.Poll(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range recs {
				if rec.Offset != next {
					t.Fatalf("seed %d: got offset %d, want %d", seed, rec.Offset, next)
				}
				next++
			}
			if polls > 10000 {
				t.Fatal("no progress")
			}
		}
		if next != leo || c.Position() != leo || c.Lag() != 0 {
			t.Errorf("seed %d: read %d records, position %d, lag %d; log end %d", seed, next, c.Position(), c.Lag(), leo)
		}
	}
}

func TestRecordExceedsMaxBytes(t *testing.T) {
	t.Parallel()
	dir, res := build(t, []int{1, 1}, 5000, produce.Options{})
	c, err := NewConsumer(dir, dfltc(ConsumerConfig{PartitionMaxBytes: 1000, NoMinOneMessage: true}))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Poll(context.Background())
	var rex *RecordExceedsMaxBytesError
	if !errors.As(err, &rex) || rex.Offset != 0 || rex.RecordBytes != res[0].Size || rex.MaxBytes != 1000 {
		t.Fatalf("err %v (%+v), want RecordExceedsMaxBytesError at 0 of %d bytes", err, rex, res[0].Size)
	}
	if c.Position() != 0 {
		t.Errorf("position moved to %d", c.Position())
	}
	c.cfg.PartitionMaxBytes = 6000
	recs, _, err := c.Poll(context.Background())
	if err != nil || len(recs) != 1 || c.Position() != 1 {
		t.Fatalf("after raising max bytes: %d records, position %d, err %v", len(recs), c.Position(), err)
	}
}

func TestCorruptRecordError(t *testing.T) {
	t.Parallel()
	dir, res := build(t, []int{3, 3}, 10, produce.Options{})
	p := filepath.Join(dir, "00000000000000000000.log")
	data, _ := os.ReadFile(p)
	data[res[1].Position+70] ^= 0xff
	os.WriteFile(p, data, 0o644)
	c, _ := NewConsumer(dir, dfltc(ConsumerConfig{}))
	var got []int64
	var cerr *format.CorruptRecordError
	for r, err := range c.Records(context.Background()) {
		if err != nil {
			if !errors.As(err, &cerr) {
				t.Fatalf("err %v", err)
			}
			break
		}
		got = append(got, r.Offset)
	}
	if cerr == nil || cerr.Offset != 3 || cerr.Stored == cerr.Computed {
		t.Fatalf("want format.CorruptRecordError at offset 3, got %+v", cerr)
	}
	if len(got) != 3 || c.Position() != 3 {
		t.Errorf("delivered %v, position %d", got, c.Position())
	}
}

func TestRecordsStopEarlyLosesNothing(t *testing.T) {
	t.Parallel()
	dir, _ := build(t, []int{5, 5}, 10, produce.Options{})
	offsets := memOffsets{}
	c, err := NewConsumer(dir, dfltc(ConsumerConfig{Group: "g1", Offsets: offsets}))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := range c.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == 7 {
			break
		}
	}
	if c.Position() != 6 {
		t.Fatalf("after consuming 7 records and stopping, position %d, want 6 (the 7th is consumed once the loop body returns)", c.Position())
	}
	if err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	c2, err := NewConsumer(dir, dfltc(ConsumerConfig{Group: "g1", Offsets: offsets}))
	if err != nil {
		t.Fatal(err)
	}
	var first int64 = -1
	for r, err := range c2.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		first = r.Offset
		break
	}
	if first != 6 {
		t.Errorf("resumed consumer starts at %d, want 6", first)
	}
}

func TestLongPoll(t *testing.T) {
	t.Parallel()
	dir, _ := build(t, []int{1}, 10, produce.Options{})
	c, err := NewConsumer(dir, dfltc(ConsumerConfig{StartOffset: ptr(1), MinBytes: 1 << 20, MaxWait: 300 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	recs, _, err := c.Poll(context.Background())
	el := time.Since(start)
	if err != nil || len(recs) != 0 {
		t.Fatalf("idle poll: %d records, err %v", len(recs), err)
	}
	if el < 280*time.Millisecond || el > 2*time.Second {
		t.Errorf("idle long poll returned after %v, want about 300ms", el)
	}
	// Now an append of more than MinBytes from another goroutine wakes it.
	c.cfg.MaxWait = 10 * time.Second
	done := make(chan time.Duration)
	go func() {
		start := time.Now()
		recs, _, err := c.Poll(context.Background())
		if err != nil || len(recs) == 0 {
			t.Errorf("woken poll: %d records, err %v", len(recs), err)
		}
		done <- time.Since(start)
	}()
	a, err := produce.Open(dir, produce.Options{Now: fixedNow, Sync: produce.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	recsIn := make([]format.Record, 64)
	for i := range recsIn {
		recsIn[i].Value = bytes.Repeat([]byte{'x'}, 17<<10)
	}
	if _, err := a.Append(&produce.Batch{Records: recsIn}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	select {
	case el := <-done:
		if el > 5*time.Second {
			t.Errorf("woken after %v", el)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("long poll did not wake on the append")
	}
}

func TestParseIsolation(t *testing.T) {
	for s, want := range map[string]Isolation{"read_uncommitted": ReadUncommitted, "read_committed": ReadCommitted} {
		if got, err := ParseIsolation(s); err != nil || got != want {
			t.Errorf("ParseIsolation(%q) = %v, %v", s, got, err)
		}
	}
	for _, bad := range []string{"", "committed", "READ_COMMITTED"} {
		if _, err := ParseIsolation(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

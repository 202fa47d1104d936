package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klog-dev/klog/filter"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/produce"
	"github.com/klog-dev/klog/schema"
	"github.com/klog-dev/klog/verify"
)

// writeLogDir writes parts partitions of topic t, each batches batches of
// per records: key "k<partition>-<offset>", a value of valueBytes bytes,
// timestamps 1700000000000 + offset.
func writeLogDir(tb testing.TB, dir string, parts, batches, per, valueBytes int, codec format.Compression) []string {
	tb.Helper()
	var dirs []string
	for p := 0; p < parts; p++ {
		d := filepath.Join(dir, fmt.Sprintf("t-%d", p))
		a, err := produce.Open(d, produce.Options{Sync: produce.SyncNever})
		if err != nil {
			tb.Fatal(err)
		}
		off := 0
		for b := 0; b < batches; b++ {
			var recs []format.Record
			for i := 0; i < per; i++ {
				v := []byte(strings.Repeat(string(rune('a'+off%26)), valueBytes))
				recs = append(recs, format.Record{Key: []byte(fmt.Sprintf("k%d-%d", p, off)), Value: v, Timestamp: 1700000000000 + int64(off),
					Headers: []format.Header{{Key: []byte("n"), Value: []byte(fmt.Sprint(off % 7))}}})
				off++
			}
			if _, err := a.Append(&produce.Batch{Records: recs, Compression: codec}); err != nil {
				tb.Fatal(err)
			}
		}
		if err := a.Close(); err != nil {
			tb.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	return dirs
}

func collect(t *testing.T, dirs []string, q Query) ([]string, Stats, []Problem) {
	t.Helper()
	var got []string
	st, probs, err := Search(context.Background(), dirs, q, func(m *Match) error {
		got = append(got, fmt.Sprintf("%d/%d %s", m.Partition, m.Record.Offset, m.Record.Key))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, st, probs
}

func where(t *testing.T, expr string) *filter.Filter {
	t.Helper()
	f, err := filter.Parse(expr)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSearch(t *testing.T) {
	t.Parallel()
	dirs := writeLogDir(t, t.TempDir(), 3, 20, 10, 100, format.CompressionNone)
	gz := writeLogDir(t, t.TempDir(), 1, 5, 10, 100, format.CompressionGzip)
	q := NewQuery()
	q.Key, q.HasKey = []byte("k1-123"), true
	got, st, probs := collect(t, dirs, q)
	if strings.Join(got, ",") != "1/123 k1-123" || len(probs) != 0 {
		t.Fatalf("key: %v %v", got, probs)
	}
	if st.BatchesRead != 1 || st.BatchesSkipped != 59 || st.RecordsExamined != 10 {
		t.Errorf("a key search decodes only the batch holding the key's bytes: %+v", st)
	}
	q.Key = []byte("k0-4")
	if got, _, _ = collect(t, append(dirs, gz...), q); strings.Join(got, ",") != "0/4 k0-4,0/4 k0-4" {
		t.Errorf("k0-4 (not a prefix match; the gzip partition too): %v", got)
	}

	q = NewQuery()
	q.FromOffset, q.ToOffset = 195, 205
	q.Where = where(t, `headers.n == "0" || offset == 199`)
	got, st, _ = collect(t, dirs, q)
	want := "0/196 k0-196,0/199 k0-199,1/196 k1-196,1/199 k1-199,2/196 k2-196,2/199 k2-199"
	if strings.Join(got, ",") != want {
		t.Errorf("range and where:\n got  %v\n want %s", got, want)
	}
	if st.BatchesRead != 3 {
		t.Errorf("the offset index starts each partition at offset 190's batch: %+v", st)
	}

	q = NewQuery()
	q.FromTimestamp, q.ToTimestamp = 1700000000050, 1700000000053
	if got, _, _ = collect(t, dirs[:1], q); strings.Join(got, ",") != "0/50 k0-50,0/51 k0-51,0/52 k0-52" {
		t.Errorf("s@T and e@T: %v", got)
	}
	q = NewQuery()
	q.Limit = 4
	if got, _, _ = collect(t, dirs, q); len(got) != 4 || got[3] != "0/3 k0-3" {
		t.Errorf("limit: %v", got)
	}
}

// TestSearchCorrupt: a batch whose CRC fails is a finding and is not
// searched; the rest is.
func TestSearchCorrupt(t *testing.T) {
	t.Parallel()
	dirs := writeLogDir(t, t.TempDir(), 1, 3, 10, 100, format.CompressionNone)
	log := filepath.Join(dirs[0], "00000000000000000000.log")
	b, _ := os.ReadFile(log)
	b[len(b)/2] ^= 0xff // inside the second batch
	os.WriteFile(log, b, 0o644)
	q := NewQuery()
	q.Where = where(t, `offset % 10 == 5`)
	got, _, probs := collect(t, dirs, q)
	if strings.Join(got, ",") != "0/5 k0-5,0/25 k0-25" || len(probs) != 1 || probs[0].Kind != verify.KindCRCMismatch {
		t.Fatalf("%v %+v", got, probs)
	}
}

// TestSearchDecoded searches the schema fixtures (written by confluent's
// serializers) by decoded fields, schemas from their _schemas partition.
func TestSearchDecoded(t *testing.T) {
	t.Parallel()
	logDir := "../schema/testdata/confluent"
	st, _, err := schema.ReadTopic(filepath.Join(logDir, "_schemas-0"))
	if err != nil {
		t.Fatal(err)
	}
	q := NewQuery()
	q.Decoder, q.KeyFormat, q.ValueFormat = schema.NewDecoder(st), schema.FormatAuto, schema.FormatAuto
	q.Where = where(t, `value.customer == "customer 2" || value.status == "SETTLED" || value.age == 7`)
	var got []string
	_, _, err = Search(context.Background(), []string{filepath.Join(logDir, "orders-0"), filepath.Join(logDir, "payments-0"), filepath.Join(logDir, "users-0")}, q,
		func(m *Match) error {
			got = append(got, fmt.Sprintf("%s/%d %s", m.Topic, m.Record.Offset, m.Value.Format))
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "orders/1 avro,payments/3 protobuf,users/1 json-schema" {
		t.Errorf("%v", got)
	}
}

// TestSearchDecodeFailures: a match whose value does not decode as the
// query's format asks is still emitted, with its bytes, and is a
// record-decode finding naming its segment, position and offset; one the
// query leaves out, or past its limit, is not.
func TestSearchDecodeFailures(t *testing.T) {
	t.Parallel()
	logDir := "../schema/testdata/confluent"
	st, _, err := schema.ReadTopic(filepath.Join(logDir, "_schemas-0"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(logDir, "orders-0")
	cases := []struct {
		where string
		limit int
		want  string // offset: message of each finding
	}{
		{"true", 0, "4@1020: value does not decode: avro: map[string]interface {}: unexpected EOF|5@1253: value does not decode: unknown schema: id 999 is not in _schemas"},
		{"offset != 4", 0, "5@1253: value does not decode: unknown schema: id 999 is not in _schemas"},
		{"offset < 4 || offset > 5", 0, ""},
		{"true", 5, "4@1020: value does not decode: avro: map[string]interface {}: unexpected EOF"},
	}
	for _, c := range cases {
		q := NewQuery()
		q.Decoder, q.ValueFormat, q.Where, q.Limit = schema.NewDecoder(st), schema.FormatAvro, where(t, c.where), c.limit
		var raw int
		_, probs, err := Search(context.Background(), []string{dir}, q, func(m *Match) error {
			if m.Value.Err != nil && len(m.Record.Value) > 0 {
				raw++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range probs {
			if p.Kind != verify.KindRecordDecode || p.Path != filepath.Join(dir, "00000000000000000000.log") {
				t.Errorf("%s: %+v", c.where, p)
			}
			got = append(got, fmt.Sprintf("%d@%d: %s", p.Offset, p.Position, p.Message))
		}
		if strings.Join(got, "|") != c.want || raw != len(probs) {
			t.Errorf("where %s, limit %d: findings %q (%d emitted with their bytes), want %q", c.where, c.limit, got, raw, c.want)
		}
	}
}

// BenchmarkSearch: a key search and a --where search over uncompressed
// partitions of 1 KiB records, against the reference scan in the same run
// (format.Scanner reading the same files and checking every batch's CRC,
// as the search does). jobs=1 is one core; jobs=0 every core.
// KLOG_SEARCH_MB sets the data size (default 64).
func BenchmarkSearch(b *testing.B) {
	mb := 64
	if s := os.Getenv("KLOG_SEARCH_MB"); s != "" {
		fmt.Sscan(s, &mb)
	}
	const parts, per, vb = 4, 16, 1024
	batches := mb << 20 / parts / (per * (vb + 40))
	dirs := writeLogDir(b, b.TempDir(), parts, batches, per, vb, format.CompressionNone)
	var size int64
	for _, d := range dirs {
		fi, _ := os.Stat(filepath.Join(d, "00000000000000000000.log"))
		size += fi.Size()
	}
	wf, _ := filter.Parse(`offset == 17`)
	run := func(b *testing.B, q Query) {
		b.SetBytes(size)
		for b.Loop() {
			if _, _, err := Search(context.Background(), dirs, q, func(*Match) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, jobs := range []int{1, 0} {
		b.Run(fmt.Sprintf("impl=reference-scan/jobs=%d", jobs), func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				referenceScan(b, dirs, jobs)
			}
		})
		b.Run(fmt.Sprintf("impl=key/jobs=%d", jobs), func(b *testing.B) {
			q := NewQuery()
			q.Key, q.HasKey, q.Jobs = []byte("k2-1000"), true, jobs
			run(b, q)
		})
		b.Run(fmt.Sprintf("impl=where/jobs=%d", jobs), func(b *testing.B) {
			q := NewQuery()
			q.Where, q.Jobs = wf, jobs
			run(b, q)
		})
	}
}

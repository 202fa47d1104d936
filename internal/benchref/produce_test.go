package benchref_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/benchref"
	"github.com/klog-dev/klog/produce"
)

// TestKmsgProduceWritesKlogsBatches: the reference writes the batches klog
// produce writes for the same lines (the same records in the same batch
// boundaries, offsets and CRCs valid), so a benchmark compares like with
// like.
func TestKmsgProduceWritesKlogsBatches(t *testing.T) {
	var in strings.Builder
	for i := range 5000 {
		in.WriteString("line-" + strconv.Itoa(i) + strings.Repeat("x", i%300) + "\n")
	}
	in.WriteString("\nlast without a newline")
	var ref bytes.Buffer
	if err := benchref.KmsgProduce(strings.NewReader(in.String()), &ref, 500, 16384); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "t-0")
	a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	feed := &produce.Feed{MaxRecords: 500, MaxBytes: 16384}
	if err := feed.Run(context.Background(), a, strings.NewReader(in.String()), nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	klog, err := os.ReadFile(filepath.Join(dir, "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	want, got := batches(t, klog), batches(t, ref.Bytes())
	if len(got) != len(want) || len(want) < 10 {
		t.Fatalf("the reference wrote %d batches, klog %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("batch %d: reference %q, klog %q", i, got[i], want[i])
		}
	}
}

// batches describes each batch of a log: its base offset and its records'
// values, after checking its CRC.
func batches(t *testing.T, log []byte) []string {
	t.Helper()
	sc := format.NewScanner(bytes.NewReader(log), int64(len(log)), format.ScanOptions{})
	var out []string
	for b, err := range sc.All() {
		if err != nil {
			t.Fatal(err)
		}
		if err := b.CheckCRC(); err != nil {
			t.Fatal(err)
		}
		var rr format.RecordReader
		var rec format.Record
		if err := rr.Reset(b); err != nil {
			t.Fatal(err)
		}
		s := strconv.FormatInt(b.BaseOffset, 10)
		for rr.Next(&rec) == nil {
			s += "|" + string(rec.Value)
		}
		out = append(out, s)
	}
	return out
}

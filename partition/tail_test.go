package partition

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/format"
)

// appendTestBatch writes a batch of n records from offset base at the end
// of the .log and returns its header, positioned.
func appendTestBatch(t *testing.T, path string, base int64, n int) *format.Batch {
	t.Helper()
	recs := make([]format.Record, n)
	for i := range recs {
		recs[i] = format.Record{Offset: base + int64(i), Timestamp: 1700000000000, Value: []byte("v")}
	}
	h := &format.Batch{Magic: 2, BaseOffset: base, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	format.PrepareBatch(h, recs)
	var c format.Compressor
	raw, err := c.AppendBatch(nil, h, recs)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	if _, err := f.Write(raw); err != nil {
		t.Fatal(err)
	}
	b, err := format.ParseBatch(raw, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReadStartTail: a read of the batch a writer just appended, after a
// read that found the batch before it (a consumer at the log end), is
// answered without opening a file, and with what a search of the log
// answers; a read below the appended batch searches the log as before.
func TestReadStartTail(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "00000000000000000000.log")
	var batches []*format.Batch
	for base := int64(0); base < 6; base += 2 {
		batches = append(batches, appendTestBatch(t, logPath, base, 2))
	}
	opens := 0
	l, err := OpenLog(dir, LogOptions{Open: func(p string) (File, error) { opens++; return os.Open(p) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.AttachWriter(); err != nil {
		t.Fatal(err)
	}
	check := func(offset int64, want *format.Batch, wantOpens bool) {
		t.Helper()
		opens = 0
		rs, err := l.ReadStart(offset, l.LogEndOffset())
		if err != nil {
			t.Fatal(err)
		}
		if !rs.Found || rs.Pos != want.Pos || rs.FirstSize != want.Size() {
			t.Fatalf("ReadStart(%d): %+v, want the batch at %d of %d bytes", offset, rs, want.Pos, want.Size())
		}
		if (opens > 0) != wantOpens {
			t.Errorf("ReadStart(%d) opened %d files", offset, opens)
		}
	}
	check(4, batches[2], true) // the last batch, found by a search
	for base := int64(6); base < 12; base += 2 {
		b := appendTestBatch(t, logPath, base, 2)
		batches = append(batches, b)
		l.Appended(b, -1)
		check(base, b, false)
		check(base+1, b, false)
	}
	check(7, batches[3], true)
	check(2, batches[1], true)
	// A read below the last batch leaves what the Log knows of it: the
	// next append is answered from memory again.
	b := appendTestBatch(t, logPath, 12, 3)
	l.Appended(b, -1)
	check(13, b, false)
}

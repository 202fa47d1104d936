package partition

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/format"
)

// newPartitionDir makes an empty partition directory and returns it with
// the path of its first segment's .log.
func newPartitionDir(t *testing.T) (dir, logPath string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "t-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, filepath.Join(dir, "00000000000000000000.log")
}

// openWriterLog opens dir's Log with opts, kept current by a writer
// (AttachWriter) that the test plays.
func openWriterLog(t *testing.T, dir string, opts LogOptions) *Log {
	t.Helper()
	l, err := OpenLog(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.AttachWriter(); err != nil {
		t.Fatal(err)
	}
	return l
}

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
	dir, logPath := newPartitionDir(t)
	var batches []*format.Batch
	for base := int64(0); base < 6; base += 2 {
		batches = append(batches, appendTestBatch(t, logPath, base, 2))
	}
	opens := 0
	l := openWriterLog(t, dir, LogOptions{Open: func(p string) (File, error) { opens++; return os.Open(p) }})
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
		l.Appended(b, nil, -1)
		check(base, b, false)
		check(base+1, b, false)
	}
	check(7, batches[3], true)
	check(2, batches[1], true)
	// A read below the last batch leaves what the Log knows of it: the
	// next append is answered from memory again.
	b := appendTestBatch(t, logPath, 12, 3)
	l.Appended(b, nil, -1)
	check(13, b, false)
}

// batchBytes reads b's bytes back from the .log at path.
func batchBytes(t *testing.T, path string, b *format.Batch) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw := make([]byte, b.Size())
	if _, err := f.ReadAt(raw, b.Pos); err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestCopyAppended: the Log answers the bytes of the last batch appended
// (when small) for exactly its segment and position, and for nothing else:
// not an earlier batch, not once a later batch (kept or too large to keep)
// was appended, not after the Log was read again.
func TestCopyAppended(t *testing.T) {
	dir, logPath := newPartitionDir(t)
	first := appendTestBatch(t, logPath, 0, 2)
	l := openWriterLog(t, dir, LogOptions{})
	if l.CopyAppended(logPath, first.Pos, make([]byte, first.Size())) {
		t.Fatal("a batch the Log read, not one appended, was copied")
	}
	b := appendTestBatch(t, logPath, 2, 3)
	raw := batchBytes(t, logPath, b)
	want := string(raw)
	l.Appended(b, raw, -1)
	raw[len(raw)-1] ^= 0xff // the writer's buffer, reused: the Log keeps its own copy
	dst := make([]byte, b.Size())
	if !l.CopyAppended(logPath, b.Pos, dst) || string(dst) != want {
		t.Fatalf("the last batch appended: copied %v, bytes equal %v", l.CopyAppended(logPath, b.Pos, dst), string(dst) == want)
	}
	for _, c := range []struct {
		name string
		path string
		pos  int64
		n    int64
	}{
		{"another position", logPath, first.Pos, first.Size()},
		{"another length", logPath, b.Pos, b.Size() - 1},
		{"another file", filepath.Join(dir, "00000000000000000001.log"), b.Pos, b.Size()},
	} {
		if l.CopyAppended(c.path, c.pos, make([]byte, c.n)) {
			t.Errorf("%s: copied", c.name)
		}
	}
	// A later batch without its bytes given: the copy of b is stale.
	c := appendTestBatch(t, logPath, 5, 1)
	l.Appended(c, nil, -1)
	if l.CopyAppended(logPath, b.Pos, dst) || l.CopyAppended(logPath, c.Pos, make([]byte, c.Size())) {
		t.Error("copied after a batch the Log was given no bytes of")
	}
	// A batch over the limit is not kept.
	big := make([]format.Record, 1)
	big[0] = format.Record{Offset: 6, Timestamp: 1700000000000, Value: make([]byte, lastCopyMax)}
	h := &format.Batch{Magic: 2, BaseOffset: 6, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	format.PrepareBatch(h, big)
	var comp format.Compressor
	bigRaw, err := comp.AppendBatch(nil, h, big)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(logPath)
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(bigRaw); err != nil {
		t.Fatal(err)
	}
	f.Close()
	hb, err := format.ParseBatch(bigRaw, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	l.Appended(hb, bigRaw, -1)
	if l.CopyAppended(logPath, hb.Pos, make([]byte, hb.Size())) {
		t.Error("a batch over lastCopyMax was kept")
	}
	// Kept again, then the Log read again (a truncation's Reload): gone.
	d := appendTestBatch(t, logPath, 7, 1)
	l.Appended(d, batchBytes(t, logPath, d), -1)
	if !l.CopyAppended(logPath, d.Pos, make([]byte, d.Size())) {
		t.Fatal("the last batch appended was not copied")
	}
	if err := l.Reload(); err != nil {
		t.Fatal(err)
	}
	if l.CopyAppended(logPath, d.Pos, make([]byte, d.Size())) {
		t.Error("copied after Reload")
	}
}

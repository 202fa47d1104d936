package produce_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// writeBatches makes a one-segment log of n batches of 3 records and
// returns its path and the results.
func writeBatches(t *testing.T, dir string, n int) (string, []produce.Result) {
	t.Helper()
	a := open(t, dir, produce.Options{IndexIntervalBytes: 1})
	var rs []produce.Result
	for i := range n {
		r, err := a.Append(&produce.Batch{Records: values(strings.Repeat("v", i+1), 3)})
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	closeA(t, a)
	return filepath.Join(dir, partition.FileName(0, partition.LogSuffix)), rs
}

// TestInvalidTail: a log whose active segment does not end with a whole
// valid batch is refused, with an InvalidTailError that says where the
// valid data ends and how many bytes follow, and the files are left as they
// were; with TruncateInvalid exactly those bytes are cut, appends continue
// from the last valid batch and the result verifies clean.
func TestInvalidTail(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// damage edits the log of 4 batches; it returns the batch index
		// from which data is invalid.
		damage func(log []byte, rs []produce.Result) ([]byte, int)
		reason string
	}{
		{"bad crc in the last batch", func(log []byte, rs []produce.Result) ([]byte, int) {
			log[len(log)-1] ^= 0x40
			return log, 3
		}, "CRC"},
		{"bad crc in a middle batch", func(log []byte, rs []produce.Result) ([]byte, int) {
			log[rs[1].Position+format.BatchHeaderSize+2] ^= 1
			return log, 1
		}, "CRC"},
		{"bad crc in the header", func(log []byte, rs []produce.Result) ([]byte, int) {
			log[rs[3].Position+30] ^= 1 // baseTimestamp, covered by the CRC
			return log, 3
		}, "CRC"},
		{"last batch cut short", func(log []byte, rs []produce.Result) ([]byte, int) {
			return log[:len(log)-5], 3
		}, "incomplete"},
		{"last batch cut in its header", func(log []byte, rs []produce.Result) ([]byte, int) {
			return log[:rs[3].Position+9], 3
		}, "incomplete"},
		{"zero tail", func(log []byte, rs []produce.Result) ([]byte, int) {
			return append(log, make([]byte, 4096)...), 4
		}, "zero"},
		{"garbage tail", func(log []byte, rs []produce.Result) ([]byte, int) {
			return append(log, bytes.Repeat([]byte{0xff}, 40)...), 4
		}, "size -1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			logPath, rs := writeBatches(t, dir, 4)
			log, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			log, bad := c.damage(log, rs)
			if err := os.WriteFile(logPath, log, 0o644); err != nil {
				t.Fatal(err)
			}
			last := rs[len(rs)-1]
			validEnd, leo := last.Position+last.Size, last.LastOffset+1
			if bad < len(rs) {
				validEnd, leo = rs[bad].Position, rs[bad].BaseOffset
			}
			wantT := produce.Truncation{Segment: logPath, Pos: validEnd, Bytes: int64(len(log)) - validEnd}

			_, err = produce.Open(dir, produce.Options{})
			var ite *produce.InvalidTailError
			if !errors.As(err, &ite) {
				t.Fatalf("Open: %v, want an InvalidTailError", err)
			}
			if ite.T.Segment != wantT.Segment || ite.T.Pos != wantT.Pos || ite.T.Bytes != wantT.Bytes ||
				!strings.Contains(ite.T.Reason, c.reason) {
				t.Errorf("refused with %+v, want %+v with a reason mentioning %q", ite.T, wantT, c.reason)
			}
			if !strings.Contains(err.Error(), "--truncate-invalid") {
				t.Errorf("message %q does not say how to proceed", err)
			}
			if now, _ := os.ReadFile(logPath); !bytes.Equal(now, log) {
				t.Fatal("a refused Open changed the log")
			}

			a := open(t, dir, produce.Options{TruncateInvalid: true, IndexIntervalBytes: 1})
			if a.Truncated == nil || a.Truncated.Pos != wantT.Pos || a.Truncated.Bytes != wantT.Bytes {
				t.Fatalf("Truncated = %+v, want %+v", a.Truncated, wantT)
			}
			if a.LogEndOffset() != leo {
				t.Fatalf("log end offset %d after the cut, want %d", a.LogEndOffset(), leo)
			}
			r := idem(t, a, -1, 0, 2, false)
			closeA(t, a)
			if r.BaseOffset != leo || r.Position != validEnd {
				t.Errorf("append after the cut at offset %d position %d, want %d and %d", r.BaseOffset, r.Position, leo, validEnd)
			}
			if now, _ := os.ReadFile(logPath); !bytes.Equal(now[:validEnd], log[:validEnd]) {
				t.Error("the valid prefix changed")
			}
			readKlog(t, dir)
			verifyClean(t, dir)
		})
	}
}

// encode returns one v2 batch of recs at base.
func encode(t *testing.T, h format.Batch, base int64, recs []format.Record) []byte {
	t.Helper()
	h.Magic, h.BaseOffset = format.MagicV2, base
	recs = append([]format.Record(nil), recs...)
	for i := range recs {
		recs[i].Offset = base + int64(i)
	}
	format.PrepareBatch(&h, recs)
	var c format.Compressor
	raw, err := c.AppendBatch(nil, &h, recs)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestAppendRawRefuses: AppendRaw takes exactly one valid v2 batch at the
// log end offset; anything else is an error and writes nothing.
func TestAppendRawRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	logPath, _ := writeBatches(t, dir, 2) // log end offset 6
	plain := format.Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	good := encode(t, plain, 6, values("raw", 2))
	badCRC := bytes.Clone(good)
	badCRC[len(badCRC)-1] ^= 1
	legacy := func() []byte {
		var c format.Compressor
		b, err := c.AppendLegacy(nil, format.LegacySpec{Magic: format.MagicV1}, []format.Record{{Offset: 6, Value: []byte("x")}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}()
	cases := []struct {
		name string
		raw  []byte
		is   error
	}{
		{"base offset after the log end", encode(t, plain, 7, values("raw", 1)), nil},
		{"base offset before the log end", encode(t, plain, 5, values("raw", 1)), nil},
		{"bad crc", badCRC, format.ErrChecksum},
		{"two batches", append(bytes.Clone(good), encode(t, plain, 8, values("raw", 1))...), nil},
		{"cut short", good[:len(good)-1], format.ErrTruncated},
		{"header only", good[:20], format.ErrTruncated},
		{"legacy v1 message", legacy, nil},
		{"empty", nil, format.ErrTruncated},
	}
	a := open(t, dir, produce.Options{})
	defer closeA(t, a)
	before, _ := os.ReadFile(logPath)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := a.AppendRaw(c.raw)
			if err == nil {
				t.Fatal("AppendRaw succeeded")
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v is not %v", err, c.is)
			}
			if a.LogEndOffset() != 6 {
				t.Errorf("log end offset moved to %d", a.LogEndOffset())
			}
			if now, _ := os.ReadFile(logPath); !bytes.Equal(now, before) {
				t.Errorf("the log changed")
			}
		})
	}
	r, err := a.AppendRaw(good)
	if err != nil || r.BaseOffset != 6 || r.LastOffset != 7 || a.LogEndOffset() != 8 {
		t.Fatalf("valid AppendRaw: %+v, %v, log end %d", r, err, a.LogEndOffset())
	}
	if now, _ := os.ReadFile(logPath); !bytes.Equal(now, append(before, good...)) {
		t.Error("AppendRaw did not append the batch byte for byte")
	}
}

// TestAppendRawFollows: a follower that AppendRaws every batch of a leader's
// log, transactions and markers included, ends with the same .log, .index,
// .timeindex and .txnindex, byte for byte.
func TestAppendRawFollows(t *testing.T) {
	t.Parallel()
	leader, follower := t.TempDir(), t.TempDir()
	opts := produce.Options{IndexIntervalBytes: 100}
	a := open(t, leader, opts)
	idem(t, a, 1, 0, 3, true)
	idem(t, a, 2, 0, 2, true)
	if _, err := a.Append(&produce.Batch{Records: sampleRecords(5, 3), Compression: format.CompressionLZ4}); err != nil {
		t.Fatal(err)
	}
	idem(t, a, 1, 0, 1, true)
	if _, err := a.EndTxn(1, 0, false, 7); err != nil {
		t.Fatal(err)
	}
	if _, err := a.EndTxn(2, 0, true, 7); err != nil {
		t.Fatal(err)
	}
	idem(t, a, 2, 0, 1, true)
	if _, err := a.EndTxn(2, 0, false, 7); err != nil {
		t.Fatal(err)
	}
	closeA(t, a)

	batches, _ := readKlog(t, leader)
	f := open(t, follower, opts)
	for _, b := range batches {
		if _, err := f.AppendRaw(b.Raw); err != nil {
			t.Fatalf("AppendRaw of the batch at offset %d: %v", b.BaseOffset, err)
		}
	}
	closeA(t, f)
	for _, suffix := range []string{partition.LogSuffix, partition.IndexSuffix, partition.TimeIndexSuffix, partition.TxnIndexSuffix} {
		name := partition.FileName(0, suffix)
		l, err1 := os.ReadFile(filepath.Join(leader, name))
		g, err2 := os.ReadFile(filepath.Join(follower, name))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !bytes.Equal(l, g) {
			t.Errorf("%s differs between leader (%d bytes) and follower (%d bytes)", name, len(l), len(g))
		}
	}
	if n := len(txnIndex(t, leader, "00000000000000000000.log")); n != 2 {
		t.Errorf("leader txnindex has %d entries, want 2", n)
	}
	verifyClean(t, follower)
}

// TestAppendRefuses: bad Append and EndTxn calls are errors and write nothing.
func TestAppendRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := open(t, dir, produce.Options{})
	defer closeA(t, a)
	if _, err := a.Append(&produce.Batch{}); err == nil {
		t.Error("a batch of no records was appended")
	}
	if _, err := a.Append(&produce.Batch{Records: values("x", 1), Transactional: true}); err == nil {
		t.Error("a transactional batch without a producer id was appended")
	}
	if _, err := a.EndTxn(1, 0, false, 0); err == nil {
		t.Error("EndTxn of a producer that never wrote succeeded")
	}
	idem(t, a, 1, 0, 1, false)
	if _, err := a.EndTxn(1, 0, true, 0); err == nil {
		t.Error("EndTxn of an idempotent producer with no transaction succeeded")
	}
	if a.LogEndOffset() != 1 {
		t.Errorf("log end offset %d, want 1", a.LogEndOffset())
	}
	if txns := txnIndex(t, dir, "00000000000000000000.log"); txns != nil {
		t.Errorf("txnindex written: %+v", txns)
	}
}

// TestLock: a second Open of a directory fails with ErrLocked while the
// first Appender is open; with Wait it blocks until the first closes and
// then sees what the first appended.
func TestLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := open(t, dir, produce.Options{})
	if _, err := produce.Open(dir, produce.Options{}); !errors.Is(err, produce.ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	type opened struct {
		a   *produce.Appender
		err error
	}
	done := make(chan opened, 1)
	go func() {
		b, err := produce.Open(dir, produce.Options{Wait: true})
		done <- opened{b, err}
	}()
	idem(t, a, -1, 0, 5, false)
	closeA(t, a)
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	defer closeA(t, o.a)
	if o.a.LogEndOffset() != 5 {
		t.Errorf("the waiting Open loaded log end offset %d, want 5: it did not wait for the lock", o.a.LogEndOffset())
	}
}

// TestLockWaitEndsWithContext: a waiting OpenContext gives up when its
// context ends, with the context's error, and the holder is unaffected.
func TestLockWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := open(t, dir, produce.Options{})
	defer closeA(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := produce.OpenContext(ctx, dir, produce.Options{Wait: true}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("OpenContext: %v, want the deadline", err)
	}
	idem(t, a, -1, 0, 1, false)
}

// TestNoWriteThroughLinkedPartition (issue 24 item 10): a partition
// directory that is a symbolic link is read through by readers but never
// written through: Open refuses it and the target is untouched.
func TestNoWriteThroughLinkedPartition(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "elsewhere")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(root, "logs")
	os.Mkdir(logDir, 0o755)
	link := filepath.Join(logDir, "t-0")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	wantOpenRefused(t, link, partition.ErrLinkedDir, target, 0)
}

// wantOpenRefused checks that produce.Open(dir) fails with want, naming
// dir, and that untouched still holds exactly entries entries.
func wantOpenRefused(t *testing.T, dir string, want error, untouched string, entries int) {
	t.Helper()
	a, err := produce.Open(dir, produce.Options{})
	if err == nil {
		a.Close()
		t.Fatalf("Open of %s succeeded", dir)
	}
	if !errors.Is(err, want) || !strings.Contains(err.Error(), dir) {
		t.Errorf("error %q, want %v naming %s", err, want, dir)
	}
	if des, _ := os.ReadDir(untouched); len(des) != entries {
		t.Errorf("%s holds %d entries, want %d", untouched, len(des), entries)
	}
}

// TestOpenRefusesNonPartitionDir: an existing directory that holds files
// but none of a partition's (a log dir given for a partition, /etc) is
// refused and left as it was; an empty one is a new partition.
func TestOpenRefusesNonPartitionDir(t *testing.T) {
	logDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(logDir, "meta.properties"), []byte("node.id=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(logDir, "orders-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantOpenRefused(t, logDir, produce.ErrNotPartitionDir, logDir, 2)
	a, err := produce.Open(filepath.Join(logDir, "orders-0"), produce.Options{})
	if err != nil {
		t.Fatalf("Open of an empty directory: %v", err)
	}
	a.Close()
}

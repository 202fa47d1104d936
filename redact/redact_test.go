package redact

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/internal/verifytest"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
	"github.com/klog-dev/klog/verify"
)

// secret collects what redaction must hide: every key, value and header
// value of 8 bytes or more in a partition directory's logs.
func secrets(t *testing.T, dir string) [][]byte {
	t.Helper()
	var out [][]byte
	seen := map[string]bool{}
	add := func(b []byte) {
		if len(b) >= 8 && !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, bytes.Clone(b))
		}
	}
	each(t, dir, func(b *format.Batch, r *format.Record) {
		if b.IsControl() {
			return
		}
		add(r.Key)
		add(r.Value)
		for _, h := range r.Headers {
			add(h.Value)
		}
	})
	return out
}

// each calls fn for every decodable record of every .log in dir.
func each(t *testing.T, dir string, fn func(*format.Batch, *format.Record)) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, p := range logs {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		sc := format.NewScanner(f, st.Size(), format.ScanOptions{})
		var rr format.RecordReader
		for {
			b, err := sc.Next()
			if err != nil {
				if sc.Done() {
					break
				}
				continue
			}
			if rr.Reset(b) != nil {
				continue
			}
			for {
				var r format.Record
				if err := rr.Next(&r); err != nil {
					break
				}
				fn(b, &r)
			}
		}
		f.Close()
	}
}

type batchHead struct {
	base, last, maxTs, baseTs, pid int64
	epoch, count, seq              int32
	attrs, pepoch                  int16
	magic                          int8
	valid                          bool
}

func heads(t *testing.T, dir string) []batchHead {
	t.Helper()
	var out []batchHead
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, p := range logs {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		sc := format.NewScanner(f, st.Size(), format.ScanOptions{})
		for {
			b, err := sc.Next()
			if err != nil {
				if sc.Done() {
					break
				}
				continue
			}
			out = append(out, batchHead{b.BaseOffset, b.LastOffset(), b.MaxTimestamp, b.BaseTimestamp, b.ProducerID,
				b.PartitionLeaderEpoch, b.RecordCount, b.BaseSequence, b.Attributes, b.ProducerEpoch, b.Magic, b.Valid()})
		}
		f.Close()
	}
	return out
}

// producedPartition writes a partition with random keys, values and
// headers in every codec, idempotent and transactional batches (with
// markers) and several segments.
func producedPartition(t testing.TB, dir string, records int) {
	a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever, SegmentBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	word := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return b
	}
	codecs := []format.Compression{format.CompressionNone, format.CompressionGzip, format.CompressionSnappy, format.CompressionLZ4, format.CompressionZstd}
	for i := 0; i < records; {
		n := 1 + rng.IntN(20)
		recs := make([]format.Record, n)
		for j := range recs {
			recs[j] = format.Record{Key: word(8 + rng.IntN(20)), Value: word(8 + rng.IntN(300)),
				Headers: []format.Header{{Key: []byte("trace"), Value: word(8 + rng.IntN(16))}}}
		}
		pb := &produce.Batch{Records: recs, Compression: codecs[i%len(codecs)]}
		if i%3 == 1 {
			pb.Producer = &produce.Producer{ID: 7}
		}
		if _, err := a.Append(pb); err != nil {
			t.Fatal(err)
		}
		i += n
	}
}

func TestRedactHidesEverySecret(t *testing.T) {
	root := filepath.Join("..", "testdata", "segments")
	produced := filepath.Join(t.TempDir(), "orders-0")
	producedPartition(t, produced, 3000)
	dirs := []string{produced}
	for _, sub := range []string{"kafka-written", "generated"} {
		des, err := os.ReadDir(filepath.Join(root, sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, de := range des {
			p := filepath.Join(root, sub, de.Name())
			if logs, _ := filepath.Glob(filepath.Join(p, "*.log")); de.IsDir() && len(logs) > 0 {
				dirs = append(dirs, p)
			}
		}
	}
	dirs = append(dirs, filepath.Join(root, "kafka-written", "unifiedlog-producer", "topic-0"),
		filepath.Join(root, "kafka-written", "coordinator", "__consumer_offsets-0"))
	for _, mode := range []Mode{Hash, Zero, Drop} {
		for _, src := range dirs {
			name := strconv.Itoa(int(mode)) + "/" + filepath.Base(src)
			t.Run(name, func(t *testing.T) {
				dst := filepath.Join(t.TempDir(), "out")
				res, err := Partition(src, dst, Options{Mode: mode, HashKey: []byte("k")})
				if err != nil {
					t.Fatal(err)
				}
				// No secret anywhere in the output: every byte of every
				// file is searched.
				secs := secrets(t, src)
				des, _ := os.ReadDir(dst)
				for _, de := range des {
					data, err := os.ReadFile(filepath.Join(dst, de.Name()))
					if err != nil {
						t.Fatal(err)
					}
					for _, s := range secs {
						if bytes.Contains(data, s) {
							t.Fatalf("%s holds a source value %q", de.Name(), s)
						}
					}
				}
				// Batch layout, offsets, producer fields, epochs kept;
				// validity the same as the source's.
				hs, hd := heads(t, src), heads(t, dst)
				if len(hs) != len(hd) {
					t.Fatalf("%d batches, source %d", len(hd), len(hs))
				}
				for i := range hs {
					a, b := hs[i], hd[i]
					if res.ZeroedBatches == 0 && a != b {
						t.Fatalf("batch %d: %+v, source %+v", i, b, a)
					}
					if a.valid != b.valid {
						t.Fatalf("batch %d: valid %v, source %v", i, b.valid, a.valid)
					}
				}
			})
		}
	}
}

// TestRedactVerifiesClean: a clean source gives a copy klog verify finds
// clean (CRCs recomputed, indexes rebuilt); a source with a flipped CRC
// gives a copy with the same finding.
func TestRedactVerifiesClean(t *testing.T) {
	src := filepath.Join(t.TempDir(), "orders-0")
	producedPartition(t, src, 2000)
	for _, c := range []struct {
		name string
		src  string
		bad  bool
	}{
		{"produced", src, false},
		{"kafka-written transactions", filepath.Join("..", "testdata", "segments", "kafka-written", "v2-transactions"), false},
		{"crc flipped", filepath.Join("..", "testdata", "segments", "generated", "corrupt-crc-flipped"), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "orders-0")
			res, err := Partition(c.src, dst, Options{Mode: Hash})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := verifytest.Run(context.Background(), []string{dst}, verify.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if c.bad != (rep.Findings() > 0) {
				for _, f := range rep.Files {
					t.Log(f.Path, f.Problems)
				}
				t.Fatalf("findings %d, want bad=%v", rep.Findings(), c.bad)
			}
			if c.bad && res.CorruptBatches == 0 {
				t.Error("no corrupt batch counted")
			}
		})
	}
}

func TestRedactRefusesNonEmptyOutput(t *testing.T) {
	dst := t.TempDir()
	if err := os.WriteFile(filepath.Join(dst, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Partition(filepath.Join("..", "testdata", "segments", "kafka-written", "v2-none"), dst, Options{})
	if err == nil {
		t.Fatal("wrote into a non-empty directory")
	}
	if _, err := Partition(filepath.Join(t.TempDir(), "missing"), filepath.Join(t.TempDir(), "o"), Options{}); err == nil || errors.Is(err, io.EOF) {
		t.Fatal("no error for a missing source")
	}
}

// TestRedactRefusesLinkedOutput: an output directory that is a symbolic
// link to an empty directory is refused and nothing is written at its
// target (before, the copy went through the link).
func TestRedactRefusesLinkedOutput(t *testing.T) {
	target := t.TempDir()
	dst := filepath.Join(t.TempDir(), "out")
	if err := os.Symlink(target, dst); err != nil {
		t.Fatal(err)
	}
	_, err := Partition(filepath.Join("..", "testdata", "segments", "kafka-written", "v2-none"), dst, Options{})
	if !errors.Is(err, partition.ErrLinkedDir) {
		t.Fatalf("err %v, want partition.ErrLinkedDir", err)
	}
	if des, _ := os.ReadDir(target); len(des) != 0 {
		t.Errorf("written through the link: %d files at its target", len(des))
	}
}

// TestHashKeepsEquality: equal inputs hash equal, different ones differ,
// and the length is kept.
func TestHashKeepsEquality(t *testing.T) {
	r := &redactor{opts: Options{Mode: Hash, HashKey: []byte("key")}}
	r.mac = newMAC(r.opts.HashKey)
	a := r.replace([]byte("a value longer than thirty-two bytes, for the counter"))
	b := r.replace([]byte("a value longer than thirty-two bytes, for the counter"))
	c := r.replace([]byte("another value"))
	if !bytes.Equal(a, b) || bytes.Equal(a[:13], c) || len(a) != 53 || len(c) != 13 {
		t.Fatalf("a %x b %x c %x", a, b, c)
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		name          string
		kind          fileKind
		base, variant string
	}{
		{"00000000000000000000.log", fileLog, "00000000000000000000", ""},
		{"00000000000000000042.log.deleted", fileLog, "00000000000000000042", ".deleted"},
		{"00000000000000000042.log.swap", fileLog, "00000000000000000042", ".swap"},
		{"00000000000000000042.index", fileIndex, "00000000000000000042", ""},
		{"00000000000000000042.timeindex.cleaned", fileIndex, "00000000000000000042", ".cleaned"},
		{"00000000000000000042.txnindex", fileMeta, "00000000000000000042", ""},
		{"00000000000000000042.snapshot", fileMeta, "00000000000000000042", ""},
		{"leader-epoch-checkpoint", fileMeta, "", ""},
		{"partition.metadata", fileMeta, "", ""},
		{"00000000000000000100-0000000003.checkpoint", fileSnapshotLog, "", ""},
		{"00000000000000000000.log.data.txt", fileUnknown, "", ""},
		{"notes.txt", fileUnknown, "", ""},
	}
	for _, c := range cases {
		k, b, v := classify(c.name)
		if k != c.kind || b != c.base || v != c.variant {
			t.Errorf("%s: (%d, %q, %q), want (%d, %q, %q)", c.name, k, b, v, c.kind, c.base, c.variant)
		}
	}
}

// TestRedactOtherFiles: a .log.deleted is redacted (with its indexes
// rebuilt under the same suffix), unknown files are left out unless
// CopyUnknown, Kafka's metadata files are copied byte for byte.
func TestRedactOtherFiles(t *testing.T) {
	src := filepath.Join(t.TempDir(), "orders-0")
	producedPartition(t, src, 200)
	logs, _ := filepath.Glob(filepath.Join(src, "*.log"))
	data, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "00000000000000999999.log.deleted"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "notes.txt"), []byte("secret notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	secs := secrets(t, src)
	for _, copyUnknown := range []bool{false, true} {
		dst := filepath.Join(t.TempDir(), "out")
		res, err := Partition(src, dst, Options{Mode: Zero, CopyUnknown: copyUnknown})
		if err != nil {
			t.Fatal(err)
		}
		deleted, err := os.ReadFile(filepath.Join(dst, "00000000000000999999.log.deleted"))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secs {
			if bytes.Contains(deleted, s) {
				t.Fatalf(".log.deleted holds %q", s)
			}
		}
		if _, err := os.Stat(filepath.Join(dst, "00000000000000999999.index.deleted")); err != nil {
			t.Error("no rebuilt .index.deleted:", err)
		}
		_, err = os.Stat(filepath.Join(dst, "notes.txt"))
		if copyUnknown != (err == nil) {
			t.Errorf("copyUnknown %v: notes.txt present %v (skipped %v)", copyUnknown, err == nil, res.Skipped)
		}
		for _, name := range res.Copied {
			a, _ := os.ReadFile(filepath.Join(src, name))
			b, _ := os.ReadFile(filepath.Join(dst, name))
			if !bytes.Equal(a, b) {
				t.Errorf("%s changed", name)
			}
		}
	}
}

// TestRedactKeepsDamagedLayout: bytes after the last whole batch keep
// their length (at an anchored position the 17 bytes the scanner parsed as
// they are, zeros after) and are streamed, not held in memory.
func TestRedactKeepsDamagedLayout(t *testing.T) {
	src := filepath.Join(t.TempDir(), "orders-0")
	producedPartition(t, src, 100)
	logs, _ := filepath.Glob(filepath.Join(src, "*.log"))
	last := logs[len(logs)-1]
	data, _ := os.ReadFile(last)
	// A second copy of the segment's bytes with a broken size field:
	// everything from there on is a tail full of payloads.
	tail := bytes.Clone(data)
	binary.BigEndian.PutUint32(tail[8:], 3)
	data = append(data, tail...)
	if err := os.WriteFile(last, data, 0o644); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "out")
	res, err := Partition(src, dst, Options{Mode: Hash})
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(filepath.Join(dst, filepath.Base(last)))
	if err != nil {
		t.Fatal(err)
	}
	// Compressed batches before it may change size when recompressed;
	// the tail keeps its own.
	if res.TrailingBytes != int64(len(tail)) || len(out) < len(tail) {
		t.Fatalf("%d bytes out, trailing %d of %d", len(out), res.TrailingBytes, len(tail))
	}
	cut := len(out) - len(tail)
	if !bytes.Equal(out[cut:cut+17], tail[:17]) || bytes.ContainsFunc(out[cut+17:], func(r rune) bool { return r != 0 }) {
		t.Fatal("tail not kept as its 17-byte framing plus zeros")
	}
	if !res.Damaged() {
		t.Fatal("damage not reported")
	}
}

// TestRedactStopsOnSignal: a signal stops the copy between batches (it ran
// to the CLI's fallback exit, "did not stop within a second"), and the
// error says so; the output directory then holds an incomplete copy.
func TestRedactStopsOnSignal(t *testing.T) {
	src := filepath.Join(t.TempDir(), "t-0")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "testdata", "segments", "kafka-written", "v2-none", "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "00000000000000000000.log"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The first check (the file) passes, the one before the first batch
	// sees the signal.
	res, err := PartitionContext(&klogtest.CancelAfter{Context: context.Background(), N: 1}, src, filepath.Join(t.TempDir(), "o"), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res == nil || res.Batches != 0 {
		t.Fatalf("result %+v, want no batch copied", res)
	}
	// Uncancelled, the same copy is whole (4 batches).
	res, err = PartitionContext(context.Background(), src, filepath.Join(t.TempDir(), "o"), Options{})
	if err != nil || res.Batches != 4 {
		t.Fatalf("uncancelled: %+v, %v; want 4 batches", res, err)
	}
}

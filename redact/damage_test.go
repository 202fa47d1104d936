package redact

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/produce"
	"golang.org/x/sys/unix"
)

// windows8 returns every 8-byte window of every key, value and header
// value in dir's logs (of the first 2,000 records: a leak is a run of
// bytes, and large partitions would make the set slow to build): what a
// copy must not hold any of.
func windows8(t *testing.T, dir string) map[uint64]bool {
	t.Helper()
	out := map[uint64]bool{}
	n := 0
	add := func(b []byte) {
		for i := 0; i+8 <= len(b) && n < 2000*3; i++ {
			out[binary.LittleEndian.Uint64(b[i:])] = true
		}
		n++
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

// leaked returns the first 8-byte window of a source payload in any file
// under dir, "" when there is none.
func leaked(t *testing.T, dir string, secret map[uint64]bool) string {
	t.Helper()
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		data, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+8 <= len(data); i++ {
			if secret[binary.LittleEndian.Uint64(data[i:])] {
				return de.Name() + " at byte " + strconv.Itoa(i) + ": " + strconv.Quote(string(data[i:i+8]))
			}
		}
	}
	return ""
}

// plainPartition writes one segment of uncompressed batches whose values
// are letters (a leak shows as plain text), and returns its log's path and
// the batches' positions.
func plainPartition(t *testing.T, dir string) (string, []int64) {
	t.Helper()
	a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	word := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return b
	}
	for i := 0; i < 12; i++ {
		recs := make([]format.Record, 1+rng.IntN(6))
		for j := range recs {
			recs[j] = format.Record{Key: word(8 + rng.IntN(12)), Value: word(20 + rng.IntN(120)),
				Headers: []format.Header{{Key: []byte("h"), Value: word(8 + rng.IntN(12))}}}
		}
		if _, err := a.Append(&produce.Batch{Records: recs, Compression: format.CompressionNone}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	f, size, err := safeio.OpenSized(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := format.NewScanner(f, size, format.ScanOptions{})
	var pos []int64
	for b, err := range sc.All() {
		if err != nil {
			t.Fatal(err)
		}
		pos = append(pos, b.Pos)
	}
	return logs[0], pos
}

// TestRedactCorruptLengthLeaksNothing: whatever one batch's length field
// says, no byte of a key, value or header value reaches the copy, in any
// mode: after a corrupted length the scanner lands in the middle of record
// values, and those bytes are zeroed whole rather than kept as a header.
// Before, they were copied as a 61-byte (or 17-byte) "header", and the
// bytes after the last whole batch kept their first 61.
func TestRedactCorruptLengthLeaksNothing(t *testing.T) {
	src := filepath.Join(t.TempDir(), "t-0")
	log, pos := plainPartition(t, src)
	orig, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	secret := windows8(t, src)
	for i, p := range pos {
		length := int64(binary.BigEndian.Uint32(orig[p+8:]))
		for _, l := range []int64{length - 1, length - 13, length / 2, length + 1, length + 29, 3, int64(len(orig)) - p - 12 + 7} {
			data := bytes.Clone(orig)
			binary.BigEndian.PutUint32(data[p+8:], uint32(l))
			if err := os.WriteFile(log, data, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, mode := range []Mode{Hash, Zero, Drop} {
				dst := filepath.Join(t.TempDir(), "out")
				res, err := Partition(src, dst, Options{Mode: mode, HashKey: []byte("k")})
				if err != nil {
					t.Fatalf("batch %d length %d: %v", i, l, err)
				}
				if where := leaked(t, dst, secret); where != "" {
					t.Fatalf("batch %d at byte %d, length %d -> %d, mode %v: a source payload reached the copy: %s (result %+v)",
						i, p, length, l, mode, where, res)
				}
				if !res.Damaged() {
					t.Errorf("batch %d length %d: the damage is not reported: %+v", i, l, res)
				}
			}
		}
	}
	os.WriteFile(log, orig, 0o644)
}

// TestRedactRefusesLinkedSources: a symlinked or non-regular .log (or
// other file) in the source is refused, never read: its target's bytes do
// not reach the copy. Before, a symlinked .log was followed and the first
// 61 bytes of its target landed in the copy.
func TestRedactRefusesLinkedSources(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(t *testing.T, path string)
	}{
		{"symlinked log", func(t *testing.T, path string) {
			target := filepath.Join(t.TempDir(), "shadow")
			os.WriteFile(target, bytes.Repeat([]byte("root:$6$saltsalt$hashhashhash:19000:0:99999:7:::\n"), 40), 0o600)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"fifo log", func(t *testing.T, path string) {
			if err := unix.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "t-0")
			producedPartition(t, src, 20)
			c.make(t, filepath.Join(src, "00000000000000099999.log"))
			dst := filepath.Join(t.TempDir(), "out")
			_, err := Partition(src, dst, Options{Mode: Hash})
			if err == nil {
				t.Fatal("no error")
			}
			data, _ := os.ReadFile(filepath.Join(dst, "00000000000000099999.log"))
			if bytes.Contains(data, []byte("root:")) {
				t.Fatalf("the link's target reached the copy: %q", data)
			}
		})
	}
}

// shrinker truncates path to size the n-th time Err is asked (redact
// asks before every batch): the source shrinks while it is copied.
type shrinker struct {
	context.Context
	n    int
	path string
	size int64
}

func (s *shrinker) Err() error {
	if s.n--; s.n == 0 {
		os.Truncate(s.path, s.size)
	}
	return nil
}

// TestRedactSourceShrinks: a source truncated while it is copied is an
// error (*safeio.ShrankError, I/O trouble), not a shorter copy. Before, the
// copy ended where the file now ended and redact exited 0.
func TestRedactSourceShrinks(t *testing.T) {
	src := filepath.Join(t.TempDir(), "t-0")
	log, pos := plainPartition(t, src)
	for _, cut := range []int64{pos[6], pos[6] + 30} {
		data, _ := os.ReadFile(log)
		ctx := &shrinker{Context: context.Background(), n: 5, path: log, size: cut}
		_, err := PartitionContext(ctx, src, filepath.Join(t.TempDir(), "out"), Options{Mode: Zero})
		var se *safeio.ShrankError
		if !errors.As(err, &se) {
			t.Errorf("cut at %d: err = %v, want a *safeio.ShrankError", cut, err)
		}
		os.WriteFile(log, data, 0o644)
	}
}

// bigBatch writes one batch of n records of 64-byte letter values with
// codec, and returns the log's path.
func bigBatch(t *testing.T, dir string, codec format.Compression, n int) string {
	t.Helper()
	a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	recs := make([]format.Record, n)
	for i := range recs {
		v := make([]byte, 64)
		for j := range v {
			v[j] = byte('a' + rng.IntN(26))
		}
		recs[i] = format.Record{Value: v}
	}
	if _, err := a.Append(&produce.Batch{Records: recs, Compression: codec}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	return logs[0]
}

// TestRedactLargeBatchStreams: a batch whose redacted form is larger than
// what redact holds in memory (spillAt) is written as it is encoded and
// its header patched in place: the copy has the same batch, a right CRC,
// and no payload. One that fails near its end, after part of it was
// written, is cut back and written as undecodable.
func TestRedactLargeBatchStreams(t *testing.T) {
	for _, codec := range []format.Compression{format.CompressionLZ4, format.CompressionZstd, format.CompressionNone} {
		t.Run(codec.String(), func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "t-0")
			bigBatch(t, src, codec, 120_000) // 8 MiB of records
			dst := filepath.Join(t.TempDir(), "out")
			res, err := Partition(src, dst, Options{Mode: Hash, HashKey: []byte("k")})
			if err != nil {
				t.Fatal(err)
			}
			if res.Damaged() || res.Records != 120_000 {
				t.Fatalf("result %+v", res)
			}
			hs, hd := heads(t, src), heads(t, dst)
			if len(hd) != 1 || hd[0] != hs[0] || !hd[0].valid {
				t.Fatalf("copy's batch %+v, source %+v", hd, hs)
			}
			if w := leaked(t, dst, windows8(t, src)); w != "" {
				t.Fatalf("payload in the copy: %s", w)
			}
		})
	}
	t.Run("fails after spilling", func(t *testing.T) {
		src := filepath.Join(t.TempDir(), "t-0")
		log := bigBatch(t, src, format.CompressionNone, 120_000)
		data, _ := os.ReadFile(log)
		// The last record's header count (its last byte): one header, which
		// is not there.
		data[len(data)-1] = 0x02
		os.WriteFile(log, data, 0o644)
		secret := windows8(t, src)
		dst := filepath.Join(t.TempDir(), "out")
		res, err := Partition(src, dst, Options{Mode: Hash, HashKey: []byte("k")})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := os.ReadFile(filepath.Join(dst, filepath.Base(log)))
		if res.ZeroedBatches != 1 || len(out) != len(data) || !bytes.Equal(out[:61], data[:61]) ||
			bytes.ContainsFunc(out[61:], func(r rune) bool { return r != 0 }) {
			t.Fatalf("result %+v; copy of %d bytes (source %d), want the header and zeros", res, len(out), len(data))
		}
		if w := leaked(t, dst, secret); w != "" {
			t.Fatalf("payload in the copy: %s", w)
		}
	})
}

// TestRedactLeavesOutImplausibleMetadata: a producer snapshot or
// checkpoint larger than any real one (a sparse 2 GiB file) is not copied
// as Kafka metadata (it would write gigabytes of zeros into the copy): it
// is left out as an unknown file is.
func TestRedactLeavesOutImplausibleMetadata(t *testing.T) {
	src := filepath.Join(t.TempDir(), "t-0")
	producedPartition(t, src, 20)
	for _, name := range []string{"00000000000000000020.snapshot", "leader-epoch-checkpoint"} {
		f, err := os.OpenFile(filepath.Join(src, name), os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.Truncate(2 << 30)
		f.Close()
	}
	dst := filepath.Join(t.TempDir(), "out")
	res, err := Partition(src, dst, Options{Mode: Zero})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"00000000000000000020.snapshot", "leader-epoch-checkpoint"} {
		if _, err := os.Lstat(filepath.Join(dst, name)); err == nil {
			t.Errorf("%s (2 GiB) was copied", name)
		}
		if !slices.Contains(res.Skipped, name) {
			t.Errorf("%s is not listed as left out: %v", name, res.Skipped)
		}
	}
}

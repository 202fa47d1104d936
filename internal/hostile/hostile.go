// Package hostile builds, at test time, the inputs klog must survive:
// files whose fields claim huge lengths and counts, endless varints,
// offset-delta and decompression bombs with valid CRCs, sparse multi-GiB
// indexes (made with truncate, costing nothing on disk), symlinks and
// unreadable directories. Every batch carries a correct CRC, so that the
// bytes get past the first check and reach the decoders.
package hostile

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"

	"github.com/klog-dev/klog/format"
)

// Case is one hostile input: a partition directory (or a log directory for
// Unreadable), and what it is meant to break.
type Case struct {
	Name string
	// Dir is the partition directory (topic-0) or, for log-dir cases, the
	// log directory.
	Dir string
	// LogDir marks a case whose Dir is a log directory.
	LogDir bool
	// Corrupt marks data a checker must report (verify exits 1 or 2,
	// never 0).
	Corrupt bool
	// Unreadable marks a case holding a directory no one but root can
	// read: meaningful only when the commands run as another user.
	Unreadable bool
}

// Sizes of the bombs: large enough that keeping one thing per record, or
// decompressing per job, blows a 256 MiB budget; small enough to build and
// read in seconds.
const (
	BombRecords   = 2_000_000 // records in the offset-delta bomb (7 bytes each)
	ZstdBombBytes = 1 << 30   // what each zstd bomb claims to decompress to
	ZstdBombFiles = 16        // bombs in one partition, for --jobs 16
	SparseIndex   = 2 << 30   // sparse .index/.timeindex/.snapshot/checkpoint
	SparseTxn     = 512 << 20 // zero-filled .txnindex
)

// StoredBombRecords is the size of the offset-delta bomb stored in
// testdata/hostile (the test-time one is larger).
const StoredBombRecords = 200_000

// Dense returns the hostile segments small enough to store in
// testdata/hostile, by name: each is a whole .log.
func Dense() map[string][]byte {
	bomb, err := OffsetDeltaBomb(StoredBombRecords)
	if err != nil {
		panic(err) // gzip into memory does not fail
	}
	huge := Batch(0, 0, 0, 1, record(0, nil))
	huge[8], huge[9], huge[10], huge[11] = 0x7f, 0xff, 0xff, 0xf0
	return map[string][]byte{
		"huge-length":       huge,
		"huge-count":        Batch(0, 0, 0, 1<<31-1, record(0, []byte("v"))),
		"endless-varint":    Batch(0, 0, 0, 1, bytes.Repeat([]byte{0xff}, 300)),
		"offset-delta-bomb": bomb,
		"zstd-bomb":         Batch(0, int16(format.CompressionZstd), 0, 1, ZstdRLEFrame(ZstdBombBytes)),
		"junk":              junk(4096),
	}
}

func junk(n int) []byte {
	b := make([]byte, n)
	x := uint64(0x9e3779b97f4a7c15)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}

// Sizes are the sizes of the cases that cost time to read: Full is the
// corpus .ci/run reads; Small is the corpus of go test ./... off CI.
type Sizes struct {
	SparseIndex   int64 // sparse .index/.timeindex/.snapshot/checkpoints
	SparseTxn     int64 // zero-filled .txnindex
	ZstdBombFiles int   // zstd bombs in one partition
}

var (
	// Full is the corpus at the sizes of the constants above.
	Full = Sizes{SparseIndex: SparseIndex, SparseTxn: SparseTxn, ZstdBombFiles: ZstdBombFiles}
	// Small keeps the sparse indexes, snapshot and checkpoints over the
	// 256 MiB memory promise (512 MiB: a reader that took one whole still
	// fails), and four zstd bombs (each still claims 1 GiB). Its
	// .txnindex is 64 MiB: every 34 zero bytes of it are an aborted
	// transaction that dump prints, and the 15.8 million lines of the full
	// one (2.5 GB of JSON, each line checked) were most of go test's time;
	// .ci/run reads the full one.
	Small = Sizes{SparseIndex: 512 << 20, SparseTxn: 64 << 20, ZstdBombFiles: 4}
)

// Build writes every case under root at the Full sizes and returns them.
func Build(root string) ([]Case, error) { return BuildSized(root, Full) }

// BuildSized writes every case under root at the given sizes.
func BuildSized(root string, sz Sizes) ([]Case, error) {
	var cases []Case
	add := func(name string, corrupt bool, fn func(dir string) error) error {
		dir := filepath.Join(root, name, "topic-0")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := fn(dir); err != nil {
			return err
		}
		cases = append(cases, Case{Name: name, Dir: dir, Corrupt: corrupt})
		return nil
	}
	seg := func(dir string, base int64) string {
		return filepath.Join(dir, fileName(base, ".log"))
	}
	steps := []struct {
		name    string
		corrupt bool
		fn      func(dir string) error
	}{
		{"huge-length", true, func(dir string) error {
			// A header claiming a 2 GiB batch, then nothing.
			b := Batch(0, 0, 0, 1, record(0, nil))
			binary.BigEndian.PutUint32(b[8:], 0x7ffffff0)
			return os.WriteFile(seg(dir, 0), b, 0o644)
		}},
		{"huge-count", true, func(dir string) error {
			b := Batch(0, 0, 0, 1<<31-1, record(0, []byte("v")))
			return os.WriteFile(seg(dir, 0), b, 0o644)
		}},
		{"endless-varint", true, func(dir string) error {
			b := Batch(0, 0, 0, 1, bytes.Repeat([]byte{0xff}, 300))
			return os.WriteFile(seg(dir, 0), b, 0o644)
		}},
		{"offset-delta-bomb", true, func(dir string) error {
			b, err := OffsetDeltaBomb(BombRecords)
			if err != nil {
				return err
			}
			return os.WriteFile(seg(dir, 0), b, 0o644)
		}},
		{"zstd-bombs", true, func(dir string) error {
			for i := 0; i < sz.ZstdBombFiles; i++ {
				b := Batch(int64(i), int16(format.CompressionZstd), 0, 1, ZstdRLEFrame(ZstdBombBytes))
				if err := os.WriteFile(seg(dir, int64(i)), b, 0o644); err != nil {
					return err
				}
			}
			return nil
		}},
		{"junk", true, func(dir string) error {
			// Bytes that look like nothing: offsets found in them must
			// never be reported as garbage numbers.
			return os.WriteFile(seg(dir, 0), junk(4096), 0o644)
		}},
		{"sparse-indexes", true, func(dir string) error {
			// A valid segment beside sparse, zero-filled index files.
			if err := os.WriteFile(seg(dir, 0), Batch(0, 0, 0, 1, record(0, []byte("v"))), 0o644); err != nil {
				return err
			}
			for name, size := range map[string]int64{
				fileName(0, ".index"):     sz.SparseIndex,
				fileName(0, ".timeindex"): sz.SparseIndex + 4, // not a multiple of 12
				fileName(0, ".txnindex"):  sz.SparseTxn,
				fileName(0, ".snapshot"):  sz.SparseIndex,
				"leader-epoch-checkpoint": sz.SparseIndex,
				"partition.metadata":      sz.SparseIndex,
			} {
				if err := sparse(filepath.Join(dir, name), size); err != nil {
					return err
				}
			}
			return nil
		}},
		{"symlinked-index", false, func(dir string) error {
			if err := os.WriteFile(seg(dir, 0), Batch(0, 0, 0, 1, record(0, []byte("v"))), 0o644); err != nil {
				return err
			}
			outside := filepath.Join(filepath.Dir(filepath.Dir(dir)), "outside")
			if err := os.WriteFile(outside, make([]byte, 8), 0o644); err != nil {
				return err
			}
			return os.Symlink(outside, filepath.Join(dir, fileName(0, ".index")))
		}},
	}
	for _, s := range steps {
		if err := add(s.name, s.corrupt, s.fn); err != nil {
			return nil, err
		}
	}
	// A log directory with a good partition, an unreadable partition and
	// an unreadable lost+found.
	ld := filepath.Join(root, "unreadable")
	for _, p := range []string{"good-0", "locked-0", "lost+found"} {
		if err := os.MkdirAll(filepath.Join(ld, p), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(seg(filepath.Join(ld, "good-0"), 0), Batch(0, 0, 0, 1, record(0, []byte("v"))), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(seg(filepath.Join(ld, "locked-0"), 0), Batch(0, 0, 0, 1, record(0, []byte("v"))), 0o644); err != nil {
		return nil, err
	}
	for _, p := range []string{"locked-0", "lost+found"} {
		if err := os.Chmod(filepath.Join(ld, p), 0); err != nil {
			return nil, err
		}
	}
	cases = append(cases, Case{Name: "unreadable", Dir: ld, LogDir: true, Unreadable: true})
	return cases, nil
}

func fileName(base int64, suffix string) string {
	s := []byte("00000000000000000000")
	b := []byte(itoa(base))
	copy(s[len(s)-len(b):], b)
	return string(s) + suffix
}

func itoa(v int64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

func sparse(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// record encodes one v2 record with the given offset delta, no key and
// value v (nil: null), no headers.
func record(delta int32, v []byte) []byte {
	body := []byte{0}                              // attributes
	body = binary.AppendVarint(body, 0)            // timestamp delta
	body = binary.AppendVarint(body, int64(delta)) // offset delta
	body = binary.AppendVarint(body, -1)           // null key
	if v == nil {
		body = binary.AppendVarint(body, -1)
	} else {
		body = binary.AppendVarint(body, int64(len(v)))
		body = append(body, v...)
	}
	body = binary.AppendVarint(body, 0) // headers
	return append(binary.AppendVarint(nil, int64(len(body))), body...)
}

// Batch builds a v2 batch header around records (already encoded, and
// compressed when attrs says so) with count and lastDelta as given, and
// computes its batch length and CRC-32C.
func Batch(base int64, attrs int16, lastDelta, count int32, records []byte) []byte {
	b := make([]byte, format.BatchHeaderSize, format.BatchHeaderSize+len(records))
	binary.BigEndian.PutUint64(b[0:], uint64(base))
	binary.BigEndian.PutUint32(b[12:], 0) // partition leader epoch
	b[16] = byte(format.MagicV2)
	binary.BigEndian.PutUint16(b[21:], uint16(attrs))
	binary.BigEndian.PutUint32(b[23:], uint32(lastDelta))
	binary.BigEndian.PutUint64(b[27:], 1700000000000)
	binary.BigEndian.PutUint64(b[35:], 1700000000000)
	binary.BigEndian.PutUint64(b[43:], ^uint64(0)) // producer id -1
	binary.BigEndian.PutUint16(b[51:], 0xffff)     // producer epoch -1
	binary.BigEndian.PutUint32(b[53:], 0xffffffff) // base sequence -1
	binary.BigEndian.PutUint32(b[57:], uint32(count))
	b = append(b, records...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-format.LogOverhead))
	binary.BigEndian.PutUint32(b[17:], format.ChecksumC(b[21:]))
	return b
}

// OffsetDeltaBomb is one gzip batch with a valid CRC holding n records,
// all at offset delta 0 (a few hundred KB on disk).
func OffsetDeltaBomb(n int) ([]byte, error) {
	var raw bytes.Buffer
	var z bytes.Buffer
	w, err := gzip.NewWriterLevel(&z, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	rec := record(0, nil)
	for i := 0; i < n; i++ {
		raw.Write(rec)
		if raw.Len() > 1<<20 {
			w.Write(raw.Bytes())
			raw.Reset()
		}
	}
	w.Write(raw.Bytes())
	if err := w.Close(); err != nil {
		return nil, err
	}
	return Batch(0, int16(format.CompressionGzip), 0, int32(n), z.Bytes()), nil
}

// ZstdRLEFrame is a zstd frame (RFC 8878) of RLE blocks that decompresses
// to size zero bytes, in about size/32768 bytes, with no content size in
// its header.
func ZstdRLEFrame(size int64) []byte {
	const block = 128 << 10
	f := []byte{0x28, 0xb5, 0x2f, 0xfd}
	f = append(f, 0x00)  // frame header descriptor: no content size, no checksum
	f = append(f, 10<<3) // window descriptor: 1 MiB
	for size > 0 {
		n := min(size, block)
		size -= n
		h := uint32(n)<<3 | 1<<1 // RLE block
		if size == 0 {
			h |= 1 // last block
		}
		f = append(f, byte(h), byte(h>>8), byte(h>>16), 0)
	}
	return f
}

// Produce returns the record bytes of hostile produce requests for one
// partition, by name: the dense segments above and the classes a broker's
// produce path refuses (ProduceRequest.validateRecords, LogValidator), each
// with a valid CRC where the class allows one so that it reaches the check
// it is meant for. None of them may be appended.
func Produce() map[string][]byte {
	out := Dense()
	one := Batch(0, 0, 0, 1, record(0, []byte("v")))
	fix := func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[17:], format.ChecksumC(b[21:]))
		return b
	}
	clone := func() []byte { return append([]byte(nil), one...) }
	magic3 := clone()
	magic3[16] = 3
	out["magic-3"] = fix(magic3)
	magic1 := clone()
	magic1[16] = 1
	out["magic-1"] = magic1
	out["two-batches"] = append(clone(), one...)
	out["count-above-delta"] = Batch(0, 0, 0, 2, append(record(0, nil), record(1, nil)...))
	out["delta-above-count"] = Batch(0, 0, 1, 1, record(0, nil))
	out["base-offset"] = fix(append(binary.BigEndian.AppendUint64(nil, 42), one[8:]...))
	out["control"] = Batch(0, 0x20, 0, 1, record(0, nil))
	future := clone()
	binary.BigEndian.PutUint64(future[27:], 1<<62)
	binary.BigEndian.PutUint64(future[35:], 1<<62)
	out["future-timestamp"] = fix(future)
	out["records-left-over"] = Batch(0, 0, 0, 1, append(record(0, nil), 0, 0, 0))
	out["short-size"] = one[:12:12]
	out["zstd-bomb-15k"] = Batch(0, int16(format.CompressionZstd), 0, 1, ZstdRLEFrame(480<<20))
	// Under format's default cap of what one batch may decompress to:
	// decompressed in full unless the reader's cap is lower.
	out["zstd-bomb-120m"] = Batch(0, int16(format.CompressionZstd), 0, 1, ZstdRLEFrame(120<<20))
	return out
}

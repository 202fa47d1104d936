package inspect

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
)

// WhatIf recompresses the records of v2 batches with other codecs, the
// question KIP-640 asked: what would each codec store, and what would it
// cost in CPU? The codecs are the project's own (format.Compressor) at
// Kafka's default levels: gzip at Deflater's default level, lz4 with the
// fast compressor Kafka uses at its default level 9, zstd at level 3,
// snappy (no levels) in snappy-java's framing. Legacy v0/v1 batches are
// counted and skipped (zstd cannot be written in them, and Kafka 4 writes v2
// only).

// WhatIfOptions configure WhatIf.
type WhatIfOptions struct {
	Codecs []format.Compression
	// Sample is the fraction of batches recompressed (0 < Sample <= 1;
	// 0 means 1). The choice is deterministic: a hash of the file name
	// and the batch position.
	Sample        float64
	MaxBatchBytes int
}

// WhatIfCodec is one codec's answer over the sampled batches.
type WhatIfCodec struct {
	Type  string `json:"type"` // "codec"
	Codec string `json:"codec"`
	// StoredBytes is what the sampled batches would take on disk (61-byte
	// headers and compressed records); Ratio is StoredBytes over what they
	// take today, SavedBytes the difference.
	StoredBytes int64   `json:"storedBytes"`
	Ratio       float64 `json:"ratio"`
	SavedBytes  int64   `json:"savedBytes"`
	// CompressMsPerMiB and DecompressMsPerMiB are CPU milliseconds per MiB
	// of uncompressed records (this machine, one core).
	CompressMsPerMiB   float64 `json:"compressMsPerMiB"`
	DecompressMsPerMiB float64 `json:"decompressMsPerMiB"`
	Errors             int64   `json:"errors"`
}

// WhatIfReport is WhatIf's answer.
type WhatIfReport struct {
	Type   string  `json:"type"` // "whatif"
	Files  int     `json:"files"`
	Sample float64 `json:"sample"`
	// Batches are the v2 batches seen, SampledBatches those recompressed,
	// LegacyBatches the v0/v1 ones skipped, UndecodableBatches sampled
	// batches whose records could not be decompressed (left out).
	Batches            int64 `json:"batches"`
	SampledBatches     int64 `json:"sampledBatches"`
	LegacyBatches      int64 `json:"legacyBatches"`
	UndecodableBatches int64 `json:"undecodableBatches"`
	// TodayBytes is the sampled batches' size on disk, RecordBytes their
	// records uncompressed, TodayCodecs the codecs they use now.
	TodayBytes  int64         `json:"todayBytes"`
	RecordBytes int64         `json:"recordBytes"`
	TodayCodecs []string      `json:"todayCodecs"`
	Codecs      []WhatIfCodec `json:"codecs"`
}

// ParseWhatIfCodecs reads a comma-separated codec list ("zstd,lz4,none").
func ParseWhatIfCodecs(s string) ([]format.Compression, error) {
	var out []format.Compression
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		c, ok := format.ParseCompression(name)
		if !ok {
			return nil, errors.New("unknown codec " + strconv.Quote(name) + " (want none, gzip, snappy, lz4, zstd)")
		}
		for _, have := range out {
			if have == c {
				return nil, errors.New("codec " + name + " given twice")
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// whatIfPick is the deterministic sample: splitmix64 of the file's name
// hash and the batch position, below fraction*2^64.
func whatIfPick(fileHash uint64, pos int64, fraction float64) bool {
	if fraction >= 1 {
		return true
	}
	z := fileHash + uint64(pos)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11)/float64(1<<53) < fraction
}

func whatIfNameHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

type whatIfAcc struct {
	stored, errors int64
	comp, decomp   time.Duration
}

// WhatIf reads the given segment files.
func WhatIf(ctx context.Context, files []string, opts WhatIfOptions) (*WhatIfReport, error) {
	if opts.Sample <= 0 || opts.Sample > 1 {
		opts.Sample = 1
	}
	rep := &WhatIfReport{Type: "whatif", Files: len(files), Sample: opts.Sample, TodayCodecs: []string{}, Codecs: []WhatIfCodec{}}
	accs := make([]whatIfAcc, len(opts.Codecs))
	var run whatIfRun
	today := map[format.Compression]bool{}
	for _, path := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, size, err := safeio.OpenSized(path)
		if err != nil {
			return nil, err
		}
		fh := whatIfNameHash(path)
		sc := format.NewScanner(f, size, format.ScanOptions{MaxBatchBytes: opts.MaxBatchBytes})
		for {
			// Every batch: recompressing one with every codec costs far
			// more than the check, and a signal must stop a big segment.
			if err := ctx.Err(); err != nil {
				f.Close()
				return nil, err
			}
			b, err := sc.Next()
			if err != nil {
				if sc.Done() {
					break
				}
				continue
			}
			if !b.IsV2() {
				rep.LegacyBatches++
				continue
			}
			rep.Batches++
			if !whatIfPick(fh, b.Pos, opts.Sample) {
				continue
			}
			rep.SampledBatches++
			src, err := run.source(b)
			if err != nil {
				rep.UndecodableBatches++
				rep.SampledBatches--
				continue
			}
			today[b.Compression()] = true
			rep.TodayBytes += b.Size()
			rep.RecordBytes += src.size
			for i, c := range opts.Codecs {
				a := &accs[i]
				took, err := run.compress(c, src)
				a.comp += took
				if err != nil {
					a.errors++
					continue
				}
				a.stored += format.BatchHeaderSize + run.stored
				if c == format.CompressionNone {
					continue
				}
				took, err = run.roundTrip(c, src)
				a.decomp += took
				if err != nil {
					a.errors++
				}
			}
		}
		f.Close()
	}
	for c := format.CompressionNone; c <= format.CompressionZstd; c++ {
		if today[c] {
			rep.TodayCodecs = append(rep.TodayCodecs, c.String())
		}
	}
	mib := float64(rep.RecordBytes) / (1 << 20)
	for i, c := range opts.Codecs {
		a := accs[i]
		wc := WhatIfCodec{Type: "codec", Codec: c.String(), StoredBytes: a.stored, SavedBytes: rep.TodayBytes - a.stored, Errors: a.errors}
		if rep.TodayBytes > 0 {
			wc.Ratio = float64(a.stored) / float64(rep.TodayBytes)
		}
		if mib > 0 {
			wc.CompressMsPerMiB = float64(a.comp.Microseconds()) / 1000 / mib
			wc.DecompressMsPerMiB = float64(a.decomp.Microseconds()) / 1000 / mib
		}
		rep.Codecs = append(rep.Codecs, wc)
	}
	return rep, nil
}

// whatIfInMemory is the largest record stream WhatIf holds: a larger one
// (a 19-million-record batch decompresses to 133 MB) is decompressed again
// as a stream for each pass instead (memory: the codecs' windows).
const whatIfInMemory = 8 << 20

// whatIfRun holds the codecs and buffers of one run.
type whatIfRun struct {
	small  format.Decompressor // into memory, up to whatIfInMemory
	in, rt format.Decompressor // a streamed batch's records; round trips
	comp   format.Compressor
	recBuf []byte
	out    bytes.Buffer // one codec's output (none's is only counted)
	stored int64        // its size
	a, b   [64 << 10]byte
}

// whatIfSource is a batch's record stream: in memory, or opened anew for
// each pass.
type whatIfSource struct {
	mem  []byte
	open func() (io.Reader, error)
	size int64
}

func (s whatIfSource) reader() (io.Reader, error) {
	if s.open == nil {
		return bytes.NewReader(s.mem), nil
	}
	return s.open()
}

// source decompresses b's records into memory when they fit, else counts
// them through a stream (an error: the batch is undecodable).
func (w *whatIfRun) source(b *format.Batch) (whatIfSource, error) {
	region := b.Raw[format.BatchHeaderSize:]
	c := b.Compression()
	if c == format.CompressionNone {
		return whatIfSource{mem: region, size: int64(len(region))}, nil
	}
	w.small.MaxBytes = whatIfInMemory
	out, err := w.small.Decompress(c, b.Magic, region, w.recBuf[:0])
	if err == nil {
		w.recBuf = out
		return whatIfSource{mem: out, size: int64(len(out))}, nil
	}
	if !errors.Is(err, format.ErrTooLarge) {
		return whatIfSource{}, err
	}
	src := whatIfSource{open: func() (io.Reader, error) { return w.in.Reader(c, b.Magic, region) }}
	r, err := src.open()
	if err != nil {
		return whatIfSource{}, err
	}
	src.size, err = io.CopyBuffer(io.Discard, r, w.a[:])
	return src, err
}

// compress writes src through codec c into w.out, as a producer's stream,
// and returns the time spent compressing (not reading src). The records
// uncompressed (none) are counted, not kept.
func (w *whatIfRun) compress(c format.Compression, src whatIfSource) (time.Duration, error) {
	w.out.Reset()
	r, err := src.reader()
	if err != nil {
		return 0, err
	}
	out := io.Writer(&w.out)
	if c == format.CompressionNone {
		out = io.Discard
	}
	counted := &countingWriter{w: out}
	defer func() { w.stored = counted.n }()
	t0 := time.Now()
	cw, err := w.comp.Writer(c, format.MagicV2, counted)
	if err != nil {
		return 0, err
	}
	took := time.Since(t0)
	for {
		n, rerr := io.ReadFull(r, w.a[:])
		t := time.Now()
		_, err := cw.Write(w.a[:n])
		took += time.Since(t)
		if err != nil {
			return took, err
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return took, rerr
		}
	}
	t := time.Now()
	err = cw.Close()
	return took + time.Since(t), err
}

// countingWriter counts what it passes on.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// errRoundTrip is a codec whose output does not decompress to its input.
var errRoundTrip = errors.New("decompressed data differs from the records")

// roundTrip decompresses w.out with c as a stream and compares it with src
// as it comes, returning the time spent decompressing.
func (w *whatIfRun) roundTrip(c format.Compression, src whatIfSource) (time.Duration, error) {
	want, err := src.reader()
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	r, err := w.rt.Reader(c, format.MagicV2, w.out.Bytes())
	took := time.Since(t0)
	if err != nil {
		return took, err
	}
	for {
		t := time.Now()
		n, err := io.ReadFull(r, w.a[:])
		took += time.Since(t)
		m, _ := io.ReadFull(want, w.b[:])
		if n != m || !bytes.Equal(w.a[:n], w.b[:m]) {
			return took, errRoundTrip
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			if k, _ := want.Read(w.b[:1]); k > 0 {
				return took, errRoundTrip
			}
			return took, nil
		}
		if err != nil {
			return took, err
		}
	}
}

// WriteWhatIfJSON writes the report as one "whatif" object.
func WriteWhatIfJSON(w io.Writer, rep *WhatIfReport) error { return writeJSONLine(w, rep) }

// WriteWhatIfTable writes one row per codec under a line on the sample.
func WriteWhatIfTable(w io.Writer, rep *WhatIfReport) error {
	head := "what if: " + i64(rep.SampledBatches) + " of " + i64(rep.Batches) + " v2 batches recompressed (sample " +
		strconv.FormatFloat(rep.Sample, 'f', -1, 64) + "), " + i64(rep.TodayBytes) + " bytes today (" + strings.Join(rep.TodayCodecs, ",") +
		"), " + i64(rep.RecordBytes) + " bytes of records uncompressed"
	if rep.LegacyBatches > 0 {
		head += "; " + i64(rep.LegacyBatches) + " v0/v1 batches skipped"
	}
	if rep.UndecodableBatches > 0 {
		head += "; " + i64(rep.UndecodableBatches) + " undecodable batches left out"
	}
	if _, err := io.WriteString(w, head+"\n"); err != nil {
		return err
	}
	rows := make([][]string, 0, len(rep.Codecs))
	for _, c := range rep.Codecs {
		rows = append(rows, []string{c.Codec, bytesCell(c.StoredBytes), strconv.FormatFloat(c.Ratio, 'f', 3, 64), bytesCell(c.SavedBytes),
			strconv.FormatFloat(c.CompressMsPerMiB, 'f', 2, 64), strconv.FormatFloat(c.DecompressMsPerMiB, 'f', 2, 64)})
	}
	return dump.WriteTable(w, []string{"codec", "stored bytes", "vs today", "saved bytes", "compress ms per mib", "decompress ms per mib"}, rows)
}

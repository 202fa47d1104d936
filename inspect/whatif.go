package inspect

import (
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
	var dec format.Decompressor
	var comp format.Compressor
	var recBuf, outBuf, backBuf []byte
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
			region := b.Raw[format.BatchHeaderSize:]
			records := region
			if c := b.Compression(); c != format.CompressionNone {
				recBuf, err = dec.Decompress(c, b.Magic, region, recBuf[:0])
				if err != nil {
					rep.UndecodableBatches++
					rep.SampledBatches--
					continue
				}
				records = recBuf
			}
			today[b.Compression()] = true
			rep.TodayBytes += b.Size()
			rep.RecordBytes += int64(len(records))
			for i, c := range opts.Codecs {
				a := &accs[i]
				t0 := time.Now()
				out, err := comp.Compress(c, format.MagicV2, outBuf[:0], records)
				t1 := time.Now()
				if err != nil {
					a.errors++
					continue
				}
				outBuf = out
				a.comp += t1.Sub(t0)
				a.stored += int64(format.BatchHeaderSize + len(out))
				if c == format.CompressionNone {
					continue
				}
				t2 := time.Now()
				back, err := dec.Decompress(c, format.MagicV2, out, backBuf[:0])
				a.decomp += time.Since(t2)
				if err != nil || len(back) != len(records) {
					a.errors++
				}
				backBuf = back
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

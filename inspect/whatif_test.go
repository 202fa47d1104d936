package inspect

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/produce"
)

func genLog(name string) string {
	return filepath.Join("..", "testdata", "segments", "generated", name, "00000000000000000000.log")
}

func TestWhatIf(t *testing.T) {
	all := []format.Compression{format.CompressionNone, format.CompressionGzip, format.CompressionSnappy, format.CompressionLZ4, format.CompressionZstd}
	cases := []struct {
		name    string
		file    string
		today   format.Compression
		batches int64
		legacy  int64
	}{
		{"gzip", genLog("v2-gzip"), format.CompressionGzip, 4, 0},
		{"zstd", genLog("v2-zstd"), format.CompressionZstd, 4, 0},
		{"lz4", genLog("v2-lz4"), format.CompressionLZ4, 4, 0},
		{"snappy", genLog("v2-snappy"), format.CompressionSnappy, 4, 0},
		{"none", genLog("v2-none"), format.CompressionNone, 3, 0},
		{"legacy skipped", genLog("v1-gzip"), format.CompressionNone, 0, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := WhatIf(context.Background(), []string{tc.file}, WhatIfOptions{Codecs: all})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Batches != tc.batches || rep.SampledBatches != tc.batches || rep.LegacyBatches != tc.legacy {
				t.Fatalf("batches %d sampled %d legacy %d, want %d %d %d", rep.Batches, rep.SampledBatches, rep.LegacyBatches, tc.batches, tc.batches, tc.legacy)
			}
			for _, c := range rep.Codecs {
				if c.Errors != 0 {
					t.Errorf("%s: %d errors", c.Codec, c.Errors)
				}
				switch c.Codec {
				case "none":
					// Uncompressed: one header per batch plus the records.
					if want := rep.SampledBatches*format.BatchHeaderSize + rep.RecordBytes; c.StoredBytes != want {
						t.Errorf("none: %d bytes, want %d", c.StoredBytes, want)
					}
				case tc.today.String():
					// klog wrote these batches with the same compressor:
					// recompressing with today's codec stores the same.
					if tc.batches > 0 && (c.StoredBytes != rep.TodayBytes || c.Ratio != 1) {
						t.Errorf("%s today: %d bytes (ratio %v), today %d", c.Codec, c.StoredBytes, c.Ratio, rep.TodayBytes)
					}
				}
				if c.SavedBytes != rep.TodayBytes-c.StoredBytes {
					t.Errorf("%s: saved %d", c.Codec, c.SavedBytes)
				}
			}
		})
	}
}

func TestWhatIfSampleIsDeterministic(t *testing.T) {
	dir := filepath.Join("..", "testdata", "segments", "kafka-written")
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.log"))
	opts := WhatIfOptions{Codecs: []format.Compression{format.CompressionZstd}, Sample: 0.5}
	a, err := WhatIf(context.Background(), files, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := WhatIf(context.Background(), files, opts)
	if a.SampledBatches != b.SampledBatches || a.TodayBytes != b.TodayBytes || a.Codecs[0].StoredBytes != b.Codecs[0].StoredBytes {
		t.Fatalf("two runs differ: %+v %+v", a, b)
	}
	if a.SampledBatches == 0 || a.SampledBatches >= a.Batches-a.UndecodableBatches {
		t.Fatalf("sample 0.5 picked %d of %d batches", a.SampledBatches, a.Batches)
	}
}

func TestParseWhatIfCodecs(t *testing.T) {
	cs, err := ParseWhatIfCodecs("zstd, lz4,gzip,snappy,none")
	if err != nil || len(cs) != 5 || cs[0] != format.CompressionZstd || cs[4] != format.CompressionNone {
		t.Fatalf("%v %v", cs, err)
	}
	for _, bad := range []string{"", "zstd,brotli", "lz4,lz4", "ZSTD"} {
		if _, err := ParseWhatIfCodecs(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestWhatIfStopsInsideAFile: a signal stops the recompression between
// batches, not only between files (one big segment ran to the CLI's
// fallback exit, "did not stop within a second").
func TestWhatIfStopsInsideAFile(t *testing.T) {
	ctx := &klogtest.CancelAfter{Context: context.Background(), N: 2}
	rep, err := WhatIf(ctx, []string{genLog("v2-gzip")}, WhatIfOptions{Codecs: []format.Compression{format.CompressionZstd}})
	if err != context.Canceled || rep != nil {
		t.Fatalf("WhatIf cancelled after the first batch: report %v, err %v; want nil, context.Canceled", rep, err)
	}
}

// TestWhatIfLargeBatchStreams: a batch whose records are larger than what
// WhatIf holds in memory is read as a stream for each pass, with the same
// answers as for a small batch: no errors, every record byte counted, and
// for gzip, snappy and lz4 the very bytes Compress makes of the whole.
func TestWhatIfLargeBatchStreams(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	recs := make([]format.Record, 90_000)
	for i := range recs {
		v := make([]byte, 100)
		for j := range v {
			v[j] = byte('a' + rng.IntN(8))
		}
		recs[i].Value = v
	}
	if _, err := a.Append(&produce.Batch{Records: recs, Compression: format.CompressionGzip}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	all := []format.Compression{format.CompressionNone, format.CompressionGzip, format.CompressionSnappy, format.CompressionLZ4, format.CompressionZstd}
	rep, err := WhatIf(context.Background(), logs, WhatIfOptions{Codecs: all})
	if err != nil {
		t.Fatal(err)
	}
	// The records as the batch holds them, to compare with.
	data, _ := os.ReadFile(logs[0])
	b, err := format.ParseBatch(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	var d format.Decompressor
	records, err := d.Decompress(b.Compression(), b.Magic, b.Raw[format.BatchHeaderSize:], nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) <= whatIfInMemory || rep.RecordBytes != int64(len(records)) || rep.UndecodableBatches != 0 {
		t.Fatalf("%d record bytes (want %d, over %d), %d undecodable", rep.RecordBytes, len(records), whatIfInMemory, rep.UndecodableBatches)
	}
	var comp format.Compressor
	for _, c := range rep.Codecs {
		codec := all[0]
		for _, x := range all {
			if x.String() == c.Codec {
				codec = x
			}
		}
		if c.Errors != 0 {
			t.Errorf("%s: %d errors", c.Codec, c.Errors)
		}
		if codec == format.CompressionZstd {
			continue
		}
		whole, _ := comp.Compress(codec, format.MagicV2, nil, records)
		if want := int64(format.BatchHeaderSize + len(whole)); c.StoredBytes != want {
			t.Errorf("%s: %d bytes, Compress makes %d", c.Codec, c.StoredBytes, want)
		}
	}
}

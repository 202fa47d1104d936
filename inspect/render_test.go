package inspect

import (
	"bytes"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
)

func TestBytesCell(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1023: "1023", -1023: "-1023", 1128: "1128 (1.1 KiB)",
		-1128: "-1128 (-1.1 KiB)", 3 << 20: "3145728 (3.0 MiB)", 1 << 30: "1073741824 (1.0 GiB)"} {
		if got := bytesCell(n); got != want {
			t.Errorf("bytesCell(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestTablesShowHumanBytes: the diff, retention and what-if tables show
// byte counts as "exact (human)".
func TestTablesShowHumanBytes(t *testing.T) {
	var b bytes.Buffer
	check := func(name string, err error, want ...string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s table without %q:\n%s", name, w, b.String())
			}
		}
		b.Reset()
	}
	check("diff", WriteDiffText(&b, &DiffReport{Replicas: []DiffReplica{{Dir: "b", ExtraBytes: 1128}}}), "1128 (1.1 KiB)")
	check("retention", WriteRetentionTable(&b, &RetentionReport{Segments: []RetentionSegment{{SizeBytes: 5 << 20}}}), "5242880 (5.0 MiB)")
	check("what-if", WriteWhatIfTable(&b, &WhatIfReport{Codecs: []WhatIfCodec{{Codec: "zstd", StoredBytes: 2048, SavedBytes: -4096}}}),
		"2048 (2.0 KiB)", "-4096 (-4.0 KiB)")
}

func TestViewBytesOf(t *testing.T) {
	for n, want := range map[int64]string{1: "1 byte", 79: "79 bytes", 1128: "1128 bytes (1.1 KiB)", 5 << 20: "5242880 bytes (5.0 MiB)"} {
		if got := bytesOf(n); got != want {
			t.Errorf("bytesOf(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestViewTablesShowHumanBytes: the stats and find tables show byte counts
// as "exact (human)".
func TestViewTablesShowHumanBytes(t *testing.T) {
	var b bytes.Buffer
	r := &StatsReport{Bytes: 2048, BatchBytes: Distribution{Min: 1128, Max: 3 << 20},
		Codecs: []CodecStats{{Codec: "none", BatchBytes: 1128, StoredBytes: 1100, RecordBytes: 1050}},
		Hours:  []HourStats{{Hour: "2026-01-01T00", Batches: 1, Bytes: 1128}}}
	if err := WriteStatsTable(&b, r, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2048 (2.0 KiB)", "3145728 (3.0 MiB)", "1128 (1.1 KiB)", "1100 (1.1 KiB)", "1050 (1.0 KiB)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("stats table without %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteFindTable(&b, &FindResult{Query: "offset", LogBytesRead: 4096, IndexBytesRead: 16}, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "4096 (4.0 KiB) of logs, 16 of indexes") {
		t.Errorf("find table without human bytes:\n%s", b.String())
	}
	b.Reset()
	seg := SegmentRow{Log: "x.log", SizeBytes: 1 << 20, Tail: format.TailZeros.String(), TailBytes: 8192, LastOffset: -1, MinTimestamp: -1, MaxTimestamp: -1}
	if err := WriteSegmentsTable(&b, &PartitionSegments{Dir: "d", Partition: -1, Segments: []SegmentRow{seg}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "1048576 (1.0 MiB)") || !strings.Contains(b.String(), "8192 (8.0 KiB) "+seg.Tail+" at end") {
		t.Errorf("segments table without human bytes:\n%s", b.String())
	}
}

package report

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/inspect"
	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/verify"
)

const kafkaWritten = "../testdata/segments/kafka-written"

// twoBrokers lays out two brokers' log dirs from Kafka-written fixtures:
// broker 1 holds orders-0 (three segments of every codec, from UnifiedLog),
// events-0 (gzip) and __consumer_offsets-0 (the group coordinator's
// records); broker 2 holds orders-0 without its last segment (a replica
// behind, whose producer snapshot at 49 lies above its log end: a verify
// finding).
func twoBrokers(t *testing.T) (b1, b2 string) {
	t.Helper()
	root := t.TempDir()
	b1, b2 = filepath.Join(root, "broker1"), filepath.Join(root, "broker2")
	klogtest.CopyPartition(t, filepath.Join(kafkaWritten, "unifiedlog-producer/topic-0"), filepath.Join(b1, "orders-0"))
	klogtest.CopyPartition(t, filepath.Join(kafkaWritten, "unifiedlog-producer/topic-0"), filepath.Join(b2, "orders-0"), "00000000000000000032.")
	klogtest.CopyPartition(t, filepath.Join(kafkaWritten, "v2-gzip"), filepath.Join(b1, "events-0"))
	klogtest.CopyPartition(t, filepath.Join(kafkaWritten, "coordinator/__consumer_offsets-0"), filepath.Join(b1, "__consumer_offsets-0"))
	for i, d := range []string{b1, b2} {
		if err := os.WriteFile(filepath.Join(d, "meta.properties"), []byte("version=1\ncluster.id=c\nnode.id="+strconv.Itoa(i+1)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return b1, b2
}

// fixtureNow is a week and a day after the fixtures' timestamps
// (2023-11-14): orders-0's closed segments are past retention.ms.
const fixtureNow = 1700000000000 + 8*24*3_600_000

func buildFixture(t *testing.T) (*Report, []byte) {
	t.Helper()
	b1, b2 := twoBrokers(t)
	rep, err := Build(context.Background(), []string{b1, b2}, Options{Now: fixtureNow, Retention: inspect.DefaultRetentionConfig(),
		WhatIfCodecs: []format.Compression{format.CompressionZstd, format.CompressionLZ4}, WhatIfSample: 1})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	return rep, b.Bytes()
}

// TestBuild: the report holds what the other commands say about the same
// disks: segments, hours, retention verdicts, verify's finding on broker
// 2, the divergence of orders-0, the groups, the what-if codecs.
func TestBuild(t *testing.T) {
	rep, js := buildFixture(t)
	if got := rep.Overview; got.Topics != 3 || got.Partitions != 4 || len(got.Brokers) != 2 {
		t.Errorf("overview %+v, want 3 topics, 4 partition dirs, 2 brokers", got)
	}
	var orders1 *Partition
	for _, p := range rep.Partitions {
		if p.Topic == "orders" && p.Broker == 1 {
			orders1 = p
		}
	}
	if orders1 == nil || len(orders1.Segments) != 3 || len(orders1.Retention) != 3 {
		t.Fatalf("orders-0 on broker 1: %+v", orders1)
	}
	segs, err := inspect.Segments(context.Background(), orders1.Dir, inspect.SegmentsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range segs.Segments {
		if s.BaseOffset != orders1.Segments[i].BaseOffset || s.SizeBytes != orders1.Segments[i].SizeBytes {
			t.Errorf("segment %d: %+v, klog segments says %+v", i, orders1.Segments[i], s)
		}
	}
	// retention.ms (7 days) has passed for every segment: all go, the
	// broker rolls a new active segment first.
	for _, r := range orders1.Retention {
		if !r.Deletable || r.Reason == nil || *r.Reason != "retention.ms" {
			t.Errorf("retention verdict %+v", r)
		}
	}
	if !orders1.RetentionSummary.Rolled {
		t.Errorf("retention summary %+v: not rolled", orders1.RetentionSummary)
	}
	var records int64
	for _, h := range orders1.Hours {
		records += h.Records
	}
	if records != orders1.Records || records == 0 {
		t.Errorf("hours hold %d records, the segments %d", records, orders1.Records)
	}
	if rep.FindingCount == 0 || !strings.Contains(rep.Findings[0].Path, "broker2") || rep.Findings[0].Offset != 49 {
		t.Errorf("findings %+v, want broker 2's snapshot above its log end", rep.Findings)
	}
	if len(rep.Divergence) != 1 || rep.Divergence[0].Topic != "orders" || len(rep.Divergence[0].Report.Replicas) != 2 {
		t.Errorf("divergence %+v", rep.Divergence)
	}
	if rep.Groups == nil || len(rep.Groups.Groups) == 0 {
		t.Errorf("groups %+v", rep.Groups)
	}
	if rep.WhatIf == nil || len(rep.WhatIf.Codecs) != 2 {
		t.Errorf("what-if %+v", rep.WhatIf)
	}
	var back map[string]any
	if err := json.Unmarshal(js, &back); err != nil || back["type"] != "report" {
		t.Fatalf("JSON: %v %.200s", err, js)
	}
}

// TestOneBrokerNoDivergence: one broker's log dir has no divergence
// section (nil, JSON null), and no groups without __consumer_offsets.
func TestOneBrokerNoDivergence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "events-0")
	klogtest.CopyPartition(t, filepath.Join(kafkaWritten, "v2-gzip"), dir)
	rep, err := Build(context.Background(), []string{dir}, Options{Now: fixtureNow, Retention: inspect.DefaultRetentionConfig()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Divergence != nil || rep.Groups != nil || rep.WhatIf != nil || rep.FindingCount != 0 {
		t.Errorf("divergence %v groups %v what-if %v findings %d", rep.Divergence, rep.Groups, rep.WhatIf, rep.FindingCount)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, rep); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `id="divergence"`) || strings.Contains(b.String(), `id="groups"`) {
		t.Error("sections without data are shown")
	}
}

// TestEscaping: names and messages from the disks are text, never markup
// or script, wherever they land (text, attributes, the JSON island).
func TestEscaping(t *testing.T) {
	evil := `</script><img src=x onerror=alert(1)>"'&`
	rep := &Report{Type: "report", Inputs: []string{evil}, LogDirs: []LogDir{{Path: evil, Broker: 1}},
		Topics:     []Topic{{Name: evil, Codecs: []string{}}},
		Partitions: []*Partition{{Topic: evil, Dir: evil, Error: evil}},
		Findings:   []verify.Problem{{Path: evil, Message: evil}}, FindingCount: 1}
	var b bytes.Buffer
	if err := WriteHTML(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "<img") || strings.Count(out, "</script>") != 2 {
		t.Errorf("unescaped: %d </script>, <img: %v", strings.Count(out, "</script>"), strings.Contains(out, "<img"))
	}
}

// TestSize10000Partitions: 10,000 partitions of three segments and a day
// of hours each stay under 5 MB (their detail is the compact JSON island).
// The numbers vary as real ones do (a fixed pseudo-random sequence), so
// that the compression is not flattered by repetition.
func TestSize10000Partitions(t *testing.T) {
	rep := &Report{Type: "report", Now: fixtureNow, Inputs: []string{"/var/lib/kafka/data"}, LogDirs: []LogDir{{Path: "/var/lib/kafka/data", Broker: 1}}}
	seed := uint64(1)
	rnd := func(n int64) int64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int64((seed >> 33) % uint64(n))
	}
	at := int64(1_700_000_000_000)
	for i := 0; i < 10_000; i++ {
		p := &Partition{Topic: "orders-events-" + strconv.Itoa(i/100), Partition: int32(i % 100), Broker: 1,
			Dir: "/var/lib/kafka/data/orders-events-" + strconv.Itoa(i/100) + "-" + strconv.Itoa(i%100), Codecs: []string{"zstd"}}
		base := rnd(1_000_000_000)
		ts := at + rnd(3_600_000)
		for s := int64(0); s < 3; s++ {
			n := 500_000 + rnd(1_000_000)
			size := 700_000_000 + rnd(400_000_000)
			end := ts + 28_000_000 + rnd(1_600_000)
			p.Segments = append(p.Segments, inspect.SegmentRow{BaseOffset: base, LastOffset: base + n - 1, SizeBytes: size,
				Records: n, Batches: n / (20 + rnd(30)), MinTimestamp: ts, MaxTimestamp: end, Codecs: []string{"zstd"}})
			d := end + 604_800_000
			p.Retention = append(p.Retention, inspect.RetentionSegment{BaseOffset: base, SizeBytes: size, DeletableAt: &d, HeldBy: "not-expired", Active: s == 2})
			base, ts = base+n, end+1+rnd(1000)
			p.SizeBytes += size
			p.Records += n
		}
		for h := int64(0); h < 24; h++ {
			p.Hours = append(p.Hours, inspect.HourStats{HourMs: at/3_600_000*3_600_000 + h*3_600_000, Batches: 500 + rnd(1000),
				Records: 100_000 + rnd(50_000), Bytes: 100_000_000 + rnd(60_000_000)})
		}
		rep.Partitions = append(rep.Partitions, p)
	}
	rep.summarise(map[int32]bool{1: true})
	var b bytes.Buffer
	if err := WriteHTML(&b, rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("10,000 partitions: %d bytes of HTML", b.Len())
	if b.Len() >= 5<<20 {
		t.Errorf("%d bytes, want under 5 MB", b.Len())
	}
}

// TestWriteFile: the report replaces a regular file only, and leaves no
// temporary file behind.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	rep := &Report{Type: "report"}
	out := filepath.Join(dir, "r.html")
	if err := WriteFile(out, rep); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(dir, "link.html")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(dir, "link.html"), rep); err == nil {
		t.Error("a symlink was replaced")
	}
	if err := WriteFile(dir, rep); err == nil {
		t.Error("a directory was replaced")
	}
	var names []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if !d.IsDir() {
			names = append(names, d.Name())
		}
		return nil
	})
	if len(names) != 2 {
		t.Errorf("files left: %v", names)
	}
}

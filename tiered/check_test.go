package tiered

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/verify"
)

// runFixture checks a fixture directory laid out as the shared fixtures
// are: remote/ (or storage/), broker-logdir/ with the metadata partition
// and the local tail.
func runFixture(t *testing.T, root string, read bool) ([]*PartitionReport, *Summary) {
	t.Helper()
	store := root + "/remote"
	if _, err := os.Stat(store); err != nil {
		store = root + "/storage"
	}
	md, err := MetadataDirs([]string{root + "/broker-logdir"})
	if err != nil {
		t.Fatal(err)
	}
	var reps []*PartitionReport
	keys := fixtureKeys(t)
	sum, err := Run(context.Background(), Options{Remote: &Remote{Store: dirStore(t, store), Keys: keys}, Metadata: md,
		LogDirs: []string{root + "/broker-logdir"}, Checker: Checker{Read: read}}, func(p *PartitionReport) error {
		reps = append(reps, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return reps, sum
}

// kinds lists "kind segment offset" of every finding, sorted.
func kinds(reps []*PartitionReport, sum *Summary) []string {
	var out []string
	add := func(fs []Finding) {
		for _, f := range fs {
			s := string(f.Kind)
			if f.Info {
				s += "(info)"
			}
			out = append(out, s+" "+f.SegmentID+" "+itoa(f.Offset))
		}
	}
	for _, r := range reps {
		add(r.Findings)
		for _, s := range r.Segments {
			add(s.Findings)
		}
	}
	add(sum.Unplaced)
	sort.Strings(out)
	return out
}

// groundTruth is the part of the fixtures' JSON the lineage is checked on.
type groundTruth struct {
	RemoteSegments []struct {
		ID                  string           `json:"id"`
		ToString            string           `json:"toString"`
		StartOffset         int64            `json:"startOffset"`
		EndOffset           int64            `json:"endOffset"`
		MaxTimestampMs      int64            `json:"maxTimestampMs"`
		SegmentSizeInBytes  int64            `json:"segmentSizeInBytes"`
		State               string           `json:"state"`
		SegmentLeaderEpochs map[string]int64 `json:"segmentLeaderEpochs"`
	} `json:"remoteSegments"`
}

// TestLineageFixtures: the fold gives each segment the state and fields
// Kafka's RemoteLogSegmentMetadata.createWithUpdates gave the fixtures.
func TestLineageFixtures(t *testing.T) {
	t.Parallel()
	for _, fx := range []string{"local-tiered", "variants/crc-flip", "variants/gap", "variants/missing-remote-files", "aiven/plain", "aiven/zstd-encrypted"} {
		data, err := os.ReadFile(fixtures + "/" + fx + ".groundtruth.json")
		if err != nil {
			t.Fatal(err)
		}
		var gt groundTruth
		if err := json.Unmarshal(data, &gt); err != nil {
			t.Fatal(err)
		}
		md, err := MetadataDirs([]string{fixtures + "/" + fx + "/broker-logdir"})
		if err != nil {
			t.Fatal(err)
		}
		lin := NewLineage()
		if err := ReadMetadata(context.Background(), md, lin); err != nil {
			t.Fatal(err)
		}
		if len(lin.Problems) > 0 || len(lin.Partitions) != 1 {
			t.Fatalf("%s: %d partitions, problems %v", fx, len(lin.Partitions), lin.Problems)
		}
		for _, pl := range lin.Partitions {
			if len(pl.Segments) != len(gt.RemoteSegments) {
				t.Errorf("%s: %d segments, want %d", fx, len(pl.Segments), len(gt.RemoteSegments))
			}
			for _, g := range gt.RemoteSegments {
				id, _ := ParseUuid(g.ID)
				m := pl.Segments[id]
				if m == nil {
					t.Errorf("%s: no segment %s", fx, g.ID)
					continue
				}
				eps := map[string]int64{}
				for _, e := range m.LeaderEpochs {
					eps[itoa(int64(e.Epoch))] = e.Offset
				}
				// The Aiven ground truth gives fewer fields; its toString
				// (the metadata as uploaded, before segment 0's delete) has
				// the rest.
				if g.State == "" {
					g.State = "COPY_SEGMENT_FINISHED"
					if g.StartOffset == 0 {
						g.State = "DELETE_SEGMENT_FINISHED"
					}
					g.MaxTimestampMs, g.SegmentLeaderEpochs = m.MaxTimestampMs, eps
					if !strings.Contains(g.ToString, "maxTimestampMs="+itoa(m.MaxTimestampMs)) ||
						!strings.Contains(g.ToString, "segmentLeaderEpochs="+epochString(m.LeaderEpochs)) {
						t.Errorf("%s: %s = %+v, ground truth %s", fx, g.ID, m, g.ToString)
					}
				}
				if m.State.String() != g.State || m.StartOffset != g.StartOffset || m.EndOffset != g.EndOffset || m.MaxTimestampMs != g.MaxTimestampMs ||
					int64(m.SizeInBytes) != g.SegmentSizeInBytes || len(eps) != len(g.SegmentLeaderEpochs) {
					t.Errorf("%s: %s = %+v, want %+v", fx, g.ID, m, g)
				}
				for k, v := range g.SegmentLeaderEpochs {
					if eps[k] != v {
						t.Errorf("%s: %s epochs %v, want %v", fx, g.ID, eps, g.SegmentLeaderEpochs)
					}
				}
			}
		}
	}
}

// TestCheckFixtures: each fixture gives exactly its expected findings.
func TestCheckFixtures(t *testing.T) {
	t.Parallel()
	const (
		seg8  = "U0VHTUVOVDEAAAAAAAAAAQ"
		seg14 = "U0VHTUVOVDIAAAAAAAAAAg"
		seg22 = "U0VHTUVOVDMAAAAAAAAAAw"
	)
	for _, c := range []struct {
		fx   string
		want []string
	}{
		{fx: "local-tiered"},
		{fx: "aiven/plain"},
		{fx: "aiven/zstd-encrypted"},
		{fx: "variants/crc-flip", want: []string{"crc-mismatch " + seg8 + " 8", "decompress " + seg8 + " 8"}},
		{fx: "variants/missing-remote-files", want: []string{"missing-remote-files " + seg14 + " 14"}},
		{fx: "variants/gap", want: []string{"remote-gap " + seg22 + " 14"}},
	} {
		t.Run(c.fx, func(t *testing.T) {
			t.Parallel()
			reps, sum := runFixture(t, fixtures+"/"+c.fx, true)
			got := kinds(reps, sum)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			for _, r := range reps {
				for _, s := range r.Segments {
					for _, f := range s.Findings {
						if f.Key == "" || f.Repair == "" {
							t.Errorf("finding without a key or a repair: %+v", f)
						}
					}
				}
			}
			if len(reps) != 1 || reps[0].LocalStart != 29 {
				t.Errorf("partitions %d, local start %d", len(reps), reps[0].LocalStart)
			}
		})
	}
	_ = verify.KindCRCMismatch
}

// TestMetadataTailIsAProblem: bytes after the last whole batch of a
// __remote_log_metadata segment (a cut write, a file that is no log) are a
// metadata problem naming the file and the byte, not the quiet end of the
// metadata (verify exited 0 on a metadata log that was /etc/passwd).
func TestMetadataTailIsAProblem(t *testing.T) {
	t.Parallel()
	md := filepath.Join(t.TempDir(), "__remote_log_metadata-12")
	klogtest.CopyPartition(t, fixtures+"/local-tiered/broker-logdir/__remote_log_metadata-12", md)
	log := filepath.Join(md, "00000000000000000000.log")
	clean, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"cut batch", append(slices.Clone(clean), clean[:100]...), "stops at byte " + itoa(int64(len(clean))) + ": 100 bytes after the last whole batch"},
		{"not a log", []byte(strings.Repeat("root:x:0:0:root:/root:/bin/bash\n", 40)), "stops at byte 0: 1280 bytes after the last whole batch"},
	} {
		if err := os.WriteFile(log, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		lin := NewLineage()
		if err := ReadMetadata(context.Background(), []string{md}, lin); err != nil {
			t.Fatal(err)
		}
		if len(lin.Problems) != 1 || !strings.Contains(lin.Problems[0].Message, log+": the metadata "+c.want) {
			t.Errorf("%s: problems %+v, want one saying %q", c.name, lin.Problems, c.want)
		}
	}
}

package tiered

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/objstore"
)

const (
	seg8ID  = "U0VHTUVOVDEAAAAAAAAAAQ"
	seg14ID = "U0VHTUVOVDIAAAAAAAAAAg"
	seg22ID = "U0VHTUVOVDMAAAAAAAAAAw"
	orphan  = "T1JQSEFOAAAAAAAAAAAAmQ"
	partDir = "remote/kafka-tiered-storage/orders-0-b3JkZXJzAAAAAAAAAAAAAg"
)

// segFile is a LocalTieredStorage file of the copy at root.
func segFile(root string, start int64, id, sfx string) string {
	return filepath.Join(root, partDir, FilenamePrefix(start)+"-"+id+sfx)
}

func mustWrite(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// editBatch changes the batch at pos of a .log with fn and, when fix is
// set, writes its CRC again.
func editBatch(t *testing.T, p string, pos int, fix bool, fn func(b []byte)) {
	t.Helper()
	data := mustRead(t, p)
	n := format.EntrySize(data[pos:])
	b := data[pos : pos+n]
	fn(b)
	if fix {
		binary.BigEndian.PutUint32(b[17:21], format.ChecksumC(b[21:]))
	}
	mustWrite(t, p, data)
}

// TestEveryFinding: a corrupted copy of the clean fixture for each kind of
// finding, with exactly the findings it must give.
func TestEveryFinding(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		aiven  bool
		mutate func(t *testing.T, root string)
		want   []string
	}{
		{name: "orphan-remote-segment", mutate: func(t *testing.T, root string) {
			// A second copy of segment 22 under an id no record names
			// (the shared fixtures' orphan-remote-segment variant).
			for _, sfx := range []string{SuffixLog, SuffixIndex, SuffixTimeIndex, SuffixSnapshot, SuffixEpochCheckpoint} {
				mustWrite(t, segFile(root, 22, orphan, sfx), mustRead(t, segFile(root, 22, seg22ID, sfx)))
			}
		}, want: []string{"orphan-remote-segment " + orphan + " 22"}},
		{name: "orphan-log-only", mutate: func(t *testing.T, root string) {
			// A .log uploaded without its other artifacts.
			mustWrite(t, segFile(root, 29, orphan, SuffixLog), mustRead(t, root+"/broker-logdir/orders-0/00000000000000000029.log"))
		}, want: []string{"orphan-remote-segment " + orphan + " 29"}},
		{name: "missing-index-files", mutate: func(t *testing.T, root string) {
			os.Remove(segFile(root, 22, seg22ID, SuffixIndex))
			os.Remove(segFile(root, 22, seg22ID, SuffixTimeIndex))
		}, want: []string{"missing-index-files " + seg22ID + " 22"}},
		{name: "missing-txnindex", mutate: func(t *testing.T, root string) {
			// The metadata says txnIdxEmpty=false.
			os.Remove(segFile(root, 14, seg14ID, SuffixTxnIndex))
		}, want: []string{"missing-index-files " + seg14ID + " 14"}},
		{name: "deleted-but-present", mutate: func(t *testing.T, root string) {
			// Segment 0 was deleted (DELETE_SEGMENT_FINISHED); put
			// objects back under its name.
			for _, sfx := range []string{SuffixLog, SuffixIndex} {
				mustWrite(t, segFile(root, 0, "U0VHTUVOVDAAAAAAAAAAAA", sfx), mustRead(t, segFile(root, 8, seg8ID, sfx)))
			}
		}, want: []string{"deleted-but-present U0VHTUVOVDAAAAAAAAAAAA 0"}},
		{name: "size-and-end-offset-mismatch", mutate: func(t *testing.T, root string) {
			// The last batch of segment 22 cut off: the object is
			// smaller and ends before the metadata's endOffset.
			p := segFile(root, 22, seg22ID, SuffixLog)
			data := mustRead(t, p)
			first := format.EntrySize(data)
			mustWrite(t, p, data[:first])
		}, want: []string{"end-offset-mismatch " + seg22ID + " 25", "size-mismatch " + seg22ID + " 22", "timestamp-mismatch " + seg22ID + " -1"}},
		{name: "start-offset-mismatch", mutate: func(t *testing.T, root string) {
			// Segment 14's objects renamed to start offset 15.
			for _, sfx := range kafkaSuffixes {
				os.Rename(segFile(root, 14, seg14ID, sfx), segFile(root, 15, seg14ID, sfx))
			}
		}, want: []string{"start-offset-mismatch " + seg14ID + " 14"}},
		{name: "timestamp-mismatch", mutate: func(t *testing.T, root string) {
			// The last batch's maxTimestamp moved on (CRC rewritten).
			p := segFile(root, 22, seg22ID, SuffixLog)
			pos := format.EntrySize(mustRead(t, p))
			editBatch(t, p, pos, true, func(b []byte) {
				binary.BigEndian.PutUint64(b[35:43], binary.BigEndian.Uint64(b[35:43])+5000)
			})
		}, want: []string{"timestamp-mismatch " + seg22ID + " -1"}},
		{name: "leader-epoch-mismatch", mutate: func(t *testing.T, root string) {
			// The second batch of segment 22 says epoch 3 (the partition
			// leader epoch is outside the CRC).
			p := segFile(root, 22, seg22ID, SuffixLog)
			pos := format.EntrySize(mustRead(t, p))
			editBatch(t, p, pos, false, func(b []byte) { binary.BigEndian.PutUint32(b[12:16], 3) })
		}, want: []string{"leader-epoch-mismatch " + seg22ID + " 22"}},
		{name: "local-remote-gap", mutate: func(t *testing.T, root string) {
			// The local tail starts at 31: offsets 29-30 are in neither
			// tier.
			d := root + "/broker-logdir/orders-0/"
			for _, sfx := range []string{".log", ".index", ".timeindex"} {
				os.Rename(d+"00000000000000000029"+sfx, d+"00000000000000000031"+sfx)
			}
		}, want: []string{"local-remote-gap  29"}},
		{name: "local-remote-overlap", mutate: func(t *testing.T, root string) {
			// Segment 22 kept locally too (the shared fixtures'
			// local-overlap): a note, the bytes agree.
			d := root + "/broker-logdir/orders-0/"
			mustWrite(t, d+"00000000000000000022.log", mustRead(t, segFile(root, 22, seg22ID, SuffixLog)))
		}, want: []string{"local-remote-overlap(info)  22"}},
		{name: "local-remote-divergence", mutate: func(t *testing.T, root string) {
			d := root + "/broker-logdir/orders-0/"
			mustWrite(t, d+"00000000000000000022.log", mustRead(t, segFile(root, 22, seg22ID, SuffixLog)))
			editBatch(t, d+"00000000000000000022.log", 0, true, func(b []byte) { b[27+len(b)-28] ^= 1 })
		}, want: []string{"local-remote-divergence " + seg22ID + " 22", "local-remote-overlap(info)  22"}},
		{name: "crc-mismatch-aiven", aiven: true, mutate: func(t *testing.T, root string) {
			// A flipped byte in an encrypted chunk: AES-GCM refuses it.
			p := filepath.Join(root, "storage/tiered/orders-b3JkZXJzAAAAAAAAAAAAAg/0/00000000000000000014-"+seg14ID+SuffixLog)
			data := mustRead(t, p)
			data[200] ^= 0xff
			mustWrite(t, p, data)
		}, want: []string{"chunk-invalid " + seg14ID + " -1"}},
		{name: "manifest-invalid", aiven: true, mutate: func(t *testing.T, root string) {
			p := filepath.Join(root, "storage/tiered/orders-b3JkZXJzAAAAAAAAAAAAAg/0/00000000000000000008-"+seg8ID+SuffixManifest)
			data := mustRead(t, p)
			mustWrite(t, p, data[:len(data)/2])
		}, want: []string{"manifest-invalid " + seg8ID + " -1"}},
		{name: "aiven-object-size", aiven: true, mutate: func(t *testing.T, root string) {
			// The .log object longer than its chunk index (and than
			// the plugin's remote_size says, when the metadata has it).
			p := filepath.Join(root, "storage/tiered/orders-b3JkZXJzAAAAAAAAAAAAAg/0/00000000000000000022-"+seg22ID+SuffixLog)
			mustWrite(t, p, append(mustRead(t, p), 0))
		}, want: []string{"size-mismatch " + seg22ID + " -1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var root string
			if c.aiven {
				cfg := fixtureKeyPair(t)
				cfg.compress, cfg.encrypt = true, true
				root = buildAiven(t, cfg)
			} else {
				root = copyTree(t, fixtures+"/local-tiered")
			}
			c.mutate(t, root)
			reps, sum := runFixture(t, root, true)
			got := kinds(reps, sum)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			for _, r := range reps {
				for _, f := range allOf(r) {
					if f.Message == "" || !f.Info && f.Repair == "" {
						t.Errorf("finding without a message or a repair: %+v", f)
					}
					if f.SegmentID != "" && f.Key == "" {
						t.Errorf("finding about a segment without its object key: %+v", f)
					}
				}
			}
		})
	}
}

func allOf(r *PartitionReport) []Finding {
	out := append([]Finding(nil), r.Findings...)
	for _, s := range r.Segments {
		out = append(out, s.Findings...)
	}
	return out
}

// TestLineageRules: the fold follows RemoteLogMetadataCache on what the
// fixtures do not show: an update for an unknown segment and an invalid
// transition are dropped (metadata-invalid), a segment re-copied over the
// same offsets replaces the old one in its epoch's chain (the old one is
// a leftover: remote-overlap), and a partition delete makes stored
// objects deleted-but-present.
func TestLineageRules(t *testing.T) {
	t.Parallel()
	tp := TopicPartition{Topic: "orders", Partition: 0}
	tp.TopicID, _ = ParseUuid("b3JkZXJzAAAAAAAAAAAAAg")
	a, _ := ParseUuid(seg22ID)
	b, _ := ParseUuid(orphan)
	c, _ := ParseUuid(seg14ID)
	pos := func(o int64) MetadataPos { return MetadataPos{Partition: "__remote_log_metadata-12", Offset: o} }
	l := NewLineage()
	for _, e := range []Event{
		{Kind: EventSegment, Pos: pos(0), Partition: tp, SegmentID: a, StartOffset: 22, EndOffset: 28, LeaderEpochs: []EpochStart{{2, 22}}, State: CopySegmentStarted},
		{Kind: EventSegmentUpdate, Pos: pos(1), Partition: tp, SegmentID: a, State: CopySegmentFinished},
		{Kind: EventSegment, Pos: pos(2), Partition: tp, SegmentID: b, StartOffset: 22, EndOffset: 28, LeaderEpochs: []EpochStart{{2, 22}}, State: CopySegmentStarted},
		{Kind: EventSegmentUpdate, Pos: pos(3), Partition: tp, SegmentID: b, State: CopySegmentFinished},
		{Kind: EventSegmentUpdate, Pos: pos(4), Partition: tp, SegmentID: c, State: CopySegmentFinished},
		{Kind: EventSegmentUpdate, Pos: pos(5), Partition: tp, SegmentID: a, State: CopySegmentStarted},
	} {
		l.Apply(&e)
	}
	pl := l.Partitions[tp]
	if len(l.Problems) != 2 || l.Problems[0].Pos.Offset != 4 || l.Problems[1].Pos.Offset != 5 {
		t.Errorf("problems %+v, want the records at 4 (unknown segment) and 5 (FINISHED back to STARTED)", l.Problems)
	}
	if pl.Referenced(a) || !pl.Referenced(b) {
		t.Errorf("the chain serves a=%v b=%v; the later copy replaces the earlier", pl.Referenced(a), pl.Referenced(b))
	}
	if got := pl.SegmentFor(2, 25); got == nil || got.ID != b {
		t.Errorf("SegmentFor(2, 25) = %+v", got)
	}
	if h := pl.HighestOffset(); h != 28 {
		t.Errorf("HighestOffset = %d", h)
	}
	root := copyTree(t, fixtures+"/local-tiered")
	for _, sfx := range []string{SuffixLog, SuffixIndex, SuffixTimeIndex, SuffixSnapshot, SuffixEpochCheckpoint} {
		mustWrite(t, segFile(root, 22, orphan, sfx), mustRead(t, segFile(root, 22, seg22ID, sfx)))
	}
	st := dirStore(t, root+"/remote")
	var objs *PartitionObjects
	ListPartitions(context.Background(), st, "", nil, func(p *PartitionObjects) error { objs = p; return nil })
	ch := &Checker{Remote: &Remote{Store: st}}
	rep := ch.CheckPartition(context.Background(), objs, pl, nil)
	placeProblems(rep, l)
	var got []string
	for _, k := range kinds([]*PartitionReport{rep}, &Summary{}) {
		if strings.HasPrefix(k, "metadata-invalid") || strings.HasPrefix(k, "remote-overlap") {
			got = append(got, k)
		}
	}
	want := []string{"metadata-invalid " + seg14ID + " -1", "metadata-invalid " + seg22ID + " -1", "remote-overlap " + seg22ID + " 22"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A partition delete: every stored object is a leftover.
	del := Event{Kind: EventPartitionDelete, Pos: pos(6), Partition: tp, DeleteState: DeletePartitionFinished}
	l.Apply(&del)
	rep = ch.CheckPartition(context.Background(), objs, pl, nil)
	n := 0
	for _, f := range allOf(rep) {
		if f.Kind == KindDeletedPresent {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d deleted-but-present findings after the partition delete, want 2 (the two stored copies of 22)", n)
	}
	_ = objstore.ErrNotExist
}

package tiered

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/objstore"
)

const fixtures = "testdata/kafka-written"

// ltsDir is the clean LocalTieredStorage partition directory: the
// original files of every segment the Aiven variants hold too.
const ltsDir = fixtures + "/local-tiered/remote/kafka-tiered-storage/orders-0-b3JkZXJzAAAAAAAAAAAAAg"

func fixtureKeys(t testing.TB) KeyRing {
	t.Helper()
	k, err := ReadPrivateKey(fixtures + "/aiven/keys/private.pem")
	if err != nil {
		t.Fatal(err)
	}
	return KeyRing{"key1": k}
}

func dirStore(t testing.TB, dir string) *objstore.Dir {
	t.Helper()
	st, err := objstore.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func listAll(t testing.TB, st objstore.Store) []*PartitionObjects {
	t.Helper()
	var out []*PartitionObjects
	if _, err := ListPartitions(context.Background(), st, "", nil, func(p *PartitionObjects) error {
		out = append(out, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		key    string
		ok     bool
		layout Layout
		topic  string
		part   int32
		start  int64
		prefix string
		suffix string
	}{
		{key: "kafka-tiered-storage/orders-0-b3JkZXJzAAAAAAAAAAAAAg/00000000000000000008-U0VHTUVOVDEAAAAAAAAAAQ.leader_epoch_checkpoint",
			ok: true, layout: LayoutKafka, topic: "orders", part: 0, start: 8, prefix: "kafka-tiered-storage/", suffix: SuffixEpochCheckpoint},
		{key: "a/my-topic.x-12-b3JkZXJzAAAAAAAAAAAAAg/00000000000000000100-U0VHTUVOVDEAAAAAAAAAAQ.log",
			ok: true, layout: LayoutKafka, topic: "my-topic.x", part: 12, start: 100, prefix: "a/", suffix: SuffixLog},
		{key: "tiered/orders-b3JkZXJzAAAAAAAAAAAAAg/0/00000000000000000014-U0VHTUVOVDIAAAAAAAAAAg.rsm-manifest",
			ok: true, layout: LayoutAiven, topic: "orders", part: 0, start: 14, prefix: "tiered/", suffix: SuffixManifest},
		{key: "orders-b3JkZXJzAAAAAAAAAAAAAg/7/00000000000000000014-U0VHTUVOVDIAAAAAAAAAAg.indexes",
			ok: true, layout: LayoutAiven, topic: "orders", part: 7, start: 14, prefix: "", suffix: SuffixIndexes},
		// An Aiven suffix in a Kafka directory, a Kafka suffix in an
		// Aiven one, a short offset for Aiven, a bad id, a local segment.
		{key: "kafka-tiered-storage/orders-0-b3JkZXJzAAAAAAAAAAAAAg/00000000000000000008-U0VHTUVOVDEAAAAAAAAAAQ.indexes"},
		{key: "tiered/orders-b3JkZXJzAAAAAAAAAAAAAg/0/00000000000000000014-U0VHTUVOVDIAAAAAAAAAAg.timeindex"},
		{key: "tiered/orders-b3JkZXJzAAAAAAAAAAAAAg/0/14-U0VHTUVOVDIAAAAAAAAAAg.log"},
		{key: "tiered/orders-b3JkZXJzAAAAAAAAAAAAAg/0/00000000000000000014-U0VHTUVOVDIAAAAAAAAA.log"},
		{key: "orders-0/00000000000000000000.log"},
		{key: "tiered/orders-b3JkZXJzAAAAAAAAAAAAAg/00/00000000000000000014-U0VHTUVOVDIAAAAAAAAAAg.log"},
	} {
		n, ok := ParseKey(c.key)
		if ok != c.ok {
			t.Errorf("ParseKey(%q) ok = %v", c.key, ok)
			continue
		}
		if !ok {
			continue
		}
		if n.Layout != c.layout || n.Partition.Topic != c.topic || n.Partition.Partition != c.part || n.StartOffset != c.start || n.Prefix != c.prefix || n.Suffix != c.suffix {
			t.Errorf("ParseKey(%q) = %+v", c.key, n)
		}
		if n.Base+n.Suffix != c.key {
			t.Errorf("ParseKey(%q): base %q", c.key, n.Base)
		}
		if got := KeyBase(n.Layout, n.Prefix, n.Partition, n.StartOffset, n.SegmentID); got != n.Base {
			t.Errorf("KeyBase = %q, want %q", got, n.Base)
		}
	}
}

func TestChunkSizesCodec(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want []int32
		bad  bool
	}{
		{in: "00000000", want: nil},
		{in: "0000000100000007", want: []int32{7}},
		// 3 values, base 100, one byte each: 100, 110, then 5 in full.
		{in: "00000003" + "00000064" + "01" + "00" + "0a" + "00000005", want: []int32{100, 110, 5}},
		// Two bytes per value.
		{in: "00000002" + "00000001" + "02" + "0100" + "00000009", want: []int32{257, 9}},
		{in: "000000", bad: true},
		{in: "00000003" + "00000064" + "01" + "00", bad: true},
		{in: "00000002" + "00000064" + "05" + "00" + "00000005", bad: true},
		{in: "ffffffff", bad: true},
		{in: "00000002" + "00000064" + "01" + "00" + "ffffffff", bad: true},
	} {
		b, _ := hex.DecodeString(c.in)
		got, err := decodeChunkSizesBinary(b)
		if c.bad != (err != nil) || !equalInts(got, c.want) {
			t.Errorf("decode(%s) = %v, %v; want %v (error %v)", c.in, got, err, c.want, c.bad)
		}
	}
}

func equalInts(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// aivenTruth is what the fixtures' ground truth says of each segment.
type aivenTruth struct {
	RemoteSegments []struct {
		ID                 string `json:"id"`
		OriginalLogSha256  string `json:"originalLogSha256"`
		SegmentSizeInBytes int64  `json:"segmentSizeInBytes"`
		Chunks             []struct {
			ID                  int   `json:"id"`
			OriginalPosition    int64 `json:"originalPosition"`
			OriginalSize        int   `json:"originalSize"`
			TransformedPosition int64 `json:"transformedPosition"`
			TransformedSize     int   `json:"transformedSize"`
		} `json:"chunks"`
	} `json:"remoteSegments"`
}

// TestAivenReadsBack: every segment of both Aiven fixtures reads back as
// the broker's original .log and indexes (the LocalTieredStorage fixture
// holds the same files), through the chunk index the plugin wrote.
func TestAivenReadsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, v := range []string{"plain", "zstd-encrypted"} {
		t.Run(v, func(t *testing.T) {
			var truth aivenTruth
			data, err := os.ReadFile(fixtures + "/aiven/" + v + ".groundtruth.json")
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &truth); err != nil {
				t.Fatal(err)
			}
			st := dirStore(t, fixtures+"/aiven/"+v+"/storage")
			r := &Remote{Store: st, Keys: fixtureKeys(t), BlockSize: 200} // blocks of one chunk
			parts := listAll(t, st)
			if len(parts) != 1 || len(parts[0].Segments) != 3 || parts[0].Layout != LayoutAiven || parts[0].Prefix != "tiered/" {
				t.Fatalf("listing: %+v", parts)
			}
			for _, seg := range parts[0].Segments {
				m, err := r.ReadManifest(ctx, seg.Key(SuffixManifest))
				if err != nil {
					t.Fatal(err)
				}
				for _, ts := range truth.RemoteSegments {
					if ts.ID != seg.SegmentID.String() || ts.Chunks == nil {
						continue
					}
					if m.Chunks().Len() != len(ts.Chunks) {
						t.Errorf("%s: %d chunks, want %d", ts.ID, m.Chunks().Len(), len(ts.Chunks))
					}
					for i, c := range ts.Chunks {
						got := m.Chunks().Chunk(i)
						if got.ID != c.ID || got.OriginalPosition != c.OriginalPosition || got.OriginalSize != c.OriginalSize ||
							got.TransformedPosition != c.TransformedPosition || got.TransformedSize != c.TransformedSize {
							t.Errorf("%s chunk %d = %+v, want %+v", ts.ID, i, got, c)
						}
					}
					if m.Chunks().TransformedSize() != seg.Objects[SuffixLog].Size {
						t.Errorf("%s: chunk index ends at %d, object is %d bytes", ts.ID, m.Chunks().TransformedSize(), seg.Objects[SuffixLog].Size)
					}
				}
				lr, err := r.OpenLog(ctx, seg, m)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(io.NewSectionReader(lr, 0, lr.Size()))
				lr.Close()
				if err != nil {
					t.Fatal(err)
				}
				base := filepath.Base(seg.Base)
				want, err := os.ReadFile(filepath.Join(ltsDir, base+".log"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s.log: %d bytes read back, differ from the original's %d", base, len(got), len(want))
				}
				sum := sha256.Sum256(got)
				for _, ts := range truth.RemoteSegments {
					if ts.ID == seg.SegmentID.String() && ts.OriginalLogSha256 != "" && ts.OriginalLogSha256 != hex.EncodeToString(sum[:]) {
						t.Errorf("%s: sha256 %x, ground truth %s", base, sum, ts.OriginalLogSha256)
					}
				}
				for ix, sfx := range kafkaIndexSuffix {
					got, err := r.ReadIndex(ctx, seg, m, ix)
					want, werr := os.ReadFile(filepath.Join(ltsDir, base+sfx))
					if os.IsNotExist(werr) {
						if !objstore.IsNotExist(err) {
							t.Errorf("%s %s: %d bytes, %v; want none", base, ix, len(got), err)
						}
						continue
					}
					if err != nil || !bytes.Equal(got, want) {
						t.Errorf("%s %s: %v, %d bytes; want the original %d", base, ix, err, len(got), len(want))
					}
				}
			}
		})
	}
}

// TestAivenWrongKey: without the key, or with another, reading says which
// key pair the data key needs.
func TestAivenWrongKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := dirStore(t, fixtures+"/aiven/zstd-encrypted/storage")
	seg := listAll(t, st)[0].Segments[0]
	for _, keys := range []KeyRing{nil, {"key2": fixtureKeys(t)["key1"]}} {
		r := &Remote{Store: st, Keys: keys}
		_, err := r.OpenLog(ctx, seg, nil)
		if err == nil || !bytesContains(err.Error(), `key pair "key1"`) {
			t.Errorf("keys %v: %v", keys.IDs(), err)
		}
	}
}

func bytesContains(s, sub string) bool { return bytes.Contains([]byte(s), []byte(sub)) }

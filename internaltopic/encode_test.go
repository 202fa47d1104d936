package internaltopic

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/format"
)

// eachRecord calls fn with every non-control record of the segment or
// snapshot at path (skipping the test when the file is absent).
func eachRecord(t *testing.T, path string, fn func(r *format.Record)) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		t.Skip(path + " is not here")
	}
	if err != nil {
		t.Fatal(err)
	}
	sc := format.NewScanner(bytes.NewReader(data), int64(len(data)), format.ScanOptions{})
	var rr format.RecordReader
	n := 0
	for b, err := range sc.All() {
		if err != nil {
			t.Fatal(err)
		}
		if b.IsControl() {
			continue
		}
		for r, err := range rr.Records(b) {
			if err != nil {
				t.Fatal(err)
			}
			fn(r)
			n++
		}
	}
	return n
}

// TestEncodeRoundTrip: every record of the Kafka-written coordinator
// partitions, decoded to Kafka's JSON and encoded back, gives its bytes.
func TestEncodeRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		path string
		kind Kind
	}{
		{"../testdata/segments/kafka-written/coordinator/__consumer_offsets-0/00000000000000000000.log", Offsets},
		{"../testdata/segments/kafka-written/coordinator/__transaction_state-0/00000000000000000000.log", TransactionLog},
		{"../testdata/segments/licensed/DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-39/00000000000000000000.log", Offsets},
	}
	for _, c := range cases {
		t.Run(filepath.Base(filepath.Dir(c.path)), func(t *testing.T) {
			t.Parallel()
			rd := New(c.kind)
			n := eachRecord(t, c.path, func(r *format.Record) {
				d := rd.Decode(r)
				if d.Problem != "" {
					t.Fatalf("offset %d: %s", r.Offset, d.Problem)
				}
				var val []byte
				if d.ValueJSON {
					val = d.Value
				}
				k, v, err := EncodeCoordinatorJSON(c.kind, d.Key, val)
				if err != nil {
					t.Fatalf("offset %d: %v\n%s\n%s", r.Offset, err, d.Key, d.Value)
				}
				if !bytes.Equal(k, r.Key) || !bytes.Equal(v, r.Value) {
					t.Errorf("offset %d: round trip differs\nkey  %x\nwant %x\nvalue %x\nwant  %x", r.Offset, k, r.Key, v, r.Value)
				}
			})
			if n == 0 {
				t.Fatal("no records")
			}
		})
	}
}

// TestEncodeMetadataRoundTrip does the same for real __cluster_metadata
// logs and snapshots, read in place when they are on this machine (they
// may not be copied into the repository).
func TestEncodeMetadataRoundTrip(t *testing.T) {
	t.Parallel()
	files := referenceMetadataFiles()
	if len(files) == 0 {
		t.Skip("no reference __cluster_metadata files on this machine")
	}
	for _, p := range files {
		t.Run(filepath.Base(p), func(t *testing.T) {
			rd := New(ClusterMetadata)
			eachRecord(t, p, func(r *format.Record) {
				d := rd.Decode(r)
				if !d.ValueJSON {
					t.Fatalf("offset %d: %s", r.Offset, d.Value)
				}
				v, err := EncodeMetadataJSON(d.Value)
				if err != nil {
					t.Fatalf("offset %d: %v\n%s", r.Offset, err, d.Value)
				}
				if !bytes.Equal(v, r.Value) {
					t.Errorf("offset %d: round trip differs\n%x\nwant %x\n%s", r.Offset, v, r.Value, d.Value)
				}
			})
		})
	}
}

package verify

import (
	"bytes"
	"testing"

	"github.com/klog-dev/klog/format"
)

// TestJunkTail: after a segment's last whole batch, bytes that do not start
// a batch are junk; a zero-filled tail, a batch cut short (a crash or a
// write under way) and nothing at all are not.
func TestJunkTail(t *testing.T) {
	recs := []format.Record{{Offset: 0, Timestamp: 1700000000000, Value: []byte("v")}}
	h := &format.Batch{Magic: 2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	format.PrepareBatch(h, recs)
	var c format.Compressor
	batch, err := c.AppendBatch(nil, h, recs)
	if err != nil {
		t.Fatal(err)
	}
	passwd := []byte("root:x:0:0:root:/root:/bin/bash\nbin:x:1:1:bin:/bin:/sbin/nologin\n")
	for _, tc := range []struct {
		name string
		tail []byte
		junk bool
	}{
		{"nothing after the batch", nil, false},
		{"zeros (preallocated)", make([]byte, 100), false},
		{"a batch cut short", batch[:len(batch)-5], false},
		{"a header start only", batch[:10], false},
		{"text", passwd, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := append(append([]byte(nil), batch...), tc.tail...)
			sc := format.NewScanner(bytes.NewReader(data), int64(len(data)), format.ScanOptions{})
			for _, err := range sc.All() {
				if err != nil {
					break
				}
			}
			pr, junk := JunkTail(bytes.NewReader(data), sc.Tail())
			if junk != tc.junk {
				t.Fatalf("junk %v (%s: %s), want %v", junk, pr.Kind, pr.Message, tc.junk)
			}
			if junk && pr.Position != int64(len(batch)) {
				t.Errorf("junk at %d, want %d", pr.Position, len(batch))
			}
		})
	}
}

package dump

import (
	"testing"

	"github.com/klog-dev/klog/format"
)

type testRecord struct {
	key, value []byte
	headers    []format.Header
}

// buildSegment encodes one v2 batch at offset 0 from recs.
func buildSegment(t testing.TB, recs []testRecord) []byte {
	t.Helper()
	rs := make([]format.Record, len(recs))
	for i, r := range recs {
		rs[i] = format.Record{Offset: int64(i), Timestamp: 1700000000000 + int64(i), Key: r.key, Value: r.value, Headers: r.headers}
	}
	h := &format.Batch{Magic: format.MagicV2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	format.PrepareBatch(h, rs)
	var c format.Compressor
	out, err := c.AppendBatch(nil, h, rs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

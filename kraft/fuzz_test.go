package kraft

import (
	"bytes"
	"context"
	"testing"

	"github.com/klog-dev/klog/format"
	it "github.com/klog-dev/klog/internaltopic"
)

// FuzzLoad: no segment makes the replay panic or fail with anything but
// problems; the image it builds can always be rendered and browsed.
func FuzzLoad(f *testing.F) {
	t := &testing.T{}
	lb := newLog(t, 0).batch(broker1, topicOrders, partitionRec(0, 1, "[1,2]")).
		batch(change(0, `"leader":2,"isr":[2]`), `{"type":"FENCE_BROKER_RECORD","version":0,"data":{"id":1,"epoch":10}}`).
		batch(`{"type":"BEGIN_TRANSACTION_RECORD","version":0,"data":{}}`, `{"type":"REMOVE_TOPIC_RECORD","version":0,"data":{"topicId":"pcgBguOASiq3ujkTrGu_Qw"}}`,
			`{"type":"END_TRANSACTION_RECORD","version":0,"data":{}}`).
		leaderChange(1, 1, 2)
	f.Add(lb.buf, int64(-1))
	f.Add(lb.buf[:len(lb.buf)-7], int64(2))
	f.Fuzz(func(t *testing.T, data []byte, upTo int64) {
		if upTo < -1 {
			upTo = -1
		}
		l := newLoader(context.Background(), Options{UpTo: upTo, MaxBatchBytes: 1 << 20})
		err := l.scan("fuzz.log", bytes.NewReader(data), int64(len(data)), 0, false)
		if err != nil && err != errStop {
			t.Fatalf("an I/O error from readable data: %v", err)
		}
		im := l.finish()
		tree := im.Tree()
		tree.Walk("/", func(string, *Node) {})
		if err := WriteSummary(discard{}, im); err != nil {
			t.Fatal(err)
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// FuzzReplay feeds record values straight to the replay (no batch, no
// CRC to get right): any sequence of records, valid or not, leaves an
// image that renders, and never a panic.
func FuzzReplay(f *testing.F) {
	var seed []byte
	for _, js := range []string{broker1, topicOrders, partitionRec(0, 1, "[1,2]"), change(0, `"leader":2,"isr":[2]`),
		change(0, `"replicas":[1,2,3],"directories":["pcgBguOASiq3ujkTrGu_Qw","DuF3GEJ3RHuB62-zMzajeA","AAAAAAAAAAAAAAAAAAAAAA"]`),
		`{"type":"CLEAR_ELR_RECORD","version":0,"data":{"topicName":""}}`,
		`{"type":"REMOVE_TOPIC_RECORD","version":0,"data":{"topicId":"pcgBguOASiq3ujkTrGu_Qw"}}`} {
		v, err := it.EncodeMetadataJSON([]byte(js))
		if err != nil {
			f.Fatal(err)
		}
		seed = append(append(seed, byte(len(v))), v...)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		l := newLoader(context.Background(), Options{UpTo: -1, MaxTransactionRecords: 4})
		for off := int64(0); len(data) > 0; off++ {
			n := min(int(data[0]), len(data)-1)
			l.record("fuzz", &format.Record{Offset: off, Value: data[1 : 1+n]})
			data = data[1+n:]
		}
		im := l.finish()
		im.Tree().Walk("/", func(string, *Node) {})
		if err := WriteSummary(discard{}, im); err != nil {
			t.Fatal(err)
		}
	})
}

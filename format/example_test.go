package format_test

import (
	"bytes"
	"fmt"

	"github.com/klog-dev/klog/format"
)

// exampleSegment is two v2 batches, as a producer would write them.
func exampleSegment() []byte {
	var c format.Compressor
	var seg []byte
	for i, vals := range [][]string{{"a", "b"}, {"c"}} {
		h := format.Batch{BaseOffset: int64(2 * i), Magic: format.MagicV2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		var recs []format.Record
		for j, v := range vals {
			recs = append(recs, format.Record{Offset: h.BaseOffset + int64(j), Timestamp: 1700000000000, Value: []byte(v)})
		}
		format.PrepareBatch(&h, recs)
		seg, _ = c.AppendBatch(seg, &h, recs)
	}
	return seg
}

// A Scanner reads the batches of a segment with bounded memory; All is
// its iterator, Next its hot-loop form. Tail says what follows the last
// whole batch. (Each batch is the 61-byte v2 header plus 8 bytes per
// one-byte record.)
func ExampleScanner() {
	seg := exampleSegment()
	sc := format.NewScanner(bytes.NewReader(seg), int64(len(seg)), format.ScanOptions{})
	for b, err := range sc.All() {
		if err != nil {
			fmt.Println("stopped:", err)
			break
		}
		fmt.Printf("batch at %d: offsets %d..%d, crc valid %v\n", b.Pos, b.BaseOffset, b.LastOffset(), b.Valid())
	}
	fmt.Println("valid bytes:", sc.Tail().Pos)
	// Output:
	// batch at 0: offsets 0..1, crc valid true
	// batch at 77: offsets 2..2, crc valid true
	// valid bytes: 146
}

// A RecordReader decodes a batch's records (decompressing them when
// needed) into one reused Record.
func ExampleRecordReader_Records() {
	seg := exampleSegment()
	var rr format.RecordReader
	for b, err := range format.FrameBatches(seg, 0) {
		if err != nil {
			panic(err)
		}
		for r, err := range rr.Records(b) {
			if err != nil {
				panic(err)
			}
			fmt.Printf("offset %d: %s\n", r.Offset, r.Value)
		}
	}
	// Output:
	// offset 0: a
	// offset 1: b
	// offset 2: c
}

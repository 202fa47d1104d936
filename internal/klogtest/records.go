package klogtest

import (
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// Record is a record read by ReadRecords, with its batch's partition
// leader epoch; its slices are its own.
type Record struct {
	format.Record
	LeaderEpoch int32
}

// ReadRecords reads every record of the partition directory dir, segment
// by segment, with klog's scanner; any error fails tb.
func ReadRecords(tb testing.TB, dir string) []Record {
	tb.Helper()
	d, err := partition.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var out []Record
	var rr format.RecordReader
	for _, seg := range d.Segments {
		f, size, err := safeio.OpenSized(seg.Log)
		if err != nil {
			tb.Fatal(err)
		}
		sc := format.NewScanner(f, size, format.ScanOptions{})
		for b, err := range sc.All() {
			if err != nil {
				tb.Fatal(err)
			}
			for r, err := range rr.Records(b) {
				if err != nil {
					tb.Fatal(err)
				}
				c := *r
				c.Key, c.Value = clone(r.Key), clone(r.Value)
				c.Headers = make([]format.Header, len(r.Headers))
				for i, h := range r.Headers {
					c.Headers[i] = format.Header{Key: clone(h.Key), Value: clone(h.Value)}
				}
				out = append(out, Record{Record: c, LeaderEpoch: b.PartitionLeaderEpoch})
			}
		}
		f.Close()
	}
	return out
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

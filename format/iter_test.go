package format

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// iterFrame builds a frame of three v2 batches of two records each.
func iterFrame(t *testing.T) []byte {
	t.Helper()
	var c Compressor
	var frame []byte
	for i := int64(0); i < 3; i++ {
		h := Batch{BaseOffset: 2 * i, Magic: MagicV2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		recs := []Record{{Offset: 2 * i, Value: []byte("a")}, {Offset: 2*i + 1, Value: []byte("b")}}
		PrepareBatch(&h, recs)
		var err error
		if frame, err = c.AppendBatch(frame, &h, recs); err != nil {
			t.Fatal(err)
		}
	}
	return frame
}

func TestIterators(t *testing.T) {
	frame := iterFrame(t)
	var rr RecordReader
	cases := []struct {
		name          string
		frame         []byte
		batches, recs int
		err           bool
	}{
		{"whole", frame, 3, 6, false},
		{"cut inside the last batch", frame[:len(frame)-5], 2, 4, false},
		{"cut inside the first", frame[:20], 0, 0, false},
		{"empty", nil, 0, 0, false},
	}
	for _, c := range cases {
		var batches, recs int
		var last int64 = -1
		for b, err := range FrameBatches(c.frame, 100) {
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if b.Pos < 100 || !b.Valid() {
				t.Errorf("%s: batch at %d valid %v", c.name, b.Pos, b.Valid())
			}
			batches++
			for r, err := range rr.Records(b) {
				if err != nil {
					t.Fatal(err)
				}
				if r.Offset != last+1 {
					t.Errorf("%s: offset %d after %d", c.name, r.Offset, last)
				}
				last = r.Offset
				recs++
			}
		}
		if batches != c.batches || recs != c.recs {
			t.Errorf("%s: %d batches, %d records; want %d, %d", c.name, batches, recs, c.batches, c.recs)
		}
	}
	// The scanner's iterator sees the same batches, and a break stops it.
	sc := NewScanner(bytes.NewReader(frame), int64(len(frame)), ScanOptions{})
	n := 0
	for b, err := range sc.All() {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 2 {
			if b.BaseOffset != 2 {
				t.Errorf("second batch at offset %d", b.BaseOffset)
			}
			break
		}
	}
	if n != 2 {
		t.Errorf("break: %d", n)
	}
	// A bad magic ends the frame walk with an error.
	bad := append([]byte(nil), frame...)
	bad[16] = 0xff
	var gotErr error
	for _, err := range FrameBatches(bad, 0) {
		gotErr = err
	}
	var pe *PosError
	if !errors.As(gotErr, &pe) {
		t.Errorf("bad magic: %v, want a *PosError", gotErr)
	}
}

// TestBatchParseReused: Parse into a Batch that held another entry leaves
// what ParseBatch returns (nothing of the earlier entry, its computed CRC
// included), and rejects what ParseBatch rejects.
func TestBatchParseReused(t *testing.T) {
	var c Compressor
	build := func(base int64, n int) []byte {
		recs := make([]Record, n)
		for i := range recs {
			recs[i] = Record{Offset: base + int64(i), Timestamp: 1700000000000, Value: []byte("v")}
		}
		h := &Batch{Magic: 2, BaseOffset: base, ProducerID: 7, ProducerEpoch: 1, BaseSequence: 0}
		PrepareBatch(h, recs)
		raw, err := c.AppendBatch(nil, h, recs)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	first, second := build(0, 3), build(3, 5)
	var b Batch
	if err := b.Parse(first, 0); err != nil || !b.Valid() {
		t.Fatalf("first: %v, valid %v", err, b.Valid())
	}
	cases := []struct {
		name string
		raw  []byte
		pos  int64
	}{
		{"another batch", second, int64(len(first))},
		{"cut short", second[:len(second)-1], 9},
		{"header cut short", second[:10], 9},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b.Parse(first, 0)
			b.Valid()
			want, wantErr := ParseBatch(tc.raw, tc.pos)
			err := b.Parse(tc.raw, tc.pos)
			if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
				t.Fatalf("Parse: %v, ParseBatch: %v", err, wantErr)
			}
			if err != nil {
				return
			}
			if b.Valid() != want.Valid() || b.ComputedCRC() != want.ComputedCRC() || !reflect.DeepEqual(b, *want) {
				t.Fatalf("Parse gave %+v, ParseBatch %+v", b, *want)
			}
		})
	}
}

package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestFramesAgreeWithScanner: over every Kafka-written segment, the frames
// the broker's recovery reads are the scanner's batches: same positions,
// sizes, offsets, epochs, producer ids and timestamps, and FrameCRC is the
// checksum Batch.ComputedCRC computes.
func TestFramesAgreeWithScanner(t *testing.T) {
	for _, rel := range logFiles(t, "kafka-written") {
		data, err := os.ReadFile(filepath.Join(testSegmentsRoot, rel))
		if err != nil {
			t.Fatal(err)
		}
		r := bytes.NewReader(data)
		size := int64(len(data))
		sc := NewScanner(r, size, ScanOptions{})
		var fr FrameReader
		pos := int64(0)
		for {
			b, err := sc.Next()
			if err != nil {
				break
			}
			f, err := fr.ReadFrame(r, pos, size)
			if err != nil {
				t.Fatalf("%s at %d: %v", rel, pos, err)
			}
			if f.Pos != b.Pos || f.Size != b.Size() || f.BaseOffset != b.BaseOffset || f.LastOffset != b.LastOffset() ||
				f.Magic != b.Magic || f.CRC != b.CRC || f.MaxTimestamp != b.MaxTimestamp ||
				f.PartitionLeaderEpoch != b.PartitionLeaderEpoch || f.ProducerID != b.ProducerID || f.IsControl() != b.IsControl() {
				t.Fatalf("%s at %d: frame %+v, batch %+v", rel, pos, f, *b)
			}
			c, err := fr.FrameCRC(r, &f)
			if err != nil || c != b.ComputedCRC() {
				t.Fatalf("%s at %d: FrameCRC %#x, %v; ComputedCRC %#x", rel, pos, c, err, b.ComputedCRC())
			}
			pos += f.Size
		}
		if _, err := fr.ReadFrame(r, pos, size); err != io.EOF {
			t.Errorf("%s: after the last batch: %v, want io.EOF", rel, err)
		}
	}
}

// TestReadFrameEnds: FileLogInputStream.nextBatch's three ends.
func TestReadFrameEnds(t *testing.T) {
	entry := make([]byte, 40)
	var fr FrameReader
	cases := []struct {
		name string
		size int32
		end  int64
		want error
	}{
		{"17 bytes or fewer remain", 26, 17, io.EOF},
		{"entry past the end", 100, 40, io.EOF},
		{"size below 14", 13, 40, ErrFrameSize},
	}
	for _, c := range cases {
		binary.BigEndian.PutUint32(entry[8:], uint32(c.size))
		_, err := fr.ReadFrame(bytes.NewReader(entry), 0, c.end)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

package fetch

import (
	"os"

	"github.com/klog-dev/klog/format"
)

// ListOffsets special timestamps (ListOffsetsRequest).
const (
	LatestTimestamp       = -1
	EarliestTimestamp     = -2
	MaxTimestampTimestamp = -3
)

// OffsetForTime answers a ListOffsets query as Partition.fetchOffsetForTimestamp
// does for a consumer: EarliestTimestamp gives the log start offset,
// LatestTimestamp the high watermark (the last stable offset for
// read_committed), MaxTimestampTimestamp the offset of the record with the
// largest timestamp, and a timestamp the first offset whose record timestamp
// is at least it. Results at or past the fetchable bound are "none" (ok false).
// It returns the offset and the record timestamp (-1 when not applicable).
func (l *Log) OffsetForTime(ts int64, iso Isolation, hw int64) (offset, timestamp int64, ok bool, err error) {
	if hw < 0 {
		hw = l.HighWatermark()
	}
	bound := hw
	if iso == ReadCommitted {
		bound = l.LastStableOffset(hw)
	}
	switch ts {
	case EarliestTimestamp:
		return l.logStart, -1, true, nil
	case LatestTimestamp:
		return bound, -1, true, nil
	}
	bestOff, bestTS := int64(-1), int64(-1)
	var rr format.RecordReader
	var rec format.Record
	for _, s := range l.segs {
		f, err := os.Open(s.path)
		if err != nil {
			return 0, 0, false, err
		}
		sc := format.NewScanner(f, s.size, format.ScanOptions{})
		for {
			b, err := sc.Next()
			if err != nil {
				break
			}
			if b.BaseOffset >= bound {
				break
			}
			if ts >= 0 && b.MaxTimestamp < ts {
				continue
			}
			if ts == MaxTimestampTimestamp && b.MaxTimestamp <= bestTS {
				continue
			}
			if rr.Reset(b) != nil {
				continue
			}
			for {
				if err := rr.Next(&rec); err != nil {
					break
				}
				if rec.Offset >= bound {
					break
				}
				if ts >= 0 && rec.Timestamp >= ts {
					f.Close()
					return rec.Offset, rec.Timestamp, true, nil
				}
				if ts == MaxTimestampTimestamp && rec.Timestamp > bestTS {
					bestOff, bestTS = rec.Offset, rec.Timestamp
				}
			}
		}
		f.Close()
	}
	if ts == MaxTimestampTimestamp && bestOff >= 0 {
		return bestOff, bestTS, true, nil
	}
	return -1, -1, false, nil
}

package verify

import (
	"errors"

	"github.com/klog-dev/klog/format"
)

// smallDecompressBytes is what each job may decompress a batch to without
// asking: real batches are far smaller (message.max.bytes defaults to 1 MiB
// before compression).
const smallDecompressBytes = 4 << 20

// decompressBudget bounds the memory that all jobs of a run spend on
// decompression, whatever --jobs is: every job may decompress a batch to
// smallDecompressBytes, and one job at a time, holding the single large
// slot, up to the full per-batch cap (format.DefaultMaxDecompressedBytes).
// Decompression bombs are thus paid for once, not once per job.
type decompressBudget struct {
	full int
	slot chan struct{}
}

func newDecompressBudget(full int) *decompressBudget {
	if full <= 0 {
		full = format.DefaultMaxDecompressedBytes
	}
	return &decompressBudget{full: full, slot: make(chan struct{}, 1)}
}

// small is the per-job cap.
func (d *decompressBudget) small() int {
	if d == nil {
		return 0
	}
	return min(d.full, smallDecompressBytes)
}

// retry reports whether err is the small cap being hit (and the full cap is
// larger); it then takes the large slot and raises the cap of the reader
// the caller resets next.
func (d *decompressBudget) retry(err error) bool {
	if d == nil || err == nil || d.full <= smallDecompressBytes {
		return false
	}
	var pe *format.PosError
	if !errors.As(err, &pe) || !errors.Is(err, format.ErrTooLarge) || (pe.Field != "records" && pe.Field != "value") {
		return false
	}
	d.slot <- struct{}{}
	return true
}

// release drops the reader's large buffers and decoders and frees the slot.
func (d *decompressBudget) release(rr *format.RecordReader) {
	*rr = format.RecordReader{}
	rr.Decompressor.MaxBytes = d.small()
	<-d.slot
}

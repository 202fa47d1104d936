package benchref

import (
	"bufio"
	"encoding/binary"
	"io"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KmsgProduce writes the lines of r (each a value, without its newline) as
// uncompressed v2 record batches to w, closing a batch as klog produce
// does: at maxRecords records, or once its values reach maxBytes bytes.
// Each record is encoded with kmsg.Record.AppendTo as it is read (its
// length computed with kbin's varint sizes), each batch with
// kmsg.RecordBatch.AppendTo and its CRC-32C (klog's own, format.ChecksumC:
// the one CRC home, so that the comparison is of the rest), and the batches
// leave through a 1 MiB bufio.Writer. Nothing is allocated per line once
// the buffers have grown. There are no indexes: it is the floor of
// encoding the same batches.
func KmsgProduce(r io.Reader, w io.Writer, maxRecords, maxBytes int) error {
	in := bufio.NewReaderSize(r, 1<<20)
	out := bufio.NewWriterSize(w, 1<<20)
	var recs, batch []byte
	var n, pending int
	var offset int64
	first := int64(-1)
	flush := func() error {
		if n == 0 {
			return nil
		}
		b := kmsg.RecordBatch{
			FirstOffset: offset, Magic: 2, LastOffsetDelta: int32(n - 1),
			FirstTimestamp: first, MaxTimestamp: first,
			ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
			NumRecords: int32(n), Records: recs,
		}
		b.Length = int32(49 + len(recs)) // everything after the length field
		batch = b.AppendTo(batch[:0])
		binary.BigEndian.PutUint32(batch[17:], format.ChecksumC(batch[21:]))
		offset += int64(n)
		recs, n, pending = recs[:0], 0, 0
		_, err := out.Write(batch)
		return err
	}
	for {
		line, err := in.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return bufio.ErrBufferFull // lines of a MiB are not this program's input
		}
		if len(line) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return err
		}
		if k := len(line); k > 0 && line[k-1] == '\n' {
			line = line[:k-1]
		}
		if n == 0 {
			first = time.Now().UnixMilli()
		}
		rec := kmsg.Record{OffsetDelta: int32(n), Value: line}
		rec.Length = int32(1 + kbin.VarlongLen(0) + kbin.VarintLen(rec.OffsetDelta) + kbin.VarintLen(-1) +
			kbin.VarintLen(int32(len(line))) + len(line) + kbin.VarintLen(0))
		recs = rec.AppendTo(recs)
		n++
		pending += len(line)
		if n >= maxRecords || (maxBytes > 0 && pending >= maxBytes) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return out.Flush()
}

package dump

import "github.com/klog-dev/klog/format"

// AppendBatchLine appends kafka-dump-log's line for batch b (printBatchLevel:
// "baseOffset: … position: … isvalid: …"), newline included, exactly as a
// dump prints it. For callers that print single batches as they come
// (klog tail).
func AppendBatchLine(dst []byte, b *format.Batch) []byte {
	return appendBatchLine(dst, b)
}

// AppendRecordLine appends kafka-dump-log's deep-iteration line for record r
// of batch b ("| offset: … headerKeys: [...]", with " key: … payload: …" when
// printData), newline included. A control record whose key or value Kafka
// cannot decode leaves the line without its newline and returns the error,
// where kafka-dump-log dies.
func AppendRecordLine(dst []byte, b *format.Batch, r *format.Record, printData bool) ([]byte, error) {
	t := textRenderer{opts: Options{Deep: true, PrintData: printData}}
	return t.appendRecord(dst, b, r)
}

package dump

import (
	"bufio"
	"encoding/base64"
	"io"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/verify"
)

// textRenderer writes kafka-dump-log 4.3.1's exact lines. Every literal
// string below is Kafka's; the comments name the DumpLogSegments.java method
// each line-writer mirrors.
type textRenderer struct {
	w    *bufio.Writer
	opts Options
	line []byte
	dec  *internaltopic.Decoder // --offsets-decoder etc. (decoder.go); nil without one
	cd   *contentDecoder        // --key-decoder-class etc. (classdecoder.go); nil for the default
}

func newTextRenderer(w io.Writer, opts Options) *textRenderer {
	return &textRenderer{w: bufio.NewWriterSize(w, 256<<10), opts: opts, line: make([]byte, 0, 1024)}
}

func (t *textRenderer) flush() error { return t.w.Flush() }

// dumping: main loop, "Dumping " + file.
func (t *textRenderer) dumping(p string) {
	t.w.WriteString("Dumping ")
	t.w.WriteString(p)
	t.w.WriteByte('\n')
}

// ignored: main loop default case; Kafka writes it to stderr, which is
// unbuffered there, so flush stdout first to keep the interleaving.
func (t *textRenderer) ignored(p string, why error) {}

func (t *textRenderer) unreadable(p string, err error) {}

// logHeader: dumpLog's first line.
func (t *textRenderer) logHeader(p, header string) {
	t.w.WriteString(header)
	t.w.WriteByte('\n')
}

func (t *textRenderer) fileStart(p string, size int64) {}

// batchPrefix writes the part of printBatchLevel before " position:".
func batchPrefix(l []byte, b *format.Batch) []byte {
	if !b.IsV2() {
		l = append(l, "offset: "...)
		return strconv.AppendInt(l, b.LastOffset(), 10)
	}
	l = append(l, "baseOffset: "...)
	l = strconv.AppendInt(l, b.BaseOffset, 10)
	l = append(l, " lastOffset: "...)
	l = strconv.AppendInt(l, b.LastOffset(), 10)
	l = append(l, " count: "...)
	l = strconv.AppendInt(l, int64(b.RecordCount), 10)
	l = append(l, " baseSequence: "...)
	l = strconv.AppendInt(l, int64(b.BaseSequence), 10)
	l = append(l, " lastSequence: "...)
	l = strconv.AppendInt(l, int64(b.LastSequence()), 10)
	l = append(l, " producerId: "...)
	l = strconv.AppendInt(l, b.ProducerID, 10)
	l = append(l, " producerEpoch: "...)
	l = strconv.AppendInt(l, int64(b.ProducerEpoch), 10)
	l = append(l, " partitionLeaderEpoch: "...)
	l = strconv.AppendInt(l, int64(b.PartitionLeaderEpoch), 10)
	l = append(l, " isTransactional: "...)
	l = strconv.AppendBool(l, b.IsTransactional())
	l = append(l, " isControl: "...)
	l = strconv.AppendBool(l, b.IsControl())
	l = append(l, " deleteHorizonMs: "...)
	if h, ok := b.DeleteHorizonMs(); ok {
		l = append(l, "OptionalLong["...)
		l = strconv.AppendInt(l, h, 10)
		l = append(l, ']')
	} else {
		l = append(l, "OptionalLong.empty"...)
	}
	return l
}

// batch: printBatchLevel.
func (t *textRenderer) batch(b *format.Batch) {
	l := appendBatchLine(t.line[:0], b)
	t.w.Write(l)
	t.line = l
}

// appendBatchLine appends printBatchLevel's whole line, newline included.
func appendBatchLine(l []byte, b *format.Batch) []byte {
	l = batchPrefix(l, b)
	l = append(l, " position: "...)
	l = strconv.AppendInt(l, b.Pos, 10)
	l = append(l, ' ')
	l = append(l, b.TimestampType().String()...)
	l = append(l, ": "...)
	l = strconv.AppendInt(l, b.MaxTimestamp, 10)
	l = append(l, " size: "...)
	l = strconv.AppendInt(l, b.Size(), 10)
	l = append(l, " magic: "...)
	l = strconv.AppendInt(l, int64(b.Magic), 10)
	l = append(l, " compresscodec: "...)
	l = append(l, b.Compression().String()...)
	l = append(l, " crc: "...)
	l = strconv.AppendUint(l, uint64(b.CRC), 10)
	l = append(l, " isvalid: "...)
	l = strconv.AppendBool(l, b.Valid())
	return append(l, '\n')
}

// batchPrefixOnly: printBatchLevel when CompressionType.forId throws.
func (t *textRenderer) batchPrefixOnly(b *format.Batch) {
	l := batchPrefix(t.line[:0], b)
	t.w.Write(l)
	t.line = l
}

// record: dumpBatchRecords + printRecordMetadata + printControlRecord +
// printRecordContents, one line per record. A control record Kafka cannot
// decode ends the dump after the part of the line already printed.
func (t *textRenderer) record(b *format.Batch, r *format.Record) error {
	l, ctlErr := t.appendRecord(t.line[:0], b, r)
	t.w.Write(l)
	t.line = l
	return ctlErr
}

// appendRecord appends record's line to l: newline included unless a
// control record could not be decoded, whose error it returns.
func (t *textRenderer) appendRecord(l []byte, b *format.Batch, r *format.Record) ([]byte, error) {
	var ctlErr error
	contents := t.opts.PrintData && !b.IsControl()
	if contents && t.cd != nil && t.cd.cur.extErr != nil {
		// klog's external decoder failed: nothing of the record is printed.
		return l, t.cd.cur.extErr
	}
	if !t.opts.SkipRecordMetadata {
		l = append(l, "| offset: "...)
		l = strconv.AppendInt(l, r.Offset, 10)
		l = append(l, ' ')
		l = append(l, b.TimestampType().String()...)
		l = append(l, ": "...)
		l = strconv.AppendInt(l, r.Timestamp, 10)
		l = append(l, " keySize: "...)
		l = strconv.AppendInt(l, int64(r.KeySize), 10)
		l = append(l, " valueSize: "...)
		l = strconv.AppendInt(l, int64(r.ValueSize), 10)
		if b.IsV2() {
			l = append(l, " sequence: "...)
			l = strconv.AppendInt(l, int64(r.Sequence), 10)
			l = append(l, " headerKeys: ["...)
			for i, h := range r.Headers {
				if i > 0 {
					l = append(l, ',')
				}
				l = format.AppendJavaUTF8(l, h.Key)
			}
			l = append(l, ']')
		}
		if r.Legacy {
			l = append(l, " isValid: "...)
			l = strconv.AppendBool(l, r.Valid)
			l = append(l, " crc: "...)
			l = strconv.AppendUint(l, uint64(r.CRC), 10)
		}
		if b.IsControl() {
			l, ctlErr = appendControl(l, r)
		}
	}
	switch {
	case ctlErr != nil || !contents:
	case t.opts.View.Decodes():
		l = t.appendViewText(l, r)
	case t.dec != nil:
		l, ctlErr = appendDecodedText(l, t.dec.Current(), t.opts.SkipRecordMetadata)
	case t.cd != nil:
		// A decoder class threw: Kafka dies after the metadata it printed.
		if ctlErr = t.cd.cur.err; ctlErr == nil {
			l = appendContentsText(l, &t.cd.cur, t.opts.SkipRecordMetadata)
		}
	default:
		prefix := " "
		if t.opts.SkipRecordMetadata {
			prefix = "| "
		}
		if r.Key != nil {
			l = append(l, prefix...)
			l = append(l, "key: "...)
			l = appendEncoded(l, r.Key, t.opts.KeyEncoding)
			prefix = " "
		}
		if r.Value != nil {
			l = append(l, prefix...)
			l = append(l, "payload: "...)
			l = appendEncoded(l, r.Value, t.opts.ValueEncoding)
		}
	}
	if ctlErr == nil {
		l = append(l, '\n')
	}
	return l, ctlErr
}

// appendControl: printControlRecord.
func appendControl(l []byte, r *format.Record) ([]byte, error) {
	k, err := format.ParseControlKey(r.Key)
	if err != nil {
		return l, err
	}
	switch k.Type {
	case format.ControlAbort, format.ControlCommit:
		m, err := format.ParseEndTxnMarker(r.Value)
		if err != nil {
			return l, err
		}
		l = append(l, " endTxnMarker: "...)
		l = append(l, k.Type.String()...)
		l = append(l, " coordinatorEpoch: "...)
		return strconv.AppendInt(l, int64(m.CoordinatorEpoch), 10), nil
	case format.ControlLeaderChange:
		m, err := format.ParseLeaderChange(r.Value)
		if err != nil {
			return l, err
		}
		l = append(l, " LeaderChange: "...)
		return appendLeaderChangeJSON(l, &m), nil
	case format.ControlSnapshotHeader:
		m, err := format.ParseSnapshotHeader(r.Value)
		if err != nil {
			return l, err
		}
		l = append(l, " SnapshotHeader "...)
		l = append(l, `{"version":`...)
		l = strconv.AppendInt(l, int64(m.Version), 10)
		l = append(l, `,"lastContainedLogTimestamp":`...)
		l = strconv.AppendInt(l, m.LastContainedLogTimestamp, 10)
		return append(l, '}'), nil
	case format.ControlSnapshotFooter:
		m, err := format.ParseSnapshotFooter(r.Value)
		if err != nil {
			return l, err
		}
		l = append(l, " SnapshotFooter "...)
		l = append(l, `{"version":`...)
		l = strconv.AppendInt(l, int64(m.Version), 10)
		return append(l, '}'), nil
	case format.ControlKRaftVersion:
		m, err := format.ParseKRaftVersion(r.Value)
		if err != nil {
			return l, err
		}
		l = append(l, " KRaftVersion "...)
		l = append(l, `{"version":`...)
		l = strconv.AppendInt(l, int64(m.Version), 10)
		l = append(l, `,"kRaftVersion":`...)
		l = strconv.AppendInt(l, int64(m.KRaftVersion), 10)
		return append(l, '}'), nil
	case format.ControlKRaftVoters:
		m, err := format.ParseVoters(r.Value)
		if err != nil {
			return l, err
		}
		l = append(l, " KRaftVoters "...)
		return appendVotersJSON(l, &m), nil
	}
	l = append(l, " controlType: "...)
	l = append(l, k.Type.String()...)
	l = append(l, '(')
	l = strconv.AppendInt(l, int64(k.Type), 10)
	return append(l, ')'), nil
}

// LeaderChangeMessageJsonConverter.write: fields in schema order.
func appendLeaderChangeJSON(l []byte, m *format.LeaderChange) []byte {
	l = append(l, `{"version":`...)
	l = strconv.AppendInt(l, int64(m.Version), 10)
	l = append(l, `,"leaderId":`...)
	l = strconv.AppendInt(l, int64(m.LeaderID), 10)
	l = append(l, `,"voters":`...)
	l = appendVoterIDs(l, m.Voters)
	l = append(l, `,"grantingVoters":`...)
	l = appendVoterIDs(l, m.GrantingVoters)
	return append(l, '}')
}

func appendVoterIDs(l []byte, ids []int32) []byte {
	l = append(l, '[')
	for i, id := range ids {
		if i > 0 {
			l = append(l, ',')
		}
		l = append(l, `{"voterId":`...)
		l = strconv.AppendInt(l, int64(id), 10)
		l = append(l, '}')
	}
	return append(l, ']')
}

// VotersRecordJsonConverter.write.
func appendVotersJSON(l []byte, m *format.Voters) []byte {
	l = append(l, `{"version":`...)
	l = strconv.AppendInt(l, int64(m.Version), 10)
	l = append(l, `,"voters":[`...)
	for i := range m.Voters {
		v := &m.Voters[i]
		if i > 0 {
			l = append(l, ',')
		}
		l = append(l, `{"voterId":`...)
		l = strconv.AppendInt(l, int64(v.VoterID), 10)
		l = append(l, `,"voterDirectoryId":"`...)
		l = base64.RawURLEncoding.AppendEncode(l, v.VoterDirectoryID[:])
		l = append(l, `","endpoints":[`...)
		for j, e := range v.Endpoints {
			if j > 0 {
				l = append(l, ',')
			}
			l = append(l, `{"name":`...)
			l = internaltopic.AppendJacksonString(l, e.Name)
			l = append(l, `,"host":`...)
			l = internaltopic.AppendJacksonString(l, e.Host)
			l = append(l, `,"port":`...)
			l = strconv.AppendUint(l, uint64(e.Port), 10)
			l = append(l, '}')
		}
		l = append(l, `],"kRaftVersionFeature":{"minSupportedVersion":`...)
		l = strconv.AppendInt(l, int64(v.MinSupportedVersion), 10)
		l = append(l, `,"maxSupportedVersion":`...)
		l = strconv.AppendInt(l, int64(v.MaxSupportedVersion), 10)
		l = append(l, "}}"...)
	}
	return append(l, "]}"...)
}

func (t *textRenderer) problem(p verify.Problem) {}

// trailing: printTrailingBytes.
func (t *textRenderer) trailing(name string, tail format.Tail, _ verify.Problem) {
	l := append(t.line[:0], "Found "...)
	l = strconv.AppendInt(l, tail.Bytes, 10)
	l = append(l, " invalid bytes at the end of "...)
	l = append(l, name...)
	l = append(l, '\n')
	t.w.Write(l)
	t.line = l
}

func (t *textRenderer) fileEnd(p string, batches, records int64, tail format.Tail) {}

func (t *textRenderer) indexStart(path, kind string, size int64, entries int) {}

// indexEmpty: dumpIndex, "<file> is empty.".
func (t *textRenderer) indexEmpty(path string) {
	t.w.WriteString(path)
	t.w.WriteString(" is empty.\n")
}

// sanityPassed: dumpIndex/dumpTimeIndex with --index-sanity-check.
func (t *textRenderer) sanityPassed(path string) {
	t.w.WriteString(path)
	t.w.WriteString(" passed sanity check.\n")
}

// indexEntry: dumpIndex.
func (t *textRenderer) indexEntry(e format.IndexEntry) {
	l := append(t.line[:0], "offset: "...)
	l = strconv.AppendInt(l, e.Offset, 10)
	l = append(l, " position: "...)
	l = strconv.AppendInt(l, e.Pos, 10)
	t.w.Write(append(l, '\n'))
	t.line = l
}

// timeEntry: dumpTimeIndex.
func (t *textRenderer) timeEntry(e format.TimeEntry) {
	l := append(t.line[:0], "timestamp: "...)
	l = strconv.AppendInt(l, e.Timestamp, 10)
	l = append(l, " offset: "...)
	l = strconv.AppendInt(l, e.Offset, 10)
	t.w.Write(append(l, '\n'))
	t.line = l
}

// producerEntry: dumpProducerIdSnapshot (4.3: no trailing space).
func (t *textRenderer) producerEntry(e *format.ProducerEntry) {
	l := append(t.line[:0], "producerId: "...)
	l = strconv.AppendInt(l, e.ProducerID, 10)
	l = append(l, " producerEpoch: "...)
	l = strconv.AppendInt(l, int64(e.Epoch), 10)
	l = append(l, " coordinatorEpoch: "...)
	l = strconv.AppendInt(l, int64(e.CoordinatorEpoch), 10)
	l = append(l, " currentTxnFirstOffset: "...)
	if e.CurrentTxnFirstOffset >= 0 {
		l = append(l, "OptionalLong["...)
		l = strconv.AppendInt(l, e.CurrentTxnFirstOffset, 10)
		l = append(l, ']')
	} else {
		l = append(l, "OptionalLong.empty"...)
	}
	l = append(l, " lastTimestamp: "...)
	l = strconv.AppendInt(l, e.Timestamp, 10)
	if e.LastOffset >= 0 {
		l = append(l, " firstSequence: "...)
		l = strconv.AppendInt(l, int64(e.FirstSequence()), 10)
		l = append(l, " lastSequence: "...)
		l = strconv.AppendInt(l, int64(e.LastSequence), 10)
		l = append(l, " lastOffset: "...)
		l = strconv.AppendInt(l, e.LastOffset, 10)
		l = append(l, " offsetDelta: "...)
		l = strconv.AppendInt(l, int64(e.OffsetDelta), 10)
		l = append(l, " timestamp: "...)
		l = strconv.AppendInt(l, e.Timestamp, 10)
	}
	t.w.Write(append(l, '\n'))
	t.line = l
}

// abortedTxn: dumpTxnIndex.
func (t *textRenderer) abortedTxn(a *format.AbortedTxn) {
	l := append(t.line[:0], "version: "...)
	l = strconv.AppendInt(l, int64(a.Version), 10)
	l = append(l, " producerId: "...)
	l = strconv.AppendInt(l, a.ProducerID, 10)
	l = append(l, " firstOffset: "...)
	l = strconv.AppendInt(l, a.FirstOffset, 10)
	l = append(l, " lastOffset: "...)
	l = strconv.AppendInt(l, a.LastOffset, 10)
	l = append(l, " lastStableOffset: "...)
	l = strconv.AppendInt(l, a.LastStableOffset, 10)
	t.w.Write(append(l, '\n'))
	t.line = l
}

// checkpointHeader starts a checkpoint file in kafka-dump-log's style (Kafka
// itself ignores these files).
func (t *textRenderer) checkpointHeader(path, kind string, entries int) {
	l := append(t.line[:0], "version: 0 entries: "...)
	l = strconv.AppendInt(l, int64(entries), 10)
	t.w.Write(append(l, '\n'))
	t.line = l
}

func (t *textRenderer) epochEntry(e format.EpochEntry) {
	l := append(t.line[:0], "epoch: "...)
	l = strconv.AppendInt(l, int64(e.Epoch), 10)
	l = append(l, " startOffset: "...)
	l = strconv.AppendInt(l, e.StartOffset, 10)
	t.w.Write(append(l, '\n'))
	t.line = l
}

func (t *textRenderer) offsetEntry(e format.OffsetEntry) {
	l := append(t.line[:0], "topic: "...)
	l = append(l, e.Topic...)
	l = append(l, " partition: "...)
	l = strconv.AppendInt(l, int64(e.Partition), 10)
	l = append(l, " offset: "...)
	l = strconv.AppendInt(l, e.Offset, 10)
	t.w.Write(append(l, '\n'))
	t.line = l
}

func (t *textRenderer) partitionMetadata(path string, m format.PartitionMetadata) {
	l := append(t.line[:0], "version: "...)
	l = strconv.AppendInt(l, int64(m.Version), 10)
	l = append(l, " topicId: "...)
	l = append(l, m.TopicID...)
	t.w.Write(append(l, '\n'))
	t.line = l
}

package tiered

import (
	"sort"
	"strconv"
)

// SegmentState is RemoteLogSegmentState: where a segment's copy to, or
// deletion from, remote storage stands.
type SegmentState int8

// The states, with the ids Kafka's serde writes.
const (
	CopySegmentStarted    SegmentState = 0
	CopySegmentFinished   SegmentState = 1
	DeleteSegmentStarted  SegmentState = 2
	DeleteSegmentFinished SegmentState = 3
)

func (s SegmentState) String() string {
	switch s {
	case CopySegmentStarted:
		return "COPY_SEGMENT_STARTED"
	case CopySegmentFinished:
		return "COPY_SEGMENT_FINISHED"
	case DeleteSegmentStarted:
		return "DELETE_SEGMENT_STARTED"
	case DeleteSegmentFinished:
		return "DELETE_SEGMENT_FINISHED"
	}
	return "UNKNOWN(" + strconv.Itoa(int(s)) + ")"
}

// validTransition is RemoteLogSegmentState.isValidTransition (from < 0: no
// state yet).
func validTransition(from, to SegmentState) bool {
	switch {
	case from < 0:
		return to == CopySegmentStarted
	case from == to:
		return true // idempotent, for retries and fail-over
	case from == CopySegmentStarted:
		return to == CopySegmentFinished || to == DeleteSegmentStarted
	case from == CopySegmentFinished:
		return to == DeleteSegmentStarted
	case from == DeleteSegmentStarted:
		return to == DeleteSegmentFinished
	}
	return false
}

// PartitionDeleteState is RemotePartitionDeleteState.
type PartitionDeleteState int8

// The partition delete states.
const (
	DeletePartitionMarked   PartitionDeleteState = 0
	DeletePartitionStarted  PartitionDeleteState = 1
	DeletePartitionFinished PartitionDeleteState = 2
)

func (s PartitionDeleteState) String() string {
	switch s {
	case DeletePartitionMarked:
		return "DELETE_PARTITION_MARKED"
	case DeletePartitionStarted:
		return "DELETE_PARTITION_STARTED"
	case DeletePartitionFinished:
		return "DELETE_PARTITION_FINISHED"
	}
	return "UNKNOWN(" + strconv.Itoa(int(s)) + ")"
}

// EpochStart is one entry of a segment's leader epochs: the epoch and the
// first offset it wrote in the segment.
type EpochStart struct {
	Epoch  int32 `json:"epoch"`
	Offset int64 `json:"offset"`
}

// MetadataPos is where a metadata record is: the __remote_log_metadata
// partition directory and the record's offset.
type MetadataPos struct {
	Partition string `json:"partition"`
	Offset    int64  `json:"offset"`
}

func (p MetadataPos) String() string {
	return p.Partition + "@" + strconv.FormatInt(p.Offset, 10)
}

// EventKind is the apiKey of a __remote_log_metadata record
// (RemoteLogMetadataSerde).
type EventKind int8

// The record types.
const (
	EventSegment         EventKind = 0 // RemoteLogSegmentMetadataRecord
	EventSegmentUpdate   EventKind = 1 // RemoteLogSegmentMetadataUpdateRecord
	EventPartitionDelete EventKind = 2 // RemotePartitionDeleteMetadataRecord
	EventSnapshot        EventKind = 3 // RemoteLogSegmentMetadataSnapshotRecord
)

// Event is one decoded __remote_log_metadata record.
type Event struct {
	Kind      EventKind
	Pos       MetadataPos
	Partition TopicPartition
	SegmentID Uuid
	// Segment fields (EventSegment, EventSnapshot; an update carries
	// only CustomMetadata and State).
	StartOffset      int64
	EndOffset        int64
	MaxTimestampMs   int64
	BrokerID         int32
	EventTimestampMs int64
	LeaderEpochs     []EpochStart
	SizeInBytes      int32
	CustomMetadata   []byte // nil: absent
	State            SegmentState
	TxnIdxEmpty      bool
	// DeleteState is EventPartitionDelete's.
	DeleteState PartitionDeleteState
}

// SegmentMetadata is one remote segment as the metadata leaves it
// (RemoteLogSegmentMetadata after createWithUpdates).
type SegmentMetadata struct {
	Partition        TopicPartition
	ID               Uuid
	StartOffset      int64
	EndOffset        int64
	MaxTimestampMs   int64
	BrokerID         int32
	EventTimestampMs int64
	LeaderEpochs     []EpochStart
	SizeInBytes      int32
	CustomMetadata   []byte
	State            SegmentState
	TxnIdxEmpty      bool
	// First and Last are the records that created and last changed it.
	First, Last MetadataPos
}

// EpochEnd is the last offset epoch covers in the segment
// (RemoteLogMetadataCache.highestOffsetForEpoch).
func (m *SegmentMetadata) EpochEnd(epoch int32) int64 {
	for i, e := range m.LeaderEpochs {
		if e.Epoch == epoch {
			if i+1 < len(m.LeaderEpochs) {
				return m.LeaderEpochs[i+1].Offset - 1
			}
			return m.EndOffset
		}
	}
	return -1
}

// MetadataProblem is a record the fold could not apply, as Kafka's
// RemoteLogMetadataCache drops or refuses it.
type MetadataProblem struct {
	Pos       MetadataPos
	Partition TopicPartition
	SegmentID Uuid
	Message   string
	placed    bool
}

// PartitionLineage is the remote history of one partition.
type PartitionLineage struct {
	Partition TopicPartition
	// Segments by id, in any state (Kafka forgets
	// DELETE_SEGMENT_FINISHED; klog keeps them to find what is still
	// stored).
	Segments map[Uuid]*SegmentMetadata
	// Delete is the partition's delete state, if any record marked it.
	Delete    *PartitionDeleteState
	DeletePos MetadataPos
	// epochs is RemoteLogLeaderEpochState per epoch: the segments the
	// epoch's chain serves, by start offset.
	epochs map[int32]*epochState
}

type epochState struct {
	// chain is the epoch's offsetToId: (start offset, segment) sorted
	// by offset.
	chain   []chainEntry
	highest int64 // -1: none
}

type chainEntry struct {
	offset int64
	id     Uuid
}

// find is the index of the first entry at or after offset.
func (st *epochState) find(offset int64) int {
	return sort.Search(len(st.chain), func(i int) bool { return st.chain[i].offset >= offset })
}

func (st *epochState) put(offset int64, id Uuid) {
	i := st.find(offset)
	if i < len(st.chain) && st.chain[i].offset == offset {
		st.chain[i].id = id
		return
	}
	st.chain = append(st.chain, chainEntry{})
	copy(st.chain[i+1:], st.chain[i:])
	st.chain[i] = chainEntry{offset: offset, id: id}
}

// removeIf drops the entry at offset if it is id's.
func (st *epochState) removeIf(offset int64, id Uuid) {
	i := st.find(offset)
	if i < len(st.chain) && st.chain[i].offset == offset && st.chain[i].id == id {
		st.chain = append(st.chain[:i], st.chain[i+1:]...)
	}
}

// Lineage folds the records of __remote_log_metadata into each partition's
// segments, as RemotePartitionMetadataStore and RemoteLogMetadataCache do.
type Lineage struct {
	Partitions map[TopicPartition]*PartitionLineage
	Problems   []MetadataProblem
	// Records counts the events applied or dropped.
	Records int64
}

// NewLineage returns an empty fold.
func NewLineage() *Lineage {
	return &Lineage{Partitions: map[TopicPartition]*PartitionLineage{}}
}

func (l *Lineage) partition(tp TopicPartition) *PartitionLineage {
	p := l.Partitions[tp]
	if p == nil {
		p = &PartitionLineage{Partition: tp, Segments: map[Uuid]*SegmentMetadata{}, epochs: map[int32]*epochState{}}
		l.Partitions[tp] = p
	}
	return p
}

func (l *Lineage) problem(e *Event, msg string) {
	l.Problems = append(l.Problems, MetadataProblem{Pos: e.Pos, Partition: e.Partition, SegmentID: e.SegmentID, Message: msg})
}

// Apply folds one event, in the order of its metadata partition.
func (l *Lineage) Apply(e *Event) {
	l.Records++
	switch e.Kind {
	case EventSegment, EventSnapshot:
		l.addSegment(e)
	case EventSegmentUpdate:
		l.update(e)
	case EventPartitionDelete:
		p := l.partition(e.Partition)
		st := e.DeleteState
		p.Delete, p.DeletePos = &st, e.Pos
	default:
		l.problem(e, "unknown record type "+strconv.Itoa(int(e.Kind)))
	}
}

// addSegment is RemoteLogMetadataCache.addCopyInProgressSegment (for a
// snapshot record, the segment as the snapshot holds it).
func (l *Lineage) addSegment(e *Event) {
	p := l.partition(e.Partition)
	if e.Kind == EventSegment && e.State != CopySegmentStarted {
		l.problem(e, "a segment record in state "+e.State.String()+"; Kafka accepts only "+CopySegmentStarted.String()+" (IllegalArgumentException)")
		return
	}
	old := p.Segments[e.SegmentID]
	if e.Kind == EventSegment && old != nil && !validTransition(old.State, e.State) {
		l.problem(e, "the segment is already "+old.State.String()+"; Kafka drops this "+e.State.String()+" record")
		return
	}
	epochs := append([]EpochStart(nil), e.LeaderEpochs...)
	sort.Slice(epochs, func(i, j int) bool { return epochs[i].Epoch < epochs[j].Epoch })
	m := &SegmentMetadata{Partition: e.Partition, ID: e.SegmentID, StartOffset: e.StartOffset, EndOffset: e.EndOffset,
		MaxTimestampMs: e.MaxTimestampMs, BrokerID: e.BrokerID, EventTimestampMs: e.EventTimestampMs, LeaderEpochs: epochs,
		SizeInBytes: e.SizeInBytes, CustomMetadata: e.CustomMetadata, State: e.State, TxnIdxEmpty: e.TxnIdxEmpty, First: e.Pos, Last: e.Pos}
	if old != nil {
		m.First = old.First
	}
	p.Segments[e.SegmentID] = m
	if m.State == CopySegmentFinished {
		p.finished(m)
	}
}

// update is RemoteLogMetadataCache.updateRemoteLogSegmentMetadata.
func (l *Lineage) update(e *Event) {
	p := l.partition(e.Partition)
	m := p.Segments[e.SegmentID]
	if m == nil {
		l.problem(e, "an update to "+e.State.String()+" for a segment no earlier record created (Kafka: RemoteResourceNotFoundException)")
		return
	}
	if !validTransition(m.State, e.State) {
		l.problem(e, "the segment is "+m.State.String()+"; Kafka drops this update to "+e.State.String()+" (not a valid transition)")
		return
	}
	if e.State == CopySegmentStarted && m.State != CopySegmentStarted {
		l.problem(e, "an update to "+e.State.String()+" (Kafka: IllegalArgumentException)")
		return
	}
	n := *m
	n.State, n.BrokerID, n.EventTimestampMs, n.Last = e.State, e.BrokerID, e.EventTimestampMs, e.Pos
	if e.CustomMetadata != nil {
		n.CustomMetadata = e.CustomMetadata
	}
	p.Segments[e.SegmentID] = &n
	switch e.State {
	case CopySegmentFinished:
		p.finished(&n)
	case DeleteSegmentStarted:
		for _, es := range n.LeaderEpochs {
			p.epoch(es.Epoch).removeIf(es.Offset, n.ID)
		}
	}
}

func (p *PartitionLineage) epoch(e int32) *epochState {
	st := p.epochs[e]
	if st == nil {
		st = &epochState{highest: -1}
		p.epochs[e] = st
	}
	return st
}

// finished is RemoteLogLeaderEpochState.handleSegmentWithCopySegmentFinished
// State for each of the segment's epochs: the segment becomes the epoch's
// entry at its start offset, replacing entries at or after it.
func (p *PartitionLineage) finished(m *SegmentMetadata) {
	for _, es := range m.LeaderEpochs {
		st := p.epoch(es.Epoch)
		end := m.EpochEnd(es.Epoch)
		for len(st.chain) > 0 && st.chain[len(st.chain)-1].offset >= es.Offset && st.highest <= end {
			st.chain = st.chain[:len(st.chain)-1]
		}
		st.put(es.Offset, m.ID)
		if end > st.highest {
			st.highest = end
		}
	}
}

// Sorted lists the partition's segments by start offset, then end offset,
// then id.
func (p *PartitionLineage) Sorted() []*SegmentMetadata {
	out := make([]*SegmentMetadata, 0, len(p.Segments))
	for _, m := range p.Segments {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.StartOffset != b.StartOffset {
			return a.StartOffset < b.StartOffset
		}
		if a.EndOffset != b.EndOffset {
			return a.EndOffset < b.EndOffset
		}
		return a.ID.String() < b.ID.String()
	})
	return out
}

// Referenced reports whether some epoch's chain serves segment id (a
// COPY_SEGMENT_FINISHED segment that none serves was replaced by a later
// copy of its offsets, after an unclean election or a retried upload).
func (p *PartitionLineage) Referenced(id Uuid) bool {
	m := p.Segments[id]
	if m == nil {
		return false
	}
	for _, es := range m.LeaderEpochs {
		st := p.epochs[es.Epoch]
		if st == nil {
			continue
		}
		if i := st.find(es.Offset); i < len(st.chain) && st.chain[i].offset == es.Offset && st.chain[i].id == id {
			return true
		}
	}
	return false
}

// SegmentFor is RemoteLogMetadataCache.remoteLogSegmentMetadata: the
// finished segment epoch's chain serves offset from, or nil.
func (p *PartitionLineage) SegmentFor(epoch int32, offset int64) *SegmentMetadata {
	st := p.epochs[epoch]
	if st == nil {
		return nil
	}
	i := st.find(offset + 1) // floorEntry(offset): the last entry at or before it
	if i == 0 {
		return nil
	}
	m := p.Segments[st.chain[i-1].id]
	if m == nil || offset > m.EpochEnd(epoch) {
		return nil
	}
	return m
}

// HighestOffset is the highest offset copied to the remote tier under any
// epoch (RemoteLogMetadataManager.highestOffsetForEpoch over the epochs; like
// Kafka's, it does not go down when segments are deleted), or -1: what
// ListOffsets -5 (latest-tiered) answers.
func (p *PartitionLineage) HighestOffset() int64 {
	h := int64(-1)
	for _, st := range p.epochs {
		if st.highest > h {
			h = st.highest
		}
	}
	return h
}

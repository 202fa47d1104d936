package inspect

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/verify"
)

// Diff compares replicas of one partition from different brokers batch by
// batch: base and last offset, partition leader epoch, size and stored CRC
// (the CRC covers everything after the attributes, so equal CRCs, sizes and
// headers mean equal batches; nothing is decompressed). Followers copy the
// leader's batches byte for byte, so agreeing replicas hold the same batch
// sequence even where their segments roll at different offsets.
//
// For a leader (chosen, or inferred as the replica with the highest latest
// leader epoch, then the longest log), each other replica's truncation
// offset on rejoining is Kafka's leader-epoch rule,
// partition.FollowerTruncation — the rule klog replicate applies.

// DiffOptions configure Diff.
type DiffOptions struct {
	// Leader is the index in dirs of the leader, or -1 to infer it.
	Leader int
	// MaxExtraBatches bounds the batches listed per replica (the counts
	// and byte totals cover all of them); 0 means 1000.
	MaxExtraBatches int
	MaxBatchBytes   int
	// Records decodes the listed batches and lists their records (the
	// only time Diff decompresses anything), at most MaxExtraRecords of
	// them per replica (0: 10,000) holding at most MaxExtraRecordBytes of
	// keys, values and headers (0: 64 MiB): a batch can hold millions of
	// records, and the list is held until it is printed.
	Records             bool
	MaxExtraRecords     int
	MaxExtraRecordBytes int64
	// RecordJSON says how the records are written in JSON (keys and values
	// are always written; the zero value is the text encoding).
	RecordJSON ndjson.Options
}

// DiffBatch is one batch not held identically by every replica.
type DiffBatch struct {
	Type          string `json:"type"` // "diffBatch"
	BaseOffset    int64  `json:"baseOffset"`
	LastOffset    int64  `json:"lastOffset"`
	Epoch         int32  `json:"partitionLeaderEpoch"`
	ProducerID    int64  `json:"producerId"`
	ProducerEpoch int16  `json:"producerEpoch"`
	Records       int32  `json:"recordCount"`
	Bytes         int64  `json:"sizeBytes"`
	CRC           uint32 `json:"crc"`
	// RecordList holds the batch's records when DiffOptions.Records asks
	// for them.
	RecordList []DiffRecord `json:"recordList,omitempty"`

	seg int32
	pos int64
}

// DiffRecord is one record of a listed batch (DiffOptions.Records): what a
// truncation would lose. In JSON it is ndjson's record object, the shape
// every command prints (keys and values included, in the text encoding).
type DiffRecord struct {
	Type       string   `json:"type"` // "record"
	Offset     int64    `json:"offset"`
	Timestamp  int64    `json:"timestamp"`
	Key        []byte   `json:"key"`
	Value      []byte   `json:"value"`
	HeaderKeys []string `json:"headerKeys"`

	batch *format.Batch
	rec   format.Record
	opts  ndjson.Options
}

// MarshalJSON writes ndjson's record object.
func (d *DiffRecord) MarshalJSON() ([]byte, error) {
	opts := d.opts
	opts.Data = true
	l, _ := ndjson.RecordFields(ndjson.Begin(nil, "record"), d.batch, &d.rec, &opts)
	return ndjson.End(l), nil
}

// DiffEpoch is one leader-epoch history entry.
type DiffEpoch struct {
	Type        string `json:"type"` // "epoch"
	Epoch       int32  `json:"epoch"`
	StartOffset int64  `json:"startOffset"`
}

// DiffReplica is one replica's side.
type DiffReplica struct {
	Type           string `json:"type"` // "replica"
	Dir            string `json:"dir"`
	LogStartOffset int64  `json:"logStartOffset"`
	LogEndOffset   int64  `json:"logEndOffset"`
	// LatestEpoch is the last entry of Epochs (-1 when there is none).
	LatestEpoch int32 `json:"latestEpoch"`
	// Epochs is the leader-epoch history used for the truncation rule:
	// the leader-epoch-checkpoint, or (EpochSource "batches") the
	// partition leader epochs of the batches when there is none.
	Epochs      []DiffEpoch `json:"epochs"`
	EpochSource string      `json:"epochSource"`
	// EpochCheckpointMismatch: the checkpoint's history differs from the
	// one the batches show.
	EpochCheckpointMismatch bool `json:"epochCheckpointMismatch"`
	Leader                  bool `json:"leader"`
	// Behind: everything it holds, the leader holds identically, and the
	// leader holds more.
	Behind bool `json:"behind"`
	// Diverged: it holds batches the leader does not hold identically.
	Diverged bool `json:"diverged"`
	// ExtraBatches are its batches above the common offset (at most
	// DiffOptions.MaxExtraBatches of them; the counts cover all).
	ExtraBatches    []DiffBatch `json:"extraBatches"`
	ExtraBatchCount int64       `json:"extraBatchCount"`
	ExtraRecords    int64       `json:"extraRecords"`
	ExtraBytes      int64       `json:"extraBytes"`
	ExtraListCut    bool        `json:"extraBatchesTruncated"`
	// ExtraRecordListCut: with DiffOptions.Records, the records listed
	// stop before the end of the listed batches (the record bounds).
	ExtraRecordListCut bool    `json:"extraRecordsTruncated"`
	ExtraProducerIDs   []int64 `json:"extraProducerIds"`
	// TruncateTo is where it truncates when it rejoins the leader (nil
	// for the leader); LostBatches/LostRecords are what that removes and
	// the leader does not hold identically (the rest is fetched again).
	TruncateTo  *int64 `json:"truncateTo"`
	LostBatches int64  `json:"lostBatches"`
	LostRecords int64  `json:"lostRecords"`
	// Problems are batches that could not be read (the scan stops there).
	Problems []string `json:"problems"`
	// findings are the Problems the data is at fault for (Findings),
	// troubles counts the others (a read error, a file that shrank).
	findings []verify.Problem
	troubles int

	hw      int64
	batches []format.EpochEntry // epochs seen in the batches
	segs    []partition.Segment
}

// DiffReport is Diff's answer.
type DiffReport struct {
	Type string `json:"type"` // "diff"
	// CommonOffset is the last offset every replica holds identically
	// (-1 when they share nothing).
	CommonOffset int64 `json:"commonOffset"`
	// DivergentOffset and DivergentEpoch name the first offset where a
	// replica holds a batch another replica holds differently (nil when
	// no replica diverges), and the smaller of the two batches' leader
	// epochs there.
	DivergentOffset *int64 `json:"divergentOffset"`
	DivergentEpoch  *int32 `json:"divergentEpoch"`
	Identical       bool   `json:"identical"`
	Diverged        bool   `json:"diverged"`
	// Leader is the leader's directory and LeaderInferred whether Diff
	// chose it.
	Leader         string        `json:"leader"`
	LeaderInferred bool          `json:"leaderInferred"`
	Replicas       []DiffReplica `json:"replicas"`
}

// diffHead is what Diff keeps of a batch: its header fields.
type diffHead struct {
	base, last, pid int64
	pos             int64 // position in the segment
	seg             int32 // index in the replica's segments
	size            int64
	crc             uint32
	epoch, count    int32
	pepoch          int16
	magic           int8
}

func (h *diffHead) v2() bool { return h.magic >= format.MagicV2 }

func headOf(b *format.Batch, seg int) diffHead {
	return diffHead{pos: b.Pos, seg: int32(seg), base: b.BaseOffset, last: b.LastOffset(), pid: b.ProducerID, size: b.Size(), crc: b.CRC,
		epoch: b.PartitionLeaderEpoch, count: b.RecordCount, pepoch: b.ProducerEpoch, magic: b.Magic}
}

// diffChunk is how many batch heads a reader hands over at once.
const diffChunk = 4096

// diffHeadersOnlyAbove is the average batch size from which reading only
// the headers (two small positioned reads a batch) beats reading whole
// batches through the read-ahead window.
const diffHeadersOnlyAbove = 8 << 10

// diffLog reads a replica's batches across its segments in offset order on
// its own goroutine, so replicas are read in parallel; the consumer gets
// their heads in chunks.
type diffLog struct {
	ch   chan []diffHead
	free chan []diffHead
	done chan struct{}
	cur  []diffHead
	at   int
	err  error // set by the reader before it closes ch
	// problem is err as a finding, when the data is at fault (a header
	// the scan rejects, a torn last batch), not the reading.
	problem *verify.Problem
	ended   bool
}

func newDiffLog(segs []partition.Segment, maxBatch int) *diffLog {
	l := &diffLog{ch: make(chan []diffHead, 4), free: make(chan []diffHead, 6), done: make(chan struct{})}
	go l.read(segs, maxBatch)
	return l
}

func logSegments(d *partition.Dir) []partition.Segment {
	var segs []partition.Segment
	for _, s := range d.Segments {
		if s.Log != "" {
			segs = append(segs, s)
		}
	}
	return segs
}

// diffMapWindow is how much of a segment a replica's scan maps at once
// (page-aligned; it bounds the mapped pages a replica holds), and
// diffMapSlack how close to a window's end the scan moves on to the next
// window; a batch that still straddles the end is read with pread. A
// 16 MiB window cost the same CPU time as 4 MiB but twice the resident set
// (klog diff of two 1 GiB replicas: 46 against 24 MiB; pread: 17 MiB).
// (Variables for the tests.)
var (
	diffMapWindow int64 = 4 << 20
	diffMapSlack  int64 = 64 << 10
	// diffAfterMap, when set, runs after each mapping (a test truncates
	// the file there).
	diffAfterMap func(f *os.File)
)

// diffMap: scan segments through memory mappings where the platform has
// them. On replicas of small batches every page holds batch headers, and
// copying the pages out of the page cache with pread was 80% of diff's CPU
// time (two replicas are two copies, where verify copies one); a mapping
// lets the headers be read in place: measured 15% less CPU time on 1 KiB
// batches (what remains is mostly the kernel
// setting up and tearing down the page mappings). A variable so the tests
// can compare both paths.
var diffMap = canMap

// read scans every segment. Batches are parsed in place from a mapping of
// the segment (diffMap), else read through the scanner's read-ahead window;
// once a segment's batches prove large (diffHeadersOnlyAbove on average
// over the first 64), only their headers are read with small preads, and
// the records are skipped.
func (l *diffLog) read(segs []partition.Segment, maxBatch int) {
	defer close(l.ch)
	// A segment truncated under a mapping faults on the lost pages; that
	// must end this replica's scan with an error, not the process.
	debug.SetPanicOnFault(true)
	buf := make([]diffHead, 0, diffChunk)
	send := func() bool {
		select {
		case l.ch <- buf:
		case <-l.done:
			return false
		}
		select {
		case buf = <-l.free:
			buf = buf[:0]
		default:
			buf = make([]diffHead, 0, diffChunk)
		}
		return true
	}
	emit := func(h diffHead) bool {
		buf = append(buf, h)
		return len(buf) < diffChunk || send()
	}
	for si, s := range segs {
		if !l.scanSegment(si, s.Log, maxBatch, emit) || l.err != nil {
			break
		}
	}
	if len(buf) > 0 {
		select {
		case l.ch <- buf:
		case <-l.done:
		}
	}
}

// scanSegment hands the heads of one segment's batches to emit; false
// means stop (emit refused, or l.err is set).
func (l *diffLog) scanSegment(si int, name string, maxBatch int, emit func(diffHead) bool) (goOn bool) {
	f, size, err := safeio.OpenSized(name)
	if err != nil {
		l.err = err
		return false
	}
	defer f.Close()
	sc := format.NewScanner(f, size, format.ScanOptions{MaxBatchBytes: maxBatch})
	var m []byte // the mapped window [mPos, mPos+len(m))
	var mPos int64
	mapping := diffMap && size > 0
	if mapping {
		defer func() {
			sc.UseWindow(nil, 0)
			r := recover()
			if m != nil {
				unmap(m)
			}
			if r != nil {
				// Only a fault inside the mapping is the file's doing.
				fe, fault := r.(interface{ Addr() uintptr })
				if !fault || !inMapping(fe.Addr(), m) {
					panic(r)
				}
				l.err = errors.New(name + ": the file shrank while being read (at byte " + strconv.FormatInt(sc.Pos(), 10) + ")")
				goOn = false
			}
		}()
	}
	var n, bytes int64
	headers := false
	for {
		if pos := sc.Pos(); mapping && pos+diffMapSlack > mPos+int64(len(m)) && mPos+int64(len(m)) < size {
			sc.UseWindow(nil, 0)
			if m != nil {
				unmap(m)
				m = nil
			}
			at := pos &^ int64(os.Getpagesize()-1)
			if m, err = mapRange(f, at, int(min(diffMapWindow, size-at))); err != nil {
				// Not mappable (a special file system, say): pread.
				m, mapping = nil, false
			} else {
				mPos = at
				sc.UseWindow(m, mPos)
				if diffAfterMap != nil {
					diffAfterMap(f)
				}
			}
		}
		b, err := sc.Next()
		if err != nil {
			var pe *format.PosError
			switch t := sc.Tail(); {
			case errors.As(err, &pe) && sc.Done() && t.Kind == format.TailZeros:
				// A zero tail: a preallocated segment, not damage.
			case !errors.Is(err, io.EOF):
				l.err = fmt.Errorf("%s: %w", name, err)
				if errors.As(err, &pe) {
					p := verify.ProblemAt(pe, verify.StageEntry, pe.Pos, pe.Offset)
					p.Path = name
					l.problem = &p
				}
			case t.Kind == format.TailShort || t.Kind == format.TailPartial:
				l.err = errors.New(name + ": " + strconv.FormatInt(t.Bytes, 10) + " bytes after the last whole batch at byte " +
					strconv.FormatInt(t.Pos, 10) + " (" + t.Kind.String() + ")")
				p := verify.TailProblem(f, t)
				p.Path = name
				l.problem = &p
			}
			return l.err == nil
		}
		if !emit(headOf(b, si)) {
			return false
		}
		if n++; !headers {
			if bytes += b.Size(); n == 64 && bytes/n >= diffHeadersOnlyAbove {
				// Large batches: small reads of just their headers. A
				// mapping would fault in the pages around every header
				// (16 at a time), most of the file.
				pos := sc.Pos()
				sc.UseWindow(nil, 0)
				if m != nil {
					unmap(m)
					m, mapping = nil, false
				}
				sc = format.NewScanner(f, size, format.ScanOptions{MaxBatchBytes: maxBatch, HeadersOnly: true})
				sc.SetPos(pos)
				headers = true
			}
		}
	}
}

// next returns the next batch head, nil at the end (err then tells
// whether a batch could not be read).
func (l *diffLog) next() *diffHead {
	for l.at >= len(l.cur) {
		if l.ended {
			return nil
		}
		if l.cur != nil {
			select {
			case l.free <- l.cur:
			default:
			}
		}
		c, ok := <-l.ch
		if !ok {
			l.ended, l.cur = true, nil
			return nil
		}
		l.cur, l.at = c, 0
	}
	h := &l.cur[l.at]
	l.at++
	return h
}

// close stops the reader and waits for it.
func (l *diffLog) close() {
	select {
	case <-l.done:
	default:
		close(l.done)
	}
	for range l.ch {
	}
}

func sameBatch(a, b *diffHead) bool {
	return a.base == b.base && a.size == b.size && a.crc == b.crc && a.epoch == b.epoch && a.magic == b.magic && a.last == b.last
}

// Diff compares the replicas in dirs (at least two partition directories).
func Diff(dirs []string, opts DiffOptions) (*DiffReport, error) {
	if len(dirs) < 2 {
		return nil, errors.New("diff: need at least two replicas")
	}
	if opts.MaxExtraBatches <= 0 {
		opts.MaxExtraBatches = 1000
	}
	if opts.MaxExtraRecords <= 0 {
		opts.MaxExtraRecords = 10_000
	}
	if opts.MaxExtraRecordBytes <= 0 {
		opts.MaxExtraRecordBytes = 64 << 20
	}
	n := len(dirs)
	rep := &DiffReport{Type: "diff", CommonOffset: -1, Replicas: make([]DiffReplica, n)}
	logs := make([]*diffLog, n)
	parts := make([]*partition.Dir, n)
	defer func() {
		for _, l := range logs {
			if l != nil {
				l.close()
			}
		}
	}()
	for i, dir := range dirs {
		d, err := partition.Open(dir)
		if err != nil {
			return nil, err
		}
		parts[i] = d
		r := &rep.Replicas[i]
		segs := logSegments(d)
		logs[i] = newDiffLog(segs, opts.MaxBatchBytes)
		*r = DiffReplica{Type: "replica", Dir: dir, LogStartOffset: -1, LogEndOffset: -1, LatestEpoch: -1, hw: -1,
			ExtraBatches: []DiffBatch{}, ExtraProducerIDs: []int64{}, Problems: []string{}, Epochs: []DiffEpoch{}}
		r.segs = segs
		if hw, ok := logDirCheckpoint(d, partition.ReplicationCheckpoint); ok {
			r.hw = hw
		}
	}
	// One pass over all replicas in step. Replicas may have deleted
	// different prefixes, so each starts at the largest first offset.
	cur := make([]*diffHead, n)
	for i, l := range logs {
		cur[i] = l.next()
		if cur[i] != nil {
			rep.Replicas[i].LogStartOffset = cur[i].base
		}
	}
	start := int64(-1)
	for i := range logs {
		if cur[i] != nil && cur[i].base > start {
			start = cur[i].base
		}
	}
	// common: still in the prefix all replicas agree on.
	common := true
	divOff, divEp := int64(-1), int32(-1)
	for {
		live := 0
		for i, l := range logs {
			for cur[i] != nil && cur[i].last < start {
				rep.Replicas[i].observe(cur[i])
				cur[i] = l.next()
			}
			if cur[i] != nil {
				live++
			}
		}
		if live == 0 {
			break
		}
		agree := common && live == n
		for i := 1; agree && i < n; i++ {
			agree = sameBatch(cur[0], cur[i])
		}
		if agree {
			rep.CommonOffset = cur[0].last
			for i, l := range logs {
				rep.Replicas[i].observe(cur[i])
				cur[i] = l.next()
			}
			continue
		}
		if common {
			common = false
			// The first offset where the replicas differ: two hold
			// different batches there, or only some hold it.
			off, ep := int64(-1), int32(-1)
			for i := range n {
				if cur[i] != nil && (off < 0 || cur[i].base < off) {
					off = cur[i].base
				}
				if cur[i] != nil && (ep < 0 || cur[i].epoch < ep) {
					ep = cur[i].epoch
				}
			}
			divOff, divEp = off, ep
		}
		for i, l := range logs {
			if cur[i] == nil {
				continue
			}
			rep.Replicas[i].extra(cur[i], opts.MaxExtraBatches)
			rep.Replicas[i].observe(cur[i])
			cur[i] = l.next()
		}
	}
	for i, l := range logs {
		r := &rep.Replicas[i]
		if l.err != nil {
			r.Problems = append(r.Problems, l.err.Error())
			if l.problem != nil {
				r.findings = append(r.findings, *l.problem)
			} else {
				r.troubles++
			}
		}
		if r.LogEndOffset < 0 {
			r.LogEndOffset = firstBase(parts[i])
			r.LogStartOffset = r.LogEndOffset
		}
		r.Epochs, r.EpochSource = epochsOf(r.batches), "batches"
		if parts[i].LeaderEpochs != "" {
			data, err := safeio.ReadFile(parts[i].LeaderEpochs, safeio.MaxCheckpointBytes)
			if err != nil {
				return nil, err
			}
			es, err := format.ParseLeaderEpochCheckpoint(data)
			if err != nil {
				r.Problems = append(r.Problems, parts[i].LeaderEpochs+": "+err.Error())
				p := verify.ProblemAt(err, verify.StageEntry, 0, -1)
				p.Kind, p.Path = verify.KindCheckpointInvalid, parts[i].LeaderEpochs
				r.findings = append(r.findings, p)
			} else {
				cp := epochsOf(es)
				r.EpochCheckpointMismatch = !sameEpochs(cp, r.Epochs)
				r.Epochs, r.EpochSource = cp, "checkpoint"
			}
		}
		if len(r.Epochs) > 0 {
			r.LatestEpoch = r.Epochs[len(r.Epochs)-1].Epoch
		}
	}

	// The leader.
	leader := opts.Leader
	if leader < 0 || leader >= n {
		leader = 0
		for i := 1; i < n; i++ {
			a, b := &rep.Replicas[i], &rep.Replicas[leader]
			if a.LatestEpoch > b.LatestEpoch || (a.LatestEpoch == b.LatestEpoch && a.LogEndOffset > b.LogEndOffset) {
				leader = i
			}
		}
		rep.LeaderInferred = true
	}
	L := &rep.Replicas[leader]
	L.Leader = true
	rep.Leader = L.Dir
	// Behind or diverged, against the leader: a replica whose log is a
	// prefix of the leader's is behind; one holding a batch the leader
	// holds differently, or more than the leader, has diverged.
	for i := range rep.Replicas {
		r := &rep.Replicas[i]
		if i == leader {
			continue
		}
		prefix := r.LogEndOffset <= L.LogEndOffset && r.extrasHeldByLeader(L)
		r.Behind = prefix && r.LogEndOffset < L.LogEndOffset
		r.Diverged = !prefix
		t := partition.FollowerTruncation(toEntries(L.Epochs), L.LogEndOffset, toEntries(r.Epochs), r.LogEndOffset, r.hw)
		r.TruncateTo = &t
		// What the truncation loses: the records it removes that the
		// leader does not hold identically (the rest the follower
		// fetches again).
		if from := max(t, r.agreedWith(L, rep.CommonOffset)); from < r.LogEndOffset {
			r.LostBatches, r.LostRecords = countFrom(parts[i], from, opts.MaxBatchBytes)
			if r.LostBatches > 0 {
				r.Diverged = true
			}
		}
		rep.Diverged = rep.Diverged || r.Diverged
	}
	if opts.Records {
		for i := range rep.Replicas {
			if err := rep.Replicas[i].decodeExtra(opts); err != nil {
				rep.Replicas[i].Problems = append(rep.Replicas[i].Problems, err.Error())
				rep.Replicas[i].troubles++
			}
		}
	}
	if rep.Diverged && divOff >= 0 {
		rep.DivergentOffset, rep.DivergentEpoch = &divOff, &divEp
	}
	rep.Identical = !rep.Diverged
	for _, r := range rep.Replicas {
		if r.LogEndOffset != L.LogEndOffset || r.LogStartOffset != L.LogStartOffset || r.ExtraBatchCount > 0 {
			rep.Identical = false
		}
	}
	return rep, nil
}

// observe records a batch's offsets and epoch.
func (r *DiffReplica) observe(b *diffHead) {
	r.LogEndOffset = b.last + 1
	if b.v2() && b.epoch >= 0 {
		if len(r.batches) == 0 || b.epoch > r.batches[len(r.batches)-1].Epoch {
			r.batches = append(r.batches, format.EpochEntry{Epoch: b.epoch, StartOffset: b.base})
		}
	}
}

// extra counts (and lists, up to max) a batch above the common offset.
func (r *DiffReplica) extra(b *diffHead, max int) {
	count := b.count
	if !b.v2() {
		count = 1
	}
	r.ExtraBatchCount++
	r.ExtraRecords += int64(count)
	r.ExtraBytes += b.size
	if b.v2() && b.pid >= 0 && len(r.ExtraProducerIDs) < max {
		found := false
		for _, p := range r.ExtraProducerIDs {
			found = found || p == b.pid
		}
		if !found {
			r.ExtraProducerIDs = append(r.ExtraProducerIDs, b.pid)
		}
	}
	if len(r.ExtraBatches) >= max {
		r.ExtraListCut = true
		return
	}
	r.ExtraBatches = append(r.ExtraBatches, DiffBatch{seg: b.seg, pos: b.pos, Type: "diffBatch", BaseOffset: b.base, LastOffset: b.last, Epoch: b.epoch,
		ProducerID: b.pid, ProducerEpoch: b.pepoch, Records: count, Bytes: b.size, CRC: b.crc})
}

// agreedWith is the offset up to which (exclusive) r holds the same
// batches as L: the common prefix, then the listed batches both hold.
func (r *DiffReplica) agreedWith(L *DiffReplica, common int64) int64 {
	agreed := common + 1
	for j := range r.ExtraBatches {
		if j >= len(L.ExtraBatches) || !sameListed(&r.ExtraBatches[j], &L.ExtraBatches[j]) {
			break
		}
		agreed = r.ExtraBatches[j].LastOffset + 1
	}
	return agreed
}

func sameListed(a, b *DiffBatch) bool {
	return a.BaseOffset == b.BaseOffset && a.LastOffset == b.LastOffset && a.Epoch == b.Epoch && a.CRC == b.CRC && a.Bytes == b.Bytes
}

// extrasHeldByLeader reports whether every batch r holds above the common
// offset is held identically by the leader L: the listed batches are
// compared; when a list was cut the replica counts as disagreeing.
func (r *DiffReplica) extrasHeldByLeader(L *DiffReplica) bool {
	if r.ExtraBatchCount == 0 {
		return true
	}
	if r.ExtraListCut || L.ExtraListCut || int64(len(L.ExtraBatches)) < r.ExtraBatchCount {
		return false
	}
	for i, b := range r.ExtraBatches {
		if !sameListed(&L.ExtraBatches[i], &b) {
			return false
		}
	}
	return true
}

// decodeExtra reads the listed extra batches again and lists their
// records, up to the options' record bounds (one record at a time is
// decoded and only the listed ones are kept). A batch whose records do not
// decode is a finding of the replica's data (its records up to there are
// listed, and the next batch is read); only a read error is returned.
func (r *DiffReplica) decodeExtra(opts DiffOptions) error {
	maxBatch, recOpts := opts.MaxBatchBytes, opts.RecordJSON
	records, bytesLeft := opts.MaxExtraRecords, opts.MaxExtraRecordBytes
	var f *os.File
	var sc *format.Scanner
	open := int32(-1)
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	var rr format.RecordReader
	for i := range r.ExtraBatches {
		x := &r.ExtraBatches[i]
		if r.ExtraRecordListCut {
			break
		}
		if x.seg != open {
			if f != nil {
				f.Close()
			}
			var err error
			var size int64
			if f, size, err = safeio.OpenSized(r.segs[x.seg].Log); err != nil {
				return err
			}
			sc, open = format.NewScanner(f, size, format.ScanOptions{MaxBatchBytes: maxBatch, ReadAhead: -1}), x.seg
		}
		sc.SetPos(x.pos)
		b, err := sc.Next()
		var pe *format.PosError
		if err != nil && !errors.As(err, &pe) {
			return fmt.Errorf("%s: batch at byte %d: %w", r.segs[x.seg].Log, x.pos, err)
		}
		if err != nil {
			r.recordProblem(x, err, verify.StageEntry)
			continue
		}
		x.RecordList = []DiffRecord{}
		if err := rr.Reset(b); err != nil {
			r.recordProblem(x, err, verify.StageRecords)
			continue
		}
		// The records' JSON needs the batch's header fields only: keep
		// them, not a copy of its bytes (up to --max-batch-bytes each).
		bc := new(format.Batch)
		*bc = *b
		bc.Raw = nil
		for {
			var rec format.Record
			err := rr.Next(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				r.recordProblem(x, err, verify.StageRecords)
				break
			}
			size := int64(len(rec.Key) + len(rec.Value))
			for _, h := range rec.Headers {
				size += int64(len(h.Key) + len(h.Value))
			}
			if records == 0 || size > bytesLeft {
				r.ExtraRecordListCut = true
				break
			}
			records, bytesLeft = records-1, bytesLeft-size
			d := DiffRecord{Type: "record", Offset: rec.Offset, Timestamp: rec.Timestamp, HeaderKeys: []string{}}
			if rec.Key != nil {
				d.Key = bytes.Clone(rec.Key)
			}
			if rec.Value != nil {
				d.Value = bytes.Clone(rec.Value)
			}
			d.batch, d.rec, d.opts = bc, rec, recOpts
			d.rec.Key, d.rec.Value, d.rec.Headers = d.Key, d.Value, make([]format.Header, len(rec.Headers))
			for i, h := range rec.Headers {
				d.HeaderKeys = append(d.HeaderKeys, string(h.Key))
				d.rec.Headers[i] = format.Header{Key: bytes.Clone(h.Key), Value: bytes.Clone(h.Value)}
			}
			x.RecordList = append(x.RecordList, d)
		}
	}
	return nil
}

// recordProblem notes that the records of the listed batch x do not
// decode: a finding (verify's kind), listed in Problems.
func (r *DiffReplica) recordProblem(x *DiffBatch, err error, stage verify.Stage) {
	p := verify.ProblemAt(err, stage, x.pos, x.BaseOffset)
	p.Path = r.segs[x.seg].Log
	r.findings = append(r.findings, p)
	r.Problems = append(r.Problems, fmt.Sprintf("%s: batch at byte %d: %v", p.Path, x.pos, err))
}

func epochsOf(es []format.EpochEntry) []DiffEpoch {
	out := make([]DiffEpoch, len(es))
	for i, e := range es {
		out[i] = DiffEpoch{Type: "epoch", Epoch: e.Epoch, StartOffset: e.StartOffset}
	}
	return out
}

func toEntries(es []DiffEpoch) []format.EpochEntry {
	out := make([]format.EpochEntry, len(es))
	for i, e := range es {
		out[i] = format.EpochEntry{Epoch: e.Epoch, StartOffset: e.StartOffset}
	}
	return out
}

func sameEpochs(a, b []DiffEpoch) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func firstBase(d *partition.Dir) int64 {
	for _, s := range d.Segments {
		if s.Log != "" {
			return s.BaseOffset
		}
	}
	return 0
}

// countFrom counts the batches and records at or above offset (what a
// truncation to offset removes), reading batch headers only.
func countFrom(d *partition.Dir, offset int64, maxBatch int) (batches, records int64) {
	for i, s := range d.Segments {
		if s.Log == "" {
			continue
		}
		// Segments wholly below the offset are skipped.
		if j := i + 1; j < len(d.Segments) && d.Segments[j].BaseOffset <= offset {
			continue
		}
		f, size, err := safeio.OpenSized(s.Log)
		if err != nil {
			continue
		}
		sc := format.NewScanner(f, size, format.ScanOptions{HeadersOnly: true, MaxBatchBytes: maxBatch})
		for {
			b, err := sc.Next()
			if err != nil {
				if sc.Done() {
					break
				}
				continue
			}
			if b.LastOffset() < offset {
				continue
			}
			batches++
			// A truncation inside a batch removes the whole batch
			// (LogSegment.truncateTo cuts at the batch holding it).
			if b.IsV2() {
				records += int64(b.RecordCount)
			} else {
				records++
			}
		}
		f.Close()
	}
	return batches, records
}

// WriteDiffJSON writes the report as one "diff" object.
func WriteDiffJSON(w io.Writer, rep *DiffReport) error { return writeJSONLine(w, rep) }

// WriteDiffText writes the report for people: the verdict, then one table
// row per replica, then the batches only some replicas hold.
func WriteDiffText(w io.Writer, rep *DiffReport) error {
	var b strings.Builder
	switch {
	case rep.Identical:
		b.WriteString("identical: every replica holds the same batches\n")
	case !rep.Diverged:
		b.WriteString("not diverged: the replicas that differ are only behind the leader\n")
	default:
		b.WriteString("DIVERGED\n")
	}
	if rep.CommonOffset >= 0 {
		b.WriteString("common prefix: every replica agrees up to offset " + i64(rep.CommonOffset) + "\n")
	} else {
		b.WriteString("common prefix: none\n")
	}
	if rep.DivergentOffset != nil {
		b.WriteString("first divergence: offset " + i64(*rep.DivergentOffset) + ", leader epoch " + strconv.Itoa(int(*rep.DivergentEpoch)) + "\n")
	}
	how := "given"
	if rep.LeaderInferred {
		how = "inferred: highest latest leader epoch, then longest log"
	}
	b.WriteString("leader: " + rep.Leader + " (" + how + ")\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	rows := make([][]string, 0, len(rep.Replicas))
	for _, r := range rep.Replicas {
		state := "in sync"
		switch {
		case r.Leader:
			state = "leader"
		case r.Diverged:
			state = "diverged"
		case r.Behind:
			state = "behind"
		}
		trunc := ""
		if r.TruncateTo != nil {
			trunc = i64(*r.TruncateTo)
			if r.LostRecords > 0 {
				trunc += " (loses " + i64(r.LostRecords) + " records)"
			}
		}
		epochs := make([]string, len(r.Epochs))
		for i, e := range r.Epochs {
			epochs[i] = strconv.Itoa(int(e.Epoch)) + "@" + i64(e.StartOffset)
		}
		rows = append(rows, []string{r.Dir, state, i64(r.LogStartOffset), i64(r.LogEndOffset), strings.Join(epochs, " ") + " (" + r.EpochSource + ")",
			i64(r.ExtraBatchCount), i64(r.ExtraRecords), bytesCell(r.ExtraBytes), trunc})
	}
	if err := dump.WriteTable(w, []string{"replica", "state", "log start", "log end", "epochs", "extra batches", "extra records", "extra bytes", "truncates to"}, rows); err != nil {
		return err
	}
	b.Reset()
	for _, r := range rep.Replicas {
		if len(r.ExtraBatches) > 0 {
			b.WriteString("\nabove the common offset in " + r.Dir + ":\n")
			for _, x := range r.ExtraBatches {
				b.WriteString("  offsets " + i64(x.BaseOffset) + "-" + i64(x.LastOffset) + " epoch " + strconv.Itoa(int(x.Epoch)) +
					" producerId " + i64(x.ProducerID) + " producerEpoch " + strconv.Itoa(int(x.ProducerEpoch)) + " records " + strconv.Itoa(int(x.Records)) +
					" bytes " + i64(x.Bytes) + " crc " + strconv.FormatUint(uint64(x.CRC), 10) + "\n")
				for _, rec := range x.RecordList {
					b.WriteString("    offset " + i64(rec.Offset) + " timestamp " + i64(rec.Timestamp) + " key " + quoteBytes(rec.Key) + " value " + quoteBytes(rec.Value) + "\n")
				}
			}
			if r.ExtraRecordListCut {
				b.WriteString("  ... (records past --max-extra-records or 64 MiB of keys and values not listed)\n")
			}
			if r.ExtraListCut {
				b.WriteString("  ... (" + i64(r.ExtraBatchCount) + " in all)\n")
			}
		}
		for _, p := range r.Problems {
			b.WriteString(r.Dir + ": " + p + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// quoteBytes prints a key or value for people: null, or Go-quoted and cut
// at 64 bytes.
func quoteBytes(b []byte) string {
	if b == nil {
		return "null"
	}
	if len(b) > 64 {
		return strconv.Quote(string(b[:64])) + "..." + "(" + strconv.Itoa(len(b)) + " bytes)"
	}
	return strconv.Quote(string(b))
}

// Findings counts what the replicas' data is at fault for (a batch header
// the scan rejects, a torn last batch, a leader-epoch-checkpoint that does
// not parse) and returns the first, in replica order; trouble reports
// Problems that are not the data's (a read error, a file that shrank while
// read, records that could not be read again for --records). A zero-filled
// tail (a preallocated segment) is neither.
func (r *DiffReport) Findings() (n int, first *verify.Problem, trouble bool) {
	for i := range r.Replicas {
		rp := &r.Replicas[i]
		if first == nil && len(rp.findings) > 0 {
			first = &rp.findings[0]
		}
		n += len(rp.findings)
		trouble = trouble || rp.troubles > 0
	}
	return n, first, trouble
}

package tail

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/verify"
)

// part is one tailed partition directory: its partition.Log (the one model
// of a partition, kept current by the tail's Follower) and how far the tail
// has reported it.
type part struct {
	dir       string
	topic     string
	partition int32
	ld        *logDir
	// log is the partition's model, nil while the directory holds no
	// segment (the tail's watcher waits for the first one then).
	log *partition.Log
	// segs are the segments of the last view, by base offset.
	segs []segment
	// cur indexes the segment being read in segs, or is -1 (none yet).
	cur int
	// pos is where the next batch starts in segs[cur]; size is the file's
	// size at the last read (including an incomplete batch after pos).
	pos, size int64
	// leo is the log end offset as far as reported; logStart and hw are
	// the model's log start offset and checkpointed high watermark (-1:
	// no entry).
	leo, hw, logStart int64
	// partialAt and badAt are the positions of the incomplete batch and of
	// the unreadable entry last reported, or -1: each is reported once.
	partialAt, badAt int64
	// skipBelow: batches whose last offset is below it are read but not
	// reported (the replay of Options.FromOffset / FromLast), or -1.
	skipBelow int64
}

// segment is one segment of a view.
type segment struct {
	base int64
	name string
	seg  partition.LogSegment
}

func (s segment) size() int64 { return s.seg.Size }
func (s segment) end() int64  { return s.seg.End() }

func segmentsOfView(v partition.View) []segment {
	segs := make([]segment, len(v.Segments))
	for i, s := range v.Segments {
		segs[i] = segment{base: s.BaseOffset, name: filepath.Base(s.Log), seg: s}
	}
	return segs
}

func indexOf(segs []segment, name string) int {
	for i, s := range segs {
		if s.name == name {
			return i
		}
	}
	return -1
}

// testHookOpenLog, when set, is called with each directory whose model
// openLog opens.
var testHookOpenLog func(dir string)

// openLog opens p's model and follows it; a directory holding no segment
// yet is watched for its first one instead.
func (t *tailer) openLog(p *part) error {
	if testHookOpenLog != nil {
		testHookOpenLog(p.dir)
	}
	l, err := partition.OpenLog(p.dir, partition.LogOptions{MaxBatchBytes: t.opts.MaxBatchBytes})
	if errors.Is(err, partition.ErrNoSegment) {
		return t.w.Add(p.dir)
	}
	if err != nil {
		return err
	}
	// The Follower watches the directory, then reads it again: nothing
	// written since OpenLog is missed. The waiter is armed before the
	// first view is taken.
	if err := t.fo.Add(l); err != nil {
		return err
	}
	t.w.Remove(p.dir)
	p.log = l
	t.byLog[l] = p
	t.wait.Add(l)
	return nil
}

// dropLog stops following p's model.
func (t *tailer) dropLog(p *part) {
	if p.log == nil {
		return
	}
	t.fo.Remove(p.log)
	t.wait.Remove(p.log)
	delete(t.byLog, p.log)
	p.log = nil
}

// view is p's model's view, empty while p has none.
func (p *part) view() (partition.View, error) {
	if p.log == nil {
		return partition.View{CheckpointHighWatermark: -1}, nil
	}
	return p.log.View()
}

// initPart reads a partition for the first time. With replay every batch
// is reported (then the state); otherwise the end of the log is taken from
// the model and the state reported. typ is TypeState, or
// TypePartitionAdded for a partition that appeared while tailing: that
// event comes first, and its batches follow as a growing log end offset.
func (t *tailer) initPart(p *part, replay bool, typ Type) error {
	v, err := p.view()
	if err != nil {
		return err
	}
	p.segs, p.logStart, p.hw = segmentsOfView(v), v.LogStartOffset, v.CheckpointHighWatermark
	segs := p.segs
	if len(segs) > 0 {
		p.leo = segs[0].base
	}
	if typ == TypePartitionAdded {
		ev := t.event(p, typ)
		if len(segs) > 0 {
			ev.Segment = segs[len(segs)-1].name
		}
		t.emit(ev)
	}
	leo0 := p.leo
	p.skipBelow = -1
	if replay && typ == TypeState {
		switch {
		case t.opts.FromOffset > 0:
			p.skipBelow = t.opts.FromOffset
		case t.opts.FromLast > 0 && len(segs) > 0:
			p.skipBelow = v.LogEndOffset - t.opts.FromLast
		}
	}
	if replay {
		defer func() { p.skipBelow = -1 }()
		for i := range segs {
			p.cur, p.pos, p.size, p.partialAt = i, 0, 0, -1
			p.leo = max(p.leo, segs[i].base)
			if _, err := t.read(p); err != nil {
				return err
			}
		}
	} else if len(segs) > 0 {
		p.cur = len(segs) - 1
		s := segs[p.cur]
		p.pos, p.size, p.leo = s.end(), s.size(), max(v.LogEndOffset, s.base)
	}
	if typ == TypePartitionAdded {
		t.leoEvent(p, leo0)
		return nil
	}
	ev := t.event(p, typ)
	if p.cur >= 0 {
		ev.Segment = p.segs[p.cur].name
	}
	t.emit(ev)
	return nil
}

func (t *tailer) leoEvent(p *part, leo0 int64) {
	if p.leo != leo0 {
		ev := t.event(p, TypeLogEndOffset)
		ev.Change = &Change{From: leo0, To: p.leo}
		t.emit(ev)
	}
}

// refresh reports what changed in p's model since the last view: new
// batches, rolls, deletions, truncations, then the high watermark.
func (t *tailer) refresh(p *part) error {
	leo0 := p.leo
	v, err := p.view()
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		// The directory (or a segment of it) went; the directory's own
		// event, or the next change, says which.
		t.checkGone(p)
		return nil
	case errors.Is(err, partition.ErrNoSegment):
		// Every segment went: wait for the next one.
		t.dropLog(p)
		v = partition.View{CheckpointHighWatermark: p.hw}
		if err := t.w.Add(p.dir); err != nil {
			// The directory may have followed its segments (rm -r
			// removes the files first): gone, not trouble.
			if t.checkGone(p); t.parts[p.dir] != p {
				return nil
			}
			return err
		}
	default:
		return err
	}
	if err := t.apply(p, v); err != nil {
		return err
	}
	if t.parts[p.dir] != p {
		return nil
	}
	t.leoEvent(p, leo0)
	if hw := v.CheckpointHighWatermark; hw != p.hw {
		old := p.hw
		p.hw = hw
		ev := t.event(p, TypeHighWatermark)
		ev.Change = &Change{From: old, To: hw}
		t.emit(ev)
	}
	return nil
}

// apply compares view v with the last one: the segment being read is
// finished (a roll writes the old segment's last batches before it creates
// the new one) or found shrunk, the segments gone are reported, and the
// new ones are read in order.
func (t *tailer) apply(p *part, v partition.View) error {
	segs := segmentsOfView(v)
	curName, curBase, curThere := "", int64(-1), false
	if p.cur >= 0 {
		curName, curBase = p.segs[p.cur].name, p.segs[p.cur].base
		if i := indexOf(segs, curName); i >= 0 {
			ns := segs[i]
			if ns.size() < p.size || ns.end() < p.pos {
				// Cut back in place: reported, and read on from the
				// model's new end.
				prev, leo0 := p.size, p.leo
				p.pos, p.partialAt, p.badAt = ns.end(), -1, -1
				p.leo = v.LogEndOffset
				if i+1 < len(segs) {
					p.leo = segs[i+1].base
				}
				p.segs[p.cur] = ns
				ev := t.event(p, TypeTruncated)
				ev.Segment = curName
				ev.Truncation = &Truncation{PrevSizeBytes: prev, SizeBytes: ns.size()}
				ev.Change = &Change{From: leo0, To: p.leo}
				t.emit(ev)
			}
			p.segs[p.cur] = ns
			gone, err := t.read(p)
			if err != nil {
				return err
			}
			curThere = !gone
		}
	}
	old := p.segs
	p.segs, p.logStart = segs, v.LogStartOffset
	for _, s := range old {
		if indexOf(segs, s.name) >= 0 {
			continue
		}
		ev := t.event(p, TypeSegmentDeleted)
		ev.Segment = s.name
		if _, err := os.Lstat(filepath.Join(p.dir, s.name+".deleted")); err == nil {
			ev.RenamedTo = s.name + ".deleted"
		}
		t.emit(ev)
	}
	switch {
	case curThere:
		p.cur = indexOf(segs, curName)
	case p.cur >= 0 && len(segs) > 0 && segs[len(segs)-1].base < curBase:
		// The segment being read went and nothing follows it: segments
		// removed from the end of the log, a truncation.
		prev, leo0 := p.size, p.leo
		p.cur = len(segs) - 1
		s := segs[p.cur]
		p.pos, p.size, p.leo, p.partialAt, p.badAt = s.end(), s.size(), max(v.LogEndOffset, s.base), -1, -1
		ev := t.event(p, TypeTruncated)
		ev.Segment = curName
		ev.Truncation = &Truncation{PrevSizeBytes: prev}
		ev.Change = &Change{From: leo0, To: p.leo}
		t.emit(ev)
	default:
		// Nothing read yet, or the segment being read went and newer ones
		// follow: they are rolls.
		p.cur = -1
	}
	for {
		next := p.cur + 1
		if p.cur < 0 {
			next = sort.Search(len(segs), func(i int) bool { return segs[i].base > curBase })
		}
		if next >= len(segs) {
			break
		}
		p.cur, p.pos, p.size, p.partialAt, p.badAt = next, 0, 0, -1, -1
		p.leo = max(p.leo, segs[next].base)
		ev := t.event(p, TypeRoll)
		ev.Segment = segs[next].name
		t.emit(ev)
		if _, err := t.read(p); err != nil {
			return err
		}
	}
	return nil
}

// read reports the batches of segs[cur] after pos that the model holds,
// then what follows them once (a batch still being written, an entry the
// format rejects). gone reports that the file is no longer there.
func (t *tailer) read(p *part) (gone bool, err error) {
	s := p.segs[p.cur]
	res, err := t.rd.Read(p.log, s.seg, p.pos, func(b *format.Batch, rejected error) error {
		if rejected != nil {
			// A header the format rejects; the read goes on past it.
			var pe *format.PosError
			errors.As(rejected, &pe)
			t.corrupt(p, s.name, pe.Pos, pe.Offset, rejected)
			return nil
		}
		p.pos, p.leo, p.partialAt, p.badAt = b.Pos+b.Size(), b.NextOffset(), -1, -1
		if b.LastOffset() < p.skipBelow {
			return nil
		}
		ev := t.event(p, TypeBatch)
		ev.Segment = s.name
		ev.Batch = b.Clone()
		ev.BatchInfo = batchInfo(ev.Batch)
		t.emit(ev)
		return nil
	})
	if err != nil {
		return false, err
	}
	if res.Gone {
		return true, nil
	}
	p.pos, p.size = res.Pos, s.size()
	tail := res.Tail
	switch tail.Kind {
	case format.TailPartial, format.TailShort:
		if tail.Kind == format.TailPartial && p.badAt != tail.Pos {
			// A header whose magic no batch has promises bytes no
			// writer is writing: junk, not a batch under way.
			if pr, junk := junkTail(s.seg.Log, tail); junk {
				p.badAt = tail.Pos
				ev := t.event(p, TypeCorrupt)
				ev.Segment, ev.Problem = s.name, &pr
				t.emit(ev)
				break
			}
		}
		if p.badAt == tail.Pos {
			break
		}
		if tail.Bytes > 0 && p.partialAt != tail.Pos {
			p.partialAt = tail.Pos
			ev := t.event(p, TypePartial)
			ev.Segment = s.name
			ev.Partial = &Partial{Position: tail.Pos, HaveBytes: tail.Bytes, WantBytes: tail.Want}
			t.emit(ev)
		}
	case format.TailCorrupt:
		// Zeros (a preallocated segment) are where the next write goes;
		// anything else stops the reading here until the file changes.
		if p.badAt != tail.Pos && res.Err != nil {
			p.badAt = tail.Pos
			t.corrupt(p, s.name, tail.Pos, tail.Offset, res.Err)
		}
	}
	return false, nil
}

// junkTail judges a TailPartial tail of the .log at path by
// verify.JunkTail, the rule fetch and offsets apply too.
func junkTail(path string, tail format.Tail) (pr verify.Problem, junk bool) {
	f, err := os.Open(path)
	if err != nil {
		return pr, false
	}
	defer f.Close()
	return verify.JunkTail(f, tail)
}

func (t *tailer) corrupt(p *part, seg string, pos, offset int64, err error) {
	ev := t.event(p, TypeCorrupt)
	ev.Segment = seg
	pr := verify.ProblemAt(err, verify.StageEntry, pos, offset)
	ev.Problem = &pr
	t.emit(ev)
}

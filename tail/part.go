package tail

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/verify"
)

// part is one tailed partition directory.
type part struct {
	dir       string
	topic     string
	partition int32
	ld        *logDir
	// segs are the .log files of the last listing, by base offset.
	segs []segment
	// cur indexes the segment being read in segs, or is -1 (none yet).
	cur int
	// pos is where the next batch starts in segs[cur]; size is the file's
	// size when last read (including an incomplete batch after pos).
	pos, size int64
	leo, hw   int64
	// partialAt and badAt are the positions of the incomplete batch and of
	// the unreadable entry last reported, or -1: each is reported once.
	partialAt, badAt int64
	// skipBelow: batches whose last offset is below it are read but not
	// reported (the replay of Options.FromOffset / FromLast), or -1.
	skipBelow int64
}

type segment struct {
	base int64
	name string
}

// listSegments lists dir's segments by base offset through package
// partition (the one home of a partition's listing), and the set of its
// .log.deleted file names.
func listSegments(dir string) ([]segment, map[string]bool, error) {
	d, err := partition.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	var segs []segment
	for _, s := range d.Segments {
		if s.Log != "" {
			segs = append(segs, segment{base: s.BaseOffset, name: filepath.Base(s.Log)})
		}
	}
	var deleted map[string]bool
	for _, o := range d.Other {
		if name := filepath.Base(o); strings.HasSuffix(name, partition.LogSuffix+".deleted") {
			if deleted == nil {
				deleted = map[string]bool{}
			}
			deleted[name] = true
		}
	}
	return segs, deleted, nil
}

func indexOf(segs []segment, name string) int {
	for i, s := range segs {
		if s.name == name {
			return i
		}
	}
	return -1
}

// initPart reads a partition for the first time. With replay every batch
// is reported (then the state); otherwise the end of the log is found and
// the state reported. typ is TypeState, or TypePartitionAdded for a
// partition that appeared while tailing: that event comes first, and its
// batches follow as a growing log end offset.
func (t *tailer) initPart(p *part, replay bool, typ Type) error {
	segs, _, err := listSegments(p.dir)
	if err != nil {
		return err
	}
	p.segs = segs
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
			// The log end offset first, from the last segment.
			p.cur = len(segs) - 1
			if err := t.seekEnd(p); err != nil {
				return err
			}
			p.skipBelow = p.leo - t.opts.FromLast
			p.leo = segs[0].base
		}
	}
	if replay {
		defer func() { p.skipBelow = -1 }()
		for i := range segs {
			p.cur, p.pos, p.size, p.partialAt = i, 0, 0, -1
			p.leo = max(p.leo, segs[i].base)
			if _, err := t.readActive(p); err != nil {
				return err
			}
		}
	} else if len(segs) > 0 {
		p.cur = len(segs) - 1
		if err := t.seekEnd(p); err != nil {
			return err
		}
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

// rescan brings p up to date after fsnotify events: new bytes of the
// active segment only, or (relist) the whole directory: rolls, deletions,
// segments removed at the end.
func (t *tailer) rescan(p *part, relist bool) error {
	leo0 := p.leo
	if !relist {
		if p.cur < 0 {
			relist = true
		} else {
			gone, err := t.readActive(p)
			if err != nil {
				return err
			}
			relist = gone
		}
	}
	if relist {
		if err := t.relist(p); err != nil {
			return err
		}
	}
	if t.parts[p.dir] == p {
		t.leoEvent(p, leo0)
	}
	return nil
}

// relist compares the directory with the last listing.
func (t *tailer) relist(p *part) error {
	segs, deleted, err := listSegments(p.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			t.checkGone(p)
			return nil
		}
		return err
	}
	// Finish the segment being read first: a roll writes the old
	// segment's last batches before it creates the new one.
	curName, curBase, curThere := "", int64(-1), false
	if p.cur >= 0 {
		curName, curBase = p.segs[p.cur].name, p.segs[p.cur].base
		if indexOf(segs, curName) >= 0 {
			gone, err := t.readActive(p)
			if err != nil {
				return err
			}
			curThere = !gone
		}
	}
	old := p.segs
	p.segs = segs
	for _, s := range old {
		if indexOf(segs, s.name) >= 0 {
			continue
		}
		ev := t.event(p, TypeSegmentDeleted)
		ev.Segment = s.name
		if deleted[s.name+".deleted"] {
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
		if err := t.seekEnd(p); err != nil {
			return err
		}
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
		if _, err := t.readActive(p); err != nil {
			return err
		}
	}
	return nil
}

// readActive reads the new bytes of segs[cur], reporting each complete
// batch. gone reports that the file is no longer there. A file smaller than
// at the last read is reported truncated and rescanned.
func (t *tailer) readActive(p *part) (gone bool, err error) {
	s := p.segs[p.cur]
	f, size, err := safeio.OpenSized(filepath.Join(p.dir, s.name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return true, nil
		}
		return false, err
	}
	defer f.Close()
	if size < p.size {
		prev, leo0 := p.size, p.leo
		if err := t.findEnd(p, f, size); err != nil {
			return false, err
		}
		ev := t.event(p, TypeTruncated)
		ev.Segment = s.name
		ev.Truncation = &Truncation{PrevSizeBytes: prev, SizeBytes: size}
		ev.Change = &Change{From: leo0, To: p.leo}
		t.emit(ev)
	}
	p.size = size
	sc := t.sc
	sc.Reset(f, size)
	sc.SetPos(p.pos)
	var scanErr error
	for {
		b, err := sc.Next()
		if err == nil {
			p.pos, p.leo, p.partialAt, p.badAt = sc.Pos(), b.NextOffset(), -1, -1
			if b.LastOffset() < p.skipBelow {
				continue
			}
			ev := t.event(p, TypeBatch)
			ev.Segment = s.name
			ev.Batch = b.Clone()
			ev.BatchInfo = batchInfo(ev.Batch)
			t.emit(ev)
			continue
		}
		if err == io.EOF {
			break
		}
		var pe *format.PosError
		if !errors.As(err, &pe) {
			return false, err
		}
		if sc.Done() {
			scanErr = err
			break
		}
		// A header the format rejects; the scan goes on past it.
		p.pos = sc.Pos()
		t.corrupt(p, s.name, pe.Pos, pe.Offset, err)
	}
	tail := sc.Tail()
	switch tail.Kind {
	case format.TailPartial, format.TailShort:
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
		if p.badAt != tail.Pos && scanErr != nil {
			p.badAt = tail.Pos
			t.corrupt(p, s.name, tail.Pos, tail.Offset, scanErr)
		}
	}
	return false, nil
}

func (t *tailer) corrupt(p *part, seg string, pos, offset int64, err error) {
	ev := t.event(p, TypeCorrupt)
	ev.Segment = seg
	pr := verify.ProblemAt(err, verify.StageEntry, pos, offset)
	ev.Problem = &pr
	t.emit(ev)
}

// seekEnd finds the end of segs[cur] without reporting its batches.
func (t *tailer) seekEnd(p *part) error {
	s := p.segs[p.cur]
	p.pos, p.size, p.leo = 0, 0, max(p.leo, s.base)
	f, size, err := safeio.OpenSized(filepath.Join(p.dir, s.name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // the next listing will see it gone
		}
		return err
	}
	defer f.Close()
	return t.findEnd(p, f, size)
}

// findEnd moves p to the end of the valid data of segs[cur] (open as f,
// size bytes) without reporting batches: from the last offset index entry
// when it points at the batch holding its offset, else from the start.
func (t *tailer) findEnd(p *part, f *os.File, size int64) error {
	s := p.segs[p.cur]
	p.pos, p.leo, p.partialAt, p.badAt = 0, s.base, -1, -1
	sc := t.sc
	idx := filepath.Join(p.dir, partition.FileName(s.base, partition.IndexSuffix))
	if pos, off, ok := indexHint(idx, s.base, size); ok {
		sc.Reset(f, size)
		sc.SetPos(pos)
		if b, err := sc.Next(); err == nil && b.BaseOffset <= off && off <= b.LastOffset() {
			p.pos = pos
		}
	}
	sc.Reset(f, size)
	sc.SetPos(p.pos)
	for {
		b, err := sc.Next()
		if err == nil {
			p.pos, p.leo = sc.Pos(), b.NextOffset()
			continue
		}
		if err == io.EOF {
			break
		}
		var pe *format.PosError
		if !errors.As(err, &pe) {
			return err
		}
		if sc.Done() {
			break
		}
		p.pos = sc.Pos()
	}
	p.size = size
	return nil
}

// indexHint returns the last used entry of a segment's offset index (the
// position of a batch and an offset in it), for segments big enough that
// scanning them whole would cost. Kafka preallocates the active index with
// zeros; entries after the first are used while their relative offset is
// not 0, so the last one is found by bisection in a few reads.
func indexHint(path string, base, size int64) (pos, offset int64, ok bool) {
	if size < 1<<20 {
		return 0, 0, false
	}
	f, isize, err := safeio.OpenSized(path)
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	n := isize / format.OffsetIndexEntrySize
	var e [format.OffsetIndexEntrySize]byte
	entry := func(i int64) (rel, pos int32, ok bool) {
		if _, err := f.ReadAt(e[:], i*format.OffsetIndexEntrySize); err != nil {
			return 0, 0, false
		}
		ie := format.ParseIndexEntry(e[:], 0)
		return int32(ie.Offset), int32(ie.Pos), true
	}
	if n == 0 {
		return 0, 0, false
	}
	lo, hi := int64(0), n
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		rel, _, ok := entry(mid)
		if !ok {
			return 0, 0, false
		}
		if rel != 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	rel, p, ok := entry(lo)
	if !ok || p <= 0 || int64(p) >= size {
		return 0, 0, false
	}
	return int64(p), base + int64(rel), true
}

package main

import (
	"errors"
	"io"
	"os"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/verify"
)

// corruptTail is a finding (exit 1) when the bytes after the active
// segment's last whole batch are not data a reader may stop at quietly: a
// header the scanner rejects, or bytes that do not start a batch
// (verify.TailProblem's trailing-bytes). The Log's batches, and so its log
// end offset, end before them, as they end Kafka's iteration; without this
// a .log holding no Kafka data at all read as an empty log, exit 0. A
// batch cut short at the tail (a crash, or a write under way) and a zero
// tail (a preallocated segment) are not findings: it returns nil for them,
// and for a read error (the command's own reads report those).
func corruptTail(cmd string, l *partition.Log) error {
	if _, err := l.Offsets(); err != nil {
		return nil
	}
	segs := l.Segments()
	if len(segs) == 0 {
		return nil
	}
	s := segs[len(segs)-1]
	if s.End() >= s.Size {
		return nil
	}
	f, err := os.Open(s.Log)
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := format.NewScanner(f, s.Size, format.ScanOptions{HeadersOnly: true})
	sc.SetPos(s.End())
	var p verify.Problem
	_, err = sc.Next()
	var pe *format.PosError
	switch {
	case err == nil:
		// A batch the Log has not read yet: appended meanwhile.
		return nil
	case errors.As(err, &pe):
		if t := sc.Tail(); sc.Done() && t.Kind == format.TailZeros {
			return nil
		}
		p = verify.ProblemAt(pe, verify.StageEntry, pe.Pos, pe.Offset)
	case errors.Is(err, io.EOF):
		var junk bool
		if p, junk = verify.JunkTail(f, sc.Tail()); !junk {
			return nil
		}
	default:
		return nil
	}
	off := "offset unknown"
	if p.Offset >= 0 {
		off = "offset " + strconv.FormatInt(p.Offset, 10)
	}
	return findingsError("%s: %s at position %d, %s: %s: %s (the log ends before it)", cmd, s.Log, p.Position, off, p.Kind, p.Message)
}

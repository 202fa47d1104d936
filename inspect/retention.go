package inspect

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/verify"
)

// Retention forecasts the broker's retention decision for a partition
// directory, segment by segment, with the rules of Kafka 4.3.1's
// UnifiedLog.deleteOldSegments (storage/.../log/UnifiedLog.java) and, for
// compacted topics, LogCleanerManager.cleanableOffsets and
// calculateCleanableBytes (storage/.../log/LogCleanerManager.java).
//
// deleteOldSegments runs three passes in this order, each deleting a prefix
// of the segments (deletableSegments stops at the first segment that may not
// go): the log start offset pass, then (cleanup.policy contains "delete")
// the retention.bytes pass and the retention.ms pass. A segment may go only
// when the high watermark is at or past the next segment's base offset (the
// log end offset for the last segment), and a last segment that is empty
// never goes. When a pass deletes every segment the broker first rolls a new
// empty active segment at the log end offset.

// Topic config defaults (TopicConfig / ServerLogConfigs, Kafka 4.3.1).
const (
	DefaultRetentionMs            = 604800000 // 7 days
	DefaultRetentionBytes         = -1
	DefaultMinCleanableDirtyRatio = 0.5
)

// Reasons a segment is deletable, as the JSON names them.
const (
	RetentionReasonLogStart = "log-start-offset"
	RetentionReasonBytes    = "retention.bytes"
	RetentionReasonMs       = "retention.ms"
)

// Where a segment's age (UnifiedLog's LogSegment.largestTimestamp) came from.
const (
	RetentionAgeTimeIndex = "timeindex" // the last .timeindex entry
	RetentionAgeBatches   = "batches"   // the largest batch timestamp (the index recovery rebuilds)
	RetentionAgeMtime     = "mtime"     // the .log file's modification time
)

// RetentionConfig is the topic configuration retention reads.
type RetentionConfig struct {
	RetentionMs    int64 // retention.ms; < 0: no time limit
	RetentionBytes int64 // retention.bytes; < 0: no size limit
	// CleanupPolicy is cleanup.policy: "delete", "compact" or both.
	CleanupPolicy          string
	MinCleanableDirtyRatio float64 // min.cleanable.dirty.ratio
	MinCompactionLagMs     int64   // min.compaction.lag.ms
}

// DefaultRetentionConfig is Kafka's default topic configuration.
func DefaultRetentionConfig() RetentionConfig {
	return RetentionConfig{RetentionMs: DefaultRetentionMs, RetentionBytes: DefaultRetentionBytes,
		CleanupPolicy: "delete", MinCleanableDirtyRatio: DefaultMinCleanableDirtyRatio}
}

// Validate refuses what Kafka's LogConfig refuses (a ConfigException, the
// topic config is never applied): a cleanup.policy element other than
// compact or delete (ValidList.in), and retention.ms below -1 (atLeast(-1)).
// retention.bytes may be any negative number (no limit), as in Kafka.
func (c RetentionConfig) Validate() error {
	for _, s := range strings.Split(c.CleanupPolicy, ",") {
		switch strings.TrimSpace(s) {
		case "compact", "delete":
		case "":
			if strings.TrimSpace(c.CleanupPolicy) != "" {
				return errors.New("cleanup.policy " + strconv.Quote(c.CleanupPolicy) + " has an empty element")
			}
		default:
			return errors.New("cleanup.policy " + strconv.Quote(c.CleanupPolicy) + ": " + strconv.Quote(strings.TrimSpace(s)) +
				" is neither compact nor delete")
		}
	}
	if c.RetentionMs < -1 {
		return errors.New("retention.ms " + strconv.FormatInt(c.RetentionMs, 10) + " is below -1 (-1: no time limit)")
	}
	return nil
}

func (c RetentionConfig) policy(p string) bool {
	for _, s := range strings.Split(c.CleanupPolicy, ",") {
		if strings.TrimSpace(s) == p {
			return true
		}
	}
	return false
}

// RetentionOptions say when and against which offsets to decide.
type RetentionOptions struct {
	Config RetentionConfig
	// Now is the broker's clock, epoch ms.
	Now int64
	// HighWatermark < 0: the partition's entry in the log dir's
	// replication-offset-checkpoint, else the log end offset.
	HighWatermark int64
	// LogStartOffset < 0: the log dir's log-start-offset-checkpoint, else
	// the first segment's base offset.
	LogStartOffset int64
	// CleanerOffset < 0: the log dir's cleaner-offset-checkpoint, else the
	// log start offset (compacted topics only).
	CleanerOffset int64
	// Recovered ages segments as a broker does after recovery rebuilt the
	// time indexes (an unclean shutdown): from the batches' timestamps.
	// Otherwise the index files are taken as they are on disk, as a broker
	// opening a cleanly shut down log does — including the zero tail of a
	// preallocated active segment's time index, whose last entry reads 0.
	Recovered bool
	// MaxBatchBytes bounds one batch when scanning (0: the default).
	MaxBatchBytes int
}

// RetentionSegment is one segment's verdict.
type RetentionSegment struct {
	Type       string `json:"type"` // "retentionSegment"
	BaseOffset int64  `json:"baseOffset"`
	// NextOffset is the next segment's base offset, or the log end offset.
	NextOffset int64 `json:"nextOffset"`
	SizeBytes  int64 `json:"sizeBytes"`
	// LargestTimestamp is the segment's age (epoch ms) and AgeSource where
	// it came from.
	LargestTimestamp int64  `json:"largestTimestamp"`
	AgeSource        string `json:"ageSource"`
	Active           bool   `json:"active"`
	Deletable        bool   `json:"deletable"`
	// Reason is the pass that deletes it now, or nil.
	Reason *string `json:"reason"`
	// DeletableAt is when it becomes deletable if nothing else changes
	// (epoch ms): for a segment deletable now, when time retention made it
	// so, or Now when another pass deletes it; for the others, when time
	// retention will (never before the segments ahead of it, as only a
	// prefix goes). Nil when it never will: retention.ms is unlimited, the
	// policy is not delete, or the high watermark is below NextOffset.
	DeletableAt *int64 `json:"deletableAt"`
	// FutureTimestamp: LargestTimestamp is after Now, which blocks time
	// retention for this and every later segment (KAFKA-20609).
	FutureTimestamp bool `json:"futureTimestamp"`
	// HeldBy names why a segment that is not deletable now stays:
	// "empty-active-segment", "high-watermark" (it is not below it),
	// "policy" (cleanup.policy has no delete), "future-timestamp" (its or
	// an earlier segment's timestamp is in the future), "earlier-segment"
	// (expired, but an earlier one stays), "not-expired", "no-limit"
	// (retention.ms and retention.bytes are both unlimited); "" when
	// deletable.
	HeldBy string `json:"heldBy"`

	// agePath and agePos are where LargestTimestamp was read: the
	// .timeindex and its last entry's position, the .log and the batch's
	// position, or the .log and -1 for its modification time.
	agePath string
	agePos  int64
}

// RetentionCompaction is the log cleaner's view of a compacted topic.
type RetentionCompaction struct {
	Type             string `json:"type"` // "compaction"
	FirstDirtyOffset int64  `json:"firstDirtyOffset"`
	// FirstUncleanableOffset is the base offset of the first segment the
	// cleaner may not touch (the active segment, the one holding the
	// high watermark, or the first within min.compaction.lag.ms).
	FirstUncleanableOffset int64   `json:"firstUncleanableOffset"`
	CleanBytes             int64   `json:"cleanBytes"`
	CleanableBytes         int64   `json:"cleanableBytes"`
	DirtyRatio             float64 `json:"dirtyRatio"`
	MinCleanableDirtyRatio float64 `json:"minCleanableDirtyRatio"`
	// Cleanable: the dirty ratio reaches min.cleanable.dirty.ratio and
	// there are cleanable bytes.
	Cleanable bool `json:"cleanable"`
}

// RetentionSummary is the whole decision.
type RetentionSummary struct {
	Type              string `json:"type"` // "retentionSummary"
	Dir               string `json:"dir"`
	Now               int64  `json:"now"`
	RetentionMs       int64  `json:"retentionMs"`
	RetentionBytes    int64  `json:"retentionBytes"`
	CleanupPolicy     string `json:"cleanupPolicy"`
	HighWatermark     int64  `json:"highWatermark"`
	LogStartOffset    int64  `json:"logStartOffset"`
	LogEndOffset      int64  `json:"logEndOffset"`
	NewLogStartOffset int64  `json:"newLogStartOffset"`
	DeletableSegments int    `json:"deletableSegments"`
	DeletableBytes    int64  `json:"deletableBytes"`
	// Rolled: every segment goes, so the broker first rolls an empty
	// active segment at the log end offset.
	Rolled bool `json:"rolled"`
	// FutureTimestampSegments are the base offsets whose age the time
	// pass found in the future (Kafka logs a warning for each).
	FutureTimestampSegments []int64              `json:"futureTimestampSegments"`
	Compaction              *RetentionCompaction `json:"compaction"`
}

// RetentionReport is Retention's answer.
type RetentionReport struct {
	Segments []RetentionSegment
	Summary  RetentionSummary
}

// HeldByFuture returns the first segment whose largest timestamp lies in
// the future when that holds back time retention (KAFKA-20609): some
// segment stays because of it. ok is false otherwise.
func (rep *RetentionReport) HeldByFuture() (baseOffset int64, ok bool) {
	held := false
	for _, s := range rep.Segments {
		held = held || s.HeldBy == "future-timestamp"
	}
	if !held {
		return 0, false
	}
	for _, s := range rep.Segments {
		if s.FutureTimestamp {
			return s.BaseOffset, true
		}
	}
	return 0, false
}

// Retention reads a partition directory's segment sizes, ages and log end
// offset (batch headers only) and applies deleteOldSegments at opts.Now.
func Retention(dir string, opts RetentionOptions) (*RetentionReport, error) {
	d, err := partition.Open(dir)
	if err != nil {
		return nil, err
	}
	segs := make([]partition.Segment, 0, len(d.Segments))
	for _, s := range d.Segments {
		if s.Log != "" {
			segs = append(segs, s)
		}
	}
	if len(segs) == 0 {
		return nil, errors.New(dir + ": no log segment")
	}
	rep := &RetentionReport{Segments: make([]RetentionSegment, len(segs))}
	for i, s := range segs {
		rs, err := retentionSegment(s, opts, i == len(segs)-1)
		if err != nil {
			return nil, err
		}
		rep.Segments[i] = rs
	}
	last := &rep.Segments[len(segs)-1]
	leo := last.NextOffset
	for i := range rep.Segments[:len(segs)-1] {
		rep.Segments[i].NextOffset = rep.Segments[i+1].BaseOffset
	}
	last.Active = true

	sum := &rep.Summary
	*sum = RetentionSummary{Type: "retentionSummary", Dir: dir, Now: opts.Now, RetentionMs: opts.Config.RetentionMs,
		RetentionBytes: opts.Config.RetentionBytes, CleanupPolicy: opts.Config.CleanupPolicy, LogEndOffset: leo,
		FutureTimestampSegments: []int64{}}
	sum.HighWatermark = opts.HighWatermark
	if sum.HighWatermark < 0 {
		sum.HighWatermark = leo
		if hw, ok := logDirCheckpoint(d, partition.ReplicationCheckpoint); ok {
			sum.HighWatermark = min(hw, leo)
		}
	}
	sum.LogStartOffset = opts.LogStartOffset
	if sum.LogStartOffset < 0 {
		sum.LogStartOffset = rep.Segments[0].BaseOffset
		if ls, ok := logDirCheckpoint(d, partition.LogStartCheckpoint); ok {
			sum.LogStartOffset = max(ls, rep.Segments[0].BaseOffset)
		}
	}
	decideRetention(rep, opts)
	if opts.Config.policy("compact") {
		first := opts.CleanerOffset
		if first < 0 {
			first = sum.LogStartOffset
			if c, ok := logDirCheckpoint(d, partition.CleanerCheckpoint); ok {
				first = c
			}
		}
		sum.Compaction = retentionCompaction(rep, opts, first)
	}
	return rep, nil
}

// retentionSegment measures one segment: its size, its age and (for the
// last one, or when ages come from the batches) its offsets.
func retentionSegment(s partition.Segment, opts RetentionOptions, last bool) (RetentionSegment, error) {
	rs := RetentionSegment{Type: "retentionSegment", BaseOffset: s.BaseOffset, NextOffset: s.BaseOffset, LargestTimestamp: -1}
	f, err := os.Open(s.Log)
	if err != nil {
		return rs, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return rs, err
	}
	rs.SizeBytes = st.Size()
	mtime := st.ModTime().UnixMilli()
	if last || opts.Recovered {
		maxTs, maxPos := int64(-1), int64(-1)
		sc := format.NewScanner(f, st.Size(), format.ScanOptions{HeadersOnly: true, MaxBatchBytes: opts.MaxBatchBytes})
		for {
			b, err := sc.Next()
			if err != nil {
				if sc.Done() {
					break
				}
				continue // an unreadable batch: the scan goes on after it
			}
			rs.NextOffset = b.NextOffset()
			if b.Magic > format.MagicV0 && b.MaxTimestamp > maxTs {
				maxTs, maxPos = b.MaxTimestamp, b.Pos
			}
		}
		if opts.Recovered {
			rs.LargestTimestamp, rs.AgeSource = maxTs, RetentionAgeBatches
			rs.agePath, rs.agePos = s.Log, maxPos
		}
	}
	if !opts.Recovered && s.TimeIndex != "" {
		ts, pos, ok, err := lastTimeIndexTimestamp(s.TimeIndex)
		if err != nil {
			return rs, err
		}
		if ok {
			rs.LargestTimestamp, rs.AgeSource = ts, RetentionAgeTimeIndex
			rs.agePath, rs.agePos = s.TimeIndex, pos
		}
	}
	// LogSegment.largestTimestamp: the time index's maximum when it is
	// >= 0, else the .log file's modification time.
	if rs.LargestTimestamp < 0 {
		rs.LargestTimestamp, rs.AgeSource = mtime, RetentionAgeMtime
		rs.agePath, rs.agePos = s.Log, -1
	}
	return rs, nil
}

// Findings counts the segments whose largest timestamp lies in the future
// when that holds back time retention (HeldByFuture), and returns the
// first as a problem: the file and byte position its age was read from
// (position -1 for a modification time) and its base offset.
func (rep *RetentionReport) Findings() (n int, first *verify.Problem) {
	if _, held := rep.HeldByFuture(); !held {
		return 0, nil
	}
	for i := range rep.Segments {
		s := &rep.Segments[i]
		if !s.FutureTimestamp {
			continue
		}
		if n++; first == nil {
			first = &verify.Problem{Path: s.agePath, Position: s.agePos, Offset: s.BaseOffset,
				Message: "largest timestamp " + i64(s.LargestTimestamp) + " (" + s.AgeSource + ") is after now (" + i64(rep.Summary.Now) +
					"): time retention is held back from here on (KAFKA-20609)"}
		}
	}
	return n, first
}

// lastTimeIndexTimestamp reads the timestamp of a .timeindex's last entry,
// counting entries as floor(size/12) as the broker does when it opens an
// existing index (a preallocated zero tail counts).
func lastTimeIndexTimestamp(path string) (ts, pos int64, ok bool, err error) {
	f, size, err := safeio.OpenSized(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, 0, false, nil
		}
		return 0, 0, false, err
	}
	defer f.Close()
	n := size / format.TimeIndexEntrySize
	if n == 0 {
		return 0, 0, false, nil
	}
	var e [format.TimeIndexEntrySize]byte
	pos = (n - 1) * format.TimeIndexEntrySize
	if _, err := f.ReadAt(e[:], pos); err != nil {
		return 0, 0, false, err
	}
	return int64(binary.BigEndian.Uint64(e[:])), pos, true, nil
}

// decideRetention runs the three passes over the measured segments and the
// forecast.
func decideRetention(rep *RetentionReport, opts RetentionOptions) {
	sum := &rep.Summary
	segs := rep.Segments
	hw := sum.HighWatermark
	cfg := opts.Config
	del := cfg.policy("delete")
	// live is the index of the first segment still present; rolled is
	// set once every segment has gone (the new empty segment at the log
	// end offset then blocks every later pass).
	live := 0
	rolled := false
	eligible := func(i int) bool { return hw >= segs[i].NextOffset && !(segs[i].Active && segs[i].SizeBytes == 0) }
	pass := func(reason string, pred func(i int) bool) {
		if rolled {
			return
		}
		for live < len(segs) {
			i := live
			if hw < segs[i].NextOffset || !pred(i) || (segs[i].Active && segs[i].SizeBytes == 0) {
				return
			}
			r := reason
			segs[i].Deletable, segs[i].Reason = true, &r
			live++
		}
		rolled = true
	}
	pass(RetentionReasonLogStart, func(i int) bool {
		return !segs[i].Active && segs[i].NextOffset <= sum.LogStartOffset
	})
	if del && cfg.RetentionBytes >= 0 {
		var size int64
		for _, s := range segs[live:] {
			size += s.SizeBytes
		}
		diff := size - cfg.RetentionBytes
		if diff >= 0 {
			pass(RetentionReasonBytes, func(i int) bool {
				if diff-segs[i].SizeBytes >= 0 {
					diff -= segs[i].SizeBytes
					return true
				}
				return false
			})
		}
	}
	if del && cfg.RetentionMs >= 0 {
		pass(RetentionReasonMs, func(i int) bool {
			if opts.Now < segs[i].LargestTimestamp {
				sum.FutureTimestampSegments = append(sum.FutureTimestampSegments, segs[i].BaseOffset)
				return false
			}
			return opts.Now-segs[i].LargestTimestamp > cfg.RetentionMs
		})
	}
	sum.Rolled = rolled
	sum.NewLogStartOffset = sum.LogStartOffset
	if rolled {
		sum.NewLogStartOffset = max(sum.LogStartOffset, sum.LogEndOffset)
	} else {
		sum.NewLogStartOffset = max(sum.LogStartOffset, segs[live].BaseOffset)
	}
	sum.DeletableSegments = live
	for _, s := range segs[:live] {
		sum.DeletableBytes += s.SizeBytes
	}

	// The forecast, and why the rest stay. at is when the previous
	// segment goes (only a prefix is deleted, so no segment goes before
	// it); -2 once a segment never goes by time.
	var at int64 = -1
	future := false
	for i := range segs {
		s := &segs[i]
		s.FutureTimestamp = s.LargestTimestamp > opts.Now
		future = future || s.FutureTimestamp
		var eff int64 = -2
		if del && cfg.RetentionMs >= 0 && eligible(i) && at != -2 {
			// Time retention deletes it once now - age > retention.ms
			// (which also puts now past a future age).
			eff = max(at, s.LargestTimestamp+cfg.RetentionMs+1)
		}
		if s.Deletable {
			// Deletable now: when time retention made it so, or now
			// (another pass deletes it).
			if eff < 0 || eff > opts.Now {
				eff = opts.Now
			}
		}
		at = eff
		if eff >= 0 {
			v := eff
			s.DeletableAt = &v
		}
		if s.Deletable {
			continue
		}
		expired := cfg.RetentionMs >= 0 && s.LargestTimestamp <= opts.Now && opts.Now-s.LargestTimestamp > cfg.RetentionMs
		switch {
		case s.Active && s.SizeBytes == 0:
			s.HeldBy = "empty-active-segment"
		case hw < s.NextOffset:
			s.HeldBy = "high-watermark"
		case !del:
			s.HeldBy = "policy"
		case future && cfg.RetentionMs >= 0:
			s.HeldBy = "future-timestamp"
		case expired && i > live:
			s.HeldBy = "earlier-segment"
		case cfg.RetentionMs >= 0 || cfg.RetentionBytes >= 0:
			s.HeldBy = "not-expired"
		default:
			s.HeldBy = "no-limit"
		}
	}
}

// retentionCompaction is LogCleanerManager.cleanableOffsets and the dirty
// ratio of LogToClean: clean bytes are the segments below the first dirty
// offset, cleanable bytes those from it up to the first uncleanable
// segment. The last stable offset is taken to be the high watermark (open
// transactions are not considered).
func retentionCompaction(rep *RetentionReport, opts RetentionOptions, checkpoint int64) *RetentionCompaction {
	segs := rep.Segments
	sum := rep.Summary
	first := checkpoint
	if first < sum.LogStartOffset || first > sum.LogEndOffset {
		first = sum.LogStartOffset
	}
	active := segs[len(segs)-1].BaseOffset
	uncleanable := min(sum.HighWatermark, active)
	if lag := max(opts.Config.MinCompactionLagMs, 0); lag > 0 {
		for _, s := range segs[:len(segs)-1] {
			if s.NextOffset <= first {
				continue
			}
			if s.LargestTimestamp > opts.Now-lag {
				uncleanable = min(uncleanable, s.BaseOffset)
				break
			}
		}
	}
	uncleanable = max(first, uncleanable)
	// calculateCleanableBytes: the first uncleanable segment is the
	// non-active segment holding the uncleanable offset, else the active.
	firstUnclean := active
	for _, s := range segs[:len(segs)-1] {
		if s.NextOffset > uncleanable {
			firstUnclean = s.BaseOffset
			break
		}
	}
	c := &RetentionCompaction{Type: "compaction", FirstDirtyOffset: first, FirstUncleanableOffset: firstUnclean,
		MinCleanableDirtyRatio: opts.Config.MinCleanableDirtyRatio}
	from := min(first, firstUnclean)
	for _, s := range segs {
		if s.BaseOffset < first && s.NextOffset <= first {
			c.CleanBytes += s.SizeBytes
		} else if s.BaseOffset < first && first < s.NextOffset {
			c.CleanBytes += s.SizeBytes // logSegments(-1, first) includes the segment holding it
		}
		if s.NextOffset > from && s.BaseOffset < firstUnclean {
			c.CleanableBytes += s.SizeBytes
		}
	}
	if total := c.CleanBytes + c.CleanableBytes; total > 0 {
		c.DirtyRatio = float64(c.CleanableBytes) / float64(total)
	}
	c.Cleanable = c.CleanableBytes > 0 && c.DirtyRatio >= c.MinCleanableDirtyRatio
	return c
}

// logDirCheckpoint finds the partition's entry in a log-dir-level offset
// checkpoint beside the partition directory.
func logDirCheckpoint(d *partition.Dir, name string) (int64, bool) {
	off, ok, err := partition.CheckpointOffset(d.Path, name)
	return off, ok && err == nil
}

// ParseRetentionConfig reads topic configs from a properties file or from
// `kafka-configs --describe` output ("  retention.ms=1000 sensitive=false
// synonyms={...}"): the first token of each line is key=value; lines that
// end in "are:", blank lines and # comments are skipped. Broker defaults
// (log.retention.ms, .minutes, .hours, log.retention.bytes,
// log.cleanup.policy, log.cleaner.min.cleanable.ratio,
// log.cleaner.min.compaction.lag.ms) apply where the topic key is absent.
// Keys it does not use are ignored; values that do not parse are errors
// naming the line.
func ParseRetentionConfig(data []byte, base RetentionConfig) (RetentionConfig, error) {
	kv := map[string]string{}
	line := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	lines := map[string]int{}
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || t[0] == '#' || t[0] == '!' || strings.HasSuffix(t, "are:") {
			continue
		}
		if i := strings.IndexAny(t, " \t"); i >= 0 {
			t = t[:i]
		}
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			k, v, ok = strings.Cut(t, ":")
		}
		if !ok {
			continue
		}
		kv[k], lines[k] = v, line
	}
	if err := sc.Err(); err != nil {
		return base, err
	}
	cfg := base
	num := func(k string, mul int64, dst *int64) error {
		v, ok := kv[k]
		if !ok {
			return nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return errors.New("line " + strconv.Itoa(lines[k]) + ": " + k + "=" + v + ": not a number")
		}
		if n >= 0 {
			n *= mul
		}
		*dst = n
		return nil
	}
	// Broker defaults first (hours < minutes < ms), then the topic's.
	steps := []struct {
		k   string
		mul int64
		dst *int64
	}{
		{"log.retention.hours", 3600000, &cfg.RetentionMs}, {"log.retention.minutes", 60000, &cfg.RetentionMs},
		{"log.retention.ms", 1, &cfg.RetentionMs}, {"retention.ms", 1, &cfg.RetentionMs},
		{"log.retention.bytes", 1, &cfg.RetentionBytes}, {"retention.bytes", 1, &cfg.RetentionBytes},
		{"log.cleaner.min.compaction.lag.ms", 1, &cfg.MinCompactionLagMs}, {"min.compaction.lag.ms", 1, &cfg.MinCompactionLagMs},
	}
	for _, s := range steps {
		if err := num(s.k, s.mul, s.dst); err != nil {
			return base, err
		}
	}
	for _, k := range []string{"log.cleanup.policy", "cleanup.policy"} {
		if v, ok := kv[k]; ok {
			cfg.CleanupPolicy = strings.Trim(v, "[]")
		}
	}
	for _, k := range []string{"log.cleaner.min.cleanable.ratio", "min.cleanable.dirty.ratio"} {
		if v, ok := kv[k]; ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return base, errors.New("line " + strconv.Itoa(lines[k]) + ": " + k + "=" + v + ": not a number")
			}
			cfg.MinCleanableDirtyRatio = f
		}
	}
	return cfg, nil
}

// WriteRetentionJSON writes one "retentionSegment" object per segment, then the
// "retentionSummary".
func WriteRetentionJSON(w io.Writer, rep *RetentionReport) error {
	for i := range rep.Segments {
		if err := writeJSONLine(w, &rep.Segments[i]); err != nil {
			return err
		}
	}
	return writeJSONLine(w, &rep.Summary)
}

// WriteRetentionTable writes the verdicts as a table and the summary as
// lines under it.
func WriteRetentionTable(w io.Writer, rep *RetentionReport) error {
	rows := make([][]string, 0, len(rep.Segments))
	for _, s := range rep.Segments {
		verdict := "kept"
		if s.Deletable {
			verdict = "delete: " + *s.Reason
		} else if s.HeldBy != "" {
			verdict = "kept: " + s.HeldBy
		}
		at := "never"
		if s.DeletableAt != nil {
			at = msTime(*s.DeletableAt)
		}
		age := msTime(s.LargestTimestamp) + " (" + s.AgeSource + ")"
		if s.FutureTimestamp {
			age += " FUTURE"
		}
		name := i64(s.BaseOffset)
		if s.Active {
			name += " (active)"
		}
		rows = append(rows, []string{name, i64(s.NextOffset), bytesCell(s.SizeBytes), age, verdict, at})
	}
	if err := dump.WriteTable(w, []string{"segment", "next offset", "bytes", "largest timestamp", "verdict now", "time retention deletes at"}, rows); err != nil {
		return err
	}
	s := rep.Summary
	lim := func(v int64) string {
		if v < 0 {
			return "unlimited"
		}
		return i64(v)
	}
	b := []byte("now " + msTime(s.Now) + "; retention.ms " + lim(s.RetentionMs) + ", retention.bytes " + lim(s.RetentionBytes) +
		", cleanup.policy " + s.CleanupPolicy + "\nhigh watermark " + i64(s.HighWatermark) + ", log start offset " + i64(s.LogStartOffset) +
		", log end offset " + i64(s.LogEndOffset) + "\n")
	b = append(b, "deletable now: "+strconv.Itoa(s.DeletableSegments)+" segments, "+i64(s.DeletableBytes)+" bytes; new log start offset "+i64(s.NewLogStartOffset)...)
	if s.Rolled {
		b = append(b, " (every segment goes: the broker first rolls an empty segment at the log end offset)"...)
	}
	b = append(b, '\n')
	if base, ok := rep.HeldByFuture(); ok {
		b = append(b, "timestamps in the future hold back time retention from segment "+i64(base)+" on (KAFKA-20609)\n"...)
	}
	if c := s.Compaction; c != nil {
		b = append(b, "compaction: first dirty offset "+i64(c.FirstDirtyOffset)+", first uncleanable offset "+i64(c.FirstUncleanableOffset)+
			", dirty ratio "+strconv.FormatFloat(c.DirtyRatio, 'f', 3, 64)+" (min.cleanable.dirty.ratio "+strconv.FormatFloat(c.MinCleanableDirtyRatio, 'f', -1, 64)+
			"): "...)
		if c.Cleanable {
			b = append(b, "cleanable\n"...)
		} else {
			b = append(b, "not cleanable\n"...)
		}
	}
	_, err := w.Write(b)
	return err
}

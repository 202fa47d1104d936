package tiered

import (
	"os"

	"github.com/klog-dev/klog/partition"
)

// RetentionConfig are the topic configs retention over both tiers reads
// (-1: no limit; local.* -2: the same as the remote value, Kafka's
// default).
type RetentionConfig struct {
	RetentionMs         int64 `json:"retentionMs"`
	RetentionBytes      int64 `json:"retentionBytes"`
	LocalRetentionMs    int64 `json:"localRetentionMs"`
	LocalRetentionBytes int64 `json:"localRetentionBytes"`
}

// RetentionSegment is one segment's verdict.
type RetentionSegment struct {
	Tier        string `json:"tier"`
	SegmentID   string `json:"segmentId,omitempty"`
	Key         string `json:"key"`
	StartOffset int64  `json:"startOffset"`
	EndOffset   int64  `json:"endOffset"`
	Bytes       int64  `json:"bytes"`
	MaxTs       int64  `json:"maxTimestampMs"`
	Delete      bool   `json:"delete"`
	// Reason is why it goes now (retention.ms, retention.bytes,
	// log-start-offset, local.retention.ms, local.retention.bytes), or
	// why it stays.
	Reason string `json:"reason"`
	// DeletableAt is when time retention deletes it (-1: never).
	DeletableAt int64 `json:"deletableAtMs"`
}

// RetentionReport is retention over both tiers of one partition.
type RetentionReport struct {
	Partition      string             `json:"partition"`
	Now            int64              `json:"nowMs"`
	Config         RetentionConfig    `json:"config"`
	LogStartOffset int64              `json:"logStartOffset"`
	HighestTiered  int64              `json:"highestTieredOffset"`
	RemoteBytes    int64              `json:"remoteBytes"`
	LocalBytes     int64              `json:"localBytes"`
	Segments       []RetentionSegment `json:"segments"`
}

// Retention is what the broker's retention would delete now and when the
// rest goes: remote segments by RemoteLogManager's expiration task (the
// log start offset, then retention.ms by maxTimestampMs, then
// retention.bytes over the remote segments plus the local ones not yet
// copied, each deleting only a prefix), local segments by local.retention.*
// (by their largest timestamp) once they are copied
// (UnifiedLog.deleteOldSegments with remote storage enabled).
func (t *Tiers) Retention(cfg RetentionConfig, now int64) *RetentionReport {
	if cfg.LocalRetentionMs == -2 {
		cfg.LocalRetentionMs = cfg.RetentionMs
	}
	if cfg.LocalRetentionBytes == -2 {
		cfg.LocalRetentionBytes = cfg.RetentionBytes
	}
	rep := &RetentionReport{Partition: t.partition(), Now: now, Config: cfg, LogStartOffset: -1, HighestTiered: -1}
	if t.Lineage != nil {
		rep.HighestTiered = t.Lineage.HighestOffset()
	}
	if t.Local != nil {
		rep.LogStartOffset = t.Local.LogStartOffset
	}
	remote := t.segments()
	var locals []RetentionSegment
	onlyLocal := int64(0)
	maxTs := map[int64]int64{}
	if t.Local != nil {
		if l, err := partition.OpenLog(t.Local.Dir, partition.LogOptions{}); err == nil {
			for _, seg := range l.Segments() {
				maxTs[seg.BaseOffset] = seg.MaxTimestamp
			}
		}
		for i, p := range t.Local.Logs {
			st, err := os.Stat(p)
			if err != nil {
				continue
			}
			end := int64(-1)
			if i+1 < len(t.Local.Logs) {
				end = baseOf(t.Local.Logs[i+1]) - 1
			}
			ls := RetentionSegment{Tier: "local", Key: p, StartOffset: baseOf(p), EndOffset: end, Bytes: st.Size(), MaxTs: -1, DeletableAt: -1}
			if ts, ok := maxTs[ls.StartOffset]; ok {
				ls.MaxTs = ts
				if cfg.LocalRetentionMs >= 0 && ts >= 0 {
					ls.DeletableAt = ts + cfg.LocalRetentionMs
				}
			}
			if rep.HighestTiered < 0 || ls.StartOffset > rep.HighestTiered {
				onlyLocal += ls.Bytes
			}
			rep.LocalBytes += ls.Bytes
			locals = append(locals, ls)
		}
	}
	for _, s := range remote {
		if s.meta != nil {
			rep.RemoteBytes += int64(s.meta.SizeInBytes)
		}
	}
	breached := int64(-1)
	if cfg.RetentionBytes >= 0 {
		breached = max(0, rep.RemoteBytes+onlyLocal-cfg.RetentionBytes)
	}
	prefix := true
	for _, s := range remote {
		rs := RetentionSegment{Tier: "remote", SegmentID: s.seg.SegmentID.String(), Key: s.seg.Key(SuffixLog), StartOffset: s.start, EndOffset: s.end, MaxTs: s.maxTs, DeletableAt: -1, Reason: "kept"}
		if s.meta != nil {
			rs.Bytes = int64(s.meta.SizeInBytes)
		}
		if cfg.RetentionMs >= 0 && s.maxTs >= 0 {
			rs.DeletableAt = s.maxTs + cfg.RetentionMs
		}
		switch {
		case !prefix:
		case rep.LogStartOffset >= 0 && s.end < rep.LogStartOffset:
			rs.Delete, rs.Reason = true, "log-start-offset"
		case rs.DeletableAt >= 0 && rs.DeletableAt <= now:
			rs.Delete, rs.Reason = true, "retention.ms"
		case breached > 0 && rs.Bytes <= breached:
			rs.Delete, rs.Reason = true, "retention.bytes"
			breached -= rs.Bytes
		default:
			prefix = false
		}
		rep.Segments = append(rep.Segments, rs)
	}
	// Local: only what is already in the remote tier may go, and never
	// the active (last) segment.
	localBreach := int64(-1)
	if cfg.LocalRetentionBytes >= 0 {
		localBreach = max(0, rep.LocalBytes-cfg.LocalRetentionBytes)
	}
	prefix = true
	for i, ls := range locals {
		ls.Reason = "kept"
		tiered := rep.HighestTiered >= 0 && ls.EndOffset >= 0 && ls.EndOffset <= rep.HighestTiered
		switch {
		case i == len(locals)-1:
			ls.Reason = "kept: the active segment"
			prefix = false
		case !tiered:
			ls.Reason = "kept: not copied to the remote tier yet"
			prefix = false
		case !prefix:
		case ls.DeletableAt >= 0 && ls.DeletableAt <= now:
			ls.Delete, ls.Reason = true, "local.retention.ms"
		case localBreach > 0 && ls.Bytes <= localBreach:
			ls.Delete, ls.Reason = true, "local.retention.bytes"
			localBreach -= ls.Bytes
		default:
			ls.Reason = "kept: within local.retention.*"
			prefix = false
		}
		rep.Segments = append(rep.Segments, ls)
	}
	return rep
}

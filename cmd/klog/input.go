package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/offsetstore"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// One input language for offsets, times and isolation levels, shared by
// every command (README "Offsets, times and isolation").

// isolationNames are Kafka's isolation.level values, the one spelling
// klog accepts everywhere (--isolation of fetch and offsets).
var isolationNames = []string{"read_uncommitted", "read_committed"}

// parseIsolation reads an isolation level as Kafka's consumers spell it; a
// misspelt one gets a suggestion (read_comitted: did you mean
// read_committed?).
func parseIsolation(s string) (fetch.Isolation, error) {
	iso, err := fetch.ParseIsolation(s)
	if err != nil {
		if m := suggest(s, isolationNames); m != "" && m != s {
			return iso, fmt.Errorf("%w (did you mean %s?)", err, m)
		}
	}
	return iso, err
}

// now is the clock relative times are read against; tests replace it.
var now = time.Now

// parseTime reads a timestamp flag: epoch milliseconds (1700000000000),
// RFC 3339 (2023-11-14T22:13:20Z, fractions allowed) or a duration before
// now (-1h, -90m, -1h30m, -2d for days). The result is epoch ms, never
// before 1970.
func parseTime(s string) (int64, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		if v < 0 {
			return 0, errors.New("epoch milliseconds must not be negative (for a time before now write a duration such as -1h)")
		}
		return v, nil
	}
	if strings.HasPrefix(s, "-") {
		d, err := parseAgo(s[1:])
		if err != nil {
			return 0, err
		}
		ms := now().Add(-d).UnixMilli()
		if ms < 0 {
			return 0, errors.New(strconv.Quote(s) + " is before 1970")
		}
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, errors.New("want epoch milliseconds, an RFC 3339 time (2023-11-14T22:13:20Z) or a duration before now (-1h), got " + strconv.Quote(s))
	}
	if t.UnixMilli() < 0 {
		return 0, errors.New(strconv.Quote(s) + " is before 1970")
	}
	return t.UnixMilli(), nil
}

// parseAgo reads a Go duration, also accepting a whole number of days
// ("2d") on its own.
func parseAgo(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseInt(d, 10, 64); err == nil && n >= 0 && n < 1<<20 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, errors.New("want a duration before now such as -1h, -30m or -2d, got " + strconv.Quote("-"+s))
	}
	return d, nil
}

// offsetKeywords are the named offsets an --offset flag accepts: klog's and
// kcat's (-o beginning, end, stored) and rpk's start.
var offsetKeywords = []string{"earliest", "latest", "beginning", "end", "stored", "start"}

// offsetSpec is an --offset value: an absolute offset, the last N records,
// or earliest/latest (the log start and end offsets).
type offsetSpec struct {
	kind offsetKind
	n    int64 // the offset, or N for offsetLast
}

type offsetKind uint8

const (
	offsetAbsolute offsetKind = iota
	offsetLast                // -N: the last N records
	offsetEarliest
	offsetLatest
	// offsetTime is kcat's s@T and rpk's @T: the offset the broker's
	// lookup by timestamp gives for T (n); offsetTimeEnd is kcat's e@T,
	// the same lookup for the end of a range.
	offsetTime
	offsetTimeEnd
	// offsetStored is kcat's stored: the group's committed offset.
	offsetStored
)

// parseOffset reads N, -N, earliest or latest.
func parseOffset(s string) (offsetSpec, error) {
	switch s {
	case "earliest", "beginning", "start":
		return offsetSpec{kind: offsetEarliest}, nil
	case "latest", "end":
		return offsetSpec{kind: offsetLatest}, nil
	case "stored":
		return offsetSpec{kind: offsetStored}, nil
	}
	if ts, ok, err := atTime(s, "s@", "@"); ok {
		return offsetSpec{kind: offsetTime, n: ts}, err
	}
	if ts, ok, err := atTime(s, "e@"); ok {
		return offsetSpec{kind: offsetTimeEnd, n: ts}, err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		msg := "want an offset, -N (the last N records), earliest or latest (kcat's beginning, end), stored (the group's commit), s@T or @T (the first offset at time T), got " + strconv.Quote(s)
		if m := suggest(s, offsetKeywords); m != "" && strings.IndexFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' }) >= 0 {
			msg += " (did you mean " + m + "?)"
		}
		return offsetSpec{}, errors.New(msg)
	}
	if v < 0 {
		if v == -v { // MinInt64
			return offsetSpec{}, errors.New("offset " + s + " is out of range")
		}
		return offsetSpec{kind: offsetLast, n: -v}, nil
	}
	return offsetSpec{kind: offsetAbsolute, n: v}, nil
}

// resolve turns the spec into an offset of a log whose offsets run from
// start (the log start offset) to end (the log end offset, exclusive).
// The last N records start at end-N, never below start.
func (o offsetSpec) resolve(start, end int64) int64 {
	switch o.kind {
	case offsetEarliest:
		return start
	case offsetLatest:
		return end
	case offsetLast:
		if end-start <= o.n {
			return start
		}
		return end - o.n
	}
	return o.n
}

// resolveIn resolves the spec against the partition directory dir, from
// its log start offset to its log end offset; group is the group whose
// commit "stored" reads.
func (o offsetSpec) resolveIn(dir, group string) (int64, error) {
	l, err := partition.OpenLog(dir, partition.LogOptions{})
	if err != nil {
		return 0, err
	}
	off, err := l.Offsets()
	if err != nil {
		return 0, err
	}
	return o.resolveLog(l, off.LogStartOffset, off.LogEndOffset, group)
}

// resolveLog resolves the spec against l read from start to end (the end
// the command reads up to): a time through the broker's lookup by
// timestamp (ListOffsets; no record at or after T gives end, where kcat's
// consumer then waits), "stored" through the group's commit in the log
// dir's __consumer_offsets (the store klog serve and fetch --follow
// --group commit to).
func (o offsetSpec) resolveLog(l *partition.Log, start, end int64, group string) (int64, error) {
	switch o.kind {
	case offsetTime, offsetTimeEnd:
		to, err := l.FetchOffsetByTimestamp(o.n)
		if err != nil {
			return 0, err
		}
		if !to.Found {
			return end, nil
		}
		return max(to.Offset, start), nil
	case offsetStored:
		if group == "" {
			return 0, errStoredNeedsGroup
		}
		st := offsetstore.Open(filepath.Dir(filepath.Clean(l.Dir())), produce.Options{})
		off, ok, err := st.CommittedOffset(group, l.Topic(), l.Partition())
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, fmt.Errorf("stored: group %q has no committed offset for %s-%d", group, l.Topic(), l.Partition())
		}
		return off, nil
	}
	return o.resolve(start, end), nil
}

// errStoredNeedsGroup: kcat's -o stored reads the group given with -G.
var errStoredNeedsGroup = errors.New("stored is the committed offset of a group: give --group G (-G)")

func (o offsetSpec) String() string {
	switch o.kind {
	case offsetEarliest:
		return "earliest"
	case offsetLatest:
		return "latest"
	case offsetLast:
		return "-" + strconv.FormatInt(o.n, 10)
	case offsetTime:
		return "s@" + strconv.FormatInt(o.n, 10)
	case offsetTimeEnd:
		return "e@" + strconv.FormatInt(o.n, 10)
	case offsetStored:
		return "stored"
	}
	return strconv.FormatInt(o.n, 10)
}

// atTime reads kcat's and rpk's timestamp offsets: s@T (start at T), e@T
// (end at T) and rpk's @T, for whichever prefixes the flag takes. T is
// any time parseTime reads. ok is false when s has none of them.
func atTime(s string, prefixes ...string) (ts int64, ok bool, err error) {
	for _, p := range prefixes {
		if rest, found := strings.CutPrefix(s, p); found {
			ts, err = parseTime(rest)
			return ts, true, err
		}
	}
	return 0, false, nil
}

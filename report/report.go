// Package report builds klog report: what one partition, a log dir or
// several brokers' log dirs hold, in one self-contained HTML file (styles,
// inline SVG charts and the script that draws a partition's detail when it
// is opened, all in the file: no network) and in JSON. Both are rendered
// from one Report, which is assembled from the same structures the other
// commands' --json print: inspect's segment rows, stats' hours, retention's
// verdicts, verify's problems, cluster's replica diffs and consumer groups,
// stats --what-if's codec answers. The package sits above cluster and
// inspect because it only gathers their answers; it decides nothing of its
// own.
package report

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/klog-dev/klog/cluster"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/inspect"
	"github.com/klog-dev/klog/verify"
)

// MaxFindings bounds the verify findings a report lists (FindingCount
// counts them all).
const MaxFindings = 1000

// Options say what to read and against which clock and topic config.
type Options struct {
	// Now is the retention clock (epoch ms).
	Now int64
	// Retention is the topic configuration every partition is judged by.
	Retention inspect.RetentionConfig
	// WhatIfCodecs are the codecs tried on the batches (nil: none, no
	// what-if section); WhatIfSample the fraction of batches recompressed.
	WhatIfCodecs []format.Compression
	WhatIfSample float64
	// MaxBatchBytes and MaxDecompressedBytes bound memory per batch (0:
	// the format defaults); Jobs is verify's parallelism (0: GOMAXPROCS).
	MaxBatchBytes        int
	MaxDecompressedBytes int
	Jobs                 int
}

// Report is what klog report shows, and the object klog report --json
// writes (its tags are the schema).
type Report struct {
	Type string `json:"type"` // "report"
	// Now is the clock retention was judged at (epoch ms), NowTime the
	// same in ISO-8601 UTC.
	Now     int64    `json:"now"`
	NowTime string   `json:"nowTime"`
	Inputs  []string `json:"inputs"`
	// LogDirs are the log dirs read, with the broker each belongs to.
	LogDirs  []LogDir `json:"logDirs"`
	Overview Overview `json:"overview"`
	Topics   []Topic  `json:"topics"`
	// Partitions are every partition directory read (one per replica),
	// in log dir, topic and partition order.
	Partitions []*Partition `json:"partitions"`
	// Hours are the bytes and records per UTC hour of every partition
	// (stats' hours, added up).
	Hours []inspect.HourStats `json:"hours"`
	// Findings are verify's problems (the first MaxFindings), each naming
	// its file, byte position and offset; FindingCount counts them all;
	// Files is how many files verify checked, FilesOK how many were clean.
	Findings     []verify.Problem `json:"findings"`
	FindingCount int              `json:"findingCount"`
	Files        int              `json:"files"`
	FilesOK      int              `json:"filesOk"`
	// Divergence is klog diff over every partition more than one broker
	// holds (nil when the log dirs are one broker's).
	Divergence []*cluster.PartitionDiff `json:"divergence"`
	// Groups is klog groups' report (nil when no __consumer_offsets
	// partition is among the inputs).
	Groups *cluster.GroupsReport `json:"groups"`
	// WhatIf is stats --what-if's answer over every partition's segments
	// (nil when no codec was asked for).
	WhatIf *inspect.WhatIfReport `json:"whatIf"`
}

// LogDir is one log dir read.
type LogDir struct {
	Path   string `json:"logDir"`
	Broker int32  `json:"broker"`
}

// Overview sums the partitions up.
type Overview struct {
	Brokers    []int32  `json:"brokers"`
	Topics     int      `json:"topics"`
	Partitions int      `json:"partitions"`
	Segments   int      `json:"segments"`
	Records    int64    `json:"records"`
	SizeBytes  int64    `json:"sizeBytes"`
	Codecs     []string `json:"codecs"`
	// DeletableBytes is what retention deletes now, over all partitions.
	DeletableBytes int64 `json:"deletableBytes"`
}

// Topic is one topic over the log dirs read.
type Topic struct {
	Name string `json:"name"`
	// Partitions counts distinct partition numbers, Replicas partition
	// directories (a partition on three brokers is three).
	Partitions int      `json:"partitions"`
	Replicas   int      `json:"replicas"`
	Segments   int      `json:"segments"`
	Records    int64    `json:"records"`
	SizeBytes  int64    `json:"sizeBytes"`
	Codecs     []string `json:"codecs"`
}

// Partition is one partition directory: klog segments' rows, klog stats'
// hours, klog retention's verdicts.
type Partition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Broker    int32  `json:"broker"`
	Dir       string `json:"dir"`
	// LogDir is the index of its log dir in Report.LogDirs.
	LogDir         int      `json:"logDirIndex"`
	SizeBytes      int64    `json:"sizeBytes"`
	Records        int64    `json:"records"`
	LogStartOffset int64    `json:"logStartOffset"`
	LogEndOffset   int64    `json:"logEndOffset"`
	Codecs         []string `json:"codecs"`
	// Findings counts verify's problems in its files.
	Findings int                  `json:"findings"`
	Segments []inspect.SegmentRow `json:"segments"`
	Hours    []inspect.HourStats  `json:"hours"`
	// Retention is klog retention's verdict per segment and its summary
	// (nil when retention could not read the partition: RetentionError).
	Retention        []inspect.RetentionSegment `json:"retention"`
	RetentionSummary *inspect.RetentionSummary  `json:"retentionSummary"`
	RetentionError   string                     `json:"retentionError,omitempty"`
	// Error is why the partition could not be read ("" when it was).
	Error string `json:"error,omitempty"`
}

// Build reads the paths (partition directories or log dirs, one or
// several brokers') and assembles the report. The error is for I/O trouble
// that stops the whole report (a path that cannot be read, a cancelled
// context); a partition that cannot be read is told in its Error.
func Build(ctx context.Context, paths []string, opts Options) (*Report, error) {
	dirs, err := cluster.Discover(paths)
	if err != nil {
		return nil, err
	}
	rep := &Report{Type: "report", Now: opts.Now, NowTime: isoMs(opts.Now), Inputs: paths,
		LogDirs: []LogDir{}, Topics: []Topic{}, Partitions: []*Partition{}, Hours: []inspect.HourStats{},
		Findings: []verify.Problem{}}
	brokers := map[int32]bool{}
	offsets := false
	var logs []string
	for i, ld := range dirs {
		rep.LogDirs = append(rep.LogDirs, LogDir{Path: ld.Path, Broker: ld.BrokerID})
		brokers[ld.BrokerID] = true
		for _, pd := range ld.Partitions {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			offsets = offsets || pd.Topic == cluster.OffsetsTopic
			p, files := partitionOf(ctx, pd, i, opts)
			logs = append(logs, files...)
			rep.Partitions = append(rep.Partitions, p)
		}
	}
	if err := rep.verify(ctx, paths, opts); err != nil {
		return nil, err
	}
	rep.summarise(brokers)
	if len(brokers) > 1 {
		diffs, err := cluster.DiffAll(ctx, dirs, inspect.DiffOptions{MaxBatchBytes: opts.MaxBatchBytes})
		if err != nil {
			return nil, err
		}
		rep.Divergence = diffs
		if rep.Divergence == nil {
			rep.Divergence = []*cluster.PartitionDiff{}
		}
	}
	if offsets {
		g, err := cluster.Groups(ctx, dirs, cluster.GroupsOptions{MaxBatchBytes: opts.MaxBatchBytes})
		if err != nil {
			return nil, err
		}
		rep.Groups = g
	}
	if len(opts.WhatIfCodecs) > 0 && len(logs) > 0 {
		w, err := inspect.WhatIf(ctx, logs, inspect.WhatIfOptions{Codecs: opts.WhatIfCodecs, Sample: opts.WhatIfSample, MaxBatchBytes: opts.MaxBatchBytes})
		if err != nil {
			return nil, err
		}
		rep.WhatIf = w
	}
	return rep, nil
}

// partitionOf reads one partition directory with segments, stats and
// retention; files are its .log files.
func partitionOf(ctx context.Context, pd *cluster.PartitionDir, logDir int, opts Options) (*Partition, []string) {
	p := &Partition{Topic: pd.Topic, Partition: pd.Partition, Broker: pd.LogDir.BrokerID, Dir: pd.Path, LogDir: logDir,
		LogStartOffset: -1, LogEndOffset: -1, Codecs: []string{}, Segments: []inspect.SegmentRow{}, Hours: []inspect.HourStats{},
		Retention: []inspect.RetentionSegment{}}
	segs, err := inspect.Segments(ctx, pd.Path, inspect.SegmentsOptions{MaxBatchBytes: opts.MaxBatchBytes,
		MaxDecompressedBytes: opts.MaxDecompressedBytes, Jobs: opts.Jobs})
	if err != nil {
		p.Error = err.Error()
		return p, nil
	}
	p.Segments = segs.Segments
	var files []string
	codecs := map[string]bool{}
	for _, s := range segs.Segments {
		p.SizeBytes += s.SizeBytes
		p.Records += s.Records
		if s.Log != "" {
			files = append(files, s.Log)
		}
		for _, c := range s.Codecs {
			codecs[c] = true
		}
	}
	p.Codecs = codecOrder(codecs)
	if len(files) > 0 {
		st, err := inspect.CollectStats(ctx, files, inspect.StatsOptions{MaxBatchBytes: opts.MaxBatchBytes, MaxDecompressedBytes: opts.MaxDecompressedBytes})
		if err != nil {
			p.Error = err.Error()
			return p, files
		}
		p.Hours = st.Hours
	}
	rr, err := inspect.Retention(pd.Path, inspect.RetentionOptions{Config: opts.Retention, Now: opts.Now,
		HighWatermark: -1, LogStartOffset: -1, CleanerOffset: -1, MaxBatchBytes: opts.MaxBatchBytes})
	if err != nil {
		p.RetentionError = err.Error()
	} else {
		p.Retention, p.RetentionSummary = rr.Segments, &rr.Summary
		p.LogStartOffset, p.LogEndOffset = rr.Summary.LogStartOffset, rr.Summary.LogEndOffset
	}
	return p, files
}

// verify runs klog verify's checks over the inputs and keeps the findings
// (not the informational observations), each with its file.
func (rep *Report) verify(ctx context.Context, paths []string, opts Options) error {
	byDir := map[string]*Partition{}
	for _, p := range rep.Partitions {
		byDir[filepath.Clean(p.Dir)] = p
	}
	for f, err := range verify.Files(ctx, paths, verify.Options{Jobs: opts.Jobs, MaxBatchBytes: opts.MaxBatchBytes, MaxDecompressedBytes: opts.MaxDecompressedBytes}) {
		if err != nil {
			return err
		}
		rep.Files++
		n := 0
		for _, pr := range f.Problems {
			if pr.Info {
				continue
			}
			n++
			if pr.Path == "" {
				pr.Path = f.Path
			}
			rep.FindingCount++
			if len(rep.Findings) < MaxFindings {
				rep.Findings = append(rep.Findings, pr)
			}
		}
		if f.Err != "" {
			n++
			rep.FindingCount++
			if len(rep.Findings) < MaxFindings {
				rep.Findings = append(rep.Findings, verify.Problem{Path: f.Path, Position: -1, Offset: -1, Message: f.Err})
			}
		}
		if n == 0 {
			rep.FilesOK++
		}
		if p := byDir[filepath.Dir(filepath.Clean(f.Path))]; p != nil {
			p.Findings += n
		}
	}
	return nil
}

// summarise fills the overview, the topics and the hours from the
// partitions.
func (rep *Report) summarise(brokers map[int32]bool) {
	o := &rep.Overview
	o.Brokers = []int32{}
	for b := range brokers {
		o.Brokers = append(o.Brokers, b)
	}
	sort.Slice(o.Brokers, func(i, j int) bool { return o.Brokers[i] < o.Brokers[j] })
	topics := map[string]*Topic{}
	parts := map[string]map[int32]bool{}
	tcodecs := map[string]map[string]bool{}
	all := map[string]bool{}
	hours := map[int64]*inspect.HourStats{}
	for _, p := range rep.Partitions {
		t := topics[p.Topic]
		if t == nil {
			t = &Topic{Name: p.Topic}
			topics[p.Topic], parts[p.Topic], tcodecs[p.Topic] = t, map[int32]bool{}, map[string]bool{}
		}
		parts[p.Topic][p.Partition] = true
		t.Replicas++
		t.Segments += len(p.Segments)
		t.Records += p.Records
		t.SizeBytes += p.SizeBytes
		for _, c := range p.Codecs {
			tcodecs[p.Topic][c], all[c] = true, true
		}
		o.Partitions++
		o.Segments += len(p.Segments)
		o.Records += p.Records
		o.SizeBytes += p.SizeBytes
		if p.RetentionSummary != nil {
			o.DeletableBytes += p.RetentionSummary.DeletableBytes
		}
		for _, h := range p.Hours {
			a := hours[h.HourMs]
			if a == nil {
				a = &inspect.HourStats{Hour: h.Hour, HourMs: h.HourMs}
				hours[h.HourMs] = a
			}
			a.Batches += h.Batches
			a.Records += h.Records
			a.Bytes += h.Bytes
		}
	}
	for name, t := range topics {
		t.Partitions = len(parts[name])
		t.Codecs = codecOrder(tcodecs[name])
		rep.Topics = append(rep.Topics, *t)
	}
	sort.Slice(rep.Topics, func(i, j int) bool { return rep.Topics[i].Name < rep.Topics[j].Name })
	o.Topics = len(rep.Topics)
	o.Codecs = codecOrder(all)
	for _, h := range hours {
		rep.Hours = append(rep.Hours, *h)
	}
	sort.Slice(rep.Hours, func(i, j int) bool { return rep.Hours[i].HourMs < rep.Hours[j].HourMs })
}

// codecOrder lists codec names in codec id order (none, gzip, snappy,
// lz4, zstd), unknown names last in name order.
func codecOrder(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	rank := func(c string) int {
		for id := format.Compression(0); id <= 4; id++ {
			if id.String() == c {
				return int(id)
			}
		}
		return 100
	}
	sort.Slice(out, func(i, j int) bool {
		ri, rj := rank(out[i]), rank(out[j])
		if ri != rj {
			return ri < rj
		}
		return out[i] < out[j]
	})
	return out
}

// WriteJSON writes the report as one JSON object on one line.
func WriteJSON(w io.Writer, rep *Report) error {
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteFile writes the HTML report to path: to a temporary file beside
// it, renamed over path once complete, so that a report is never left
// half written. It refuses to replace anything but a regular file.
func WriteFile(path string, rep *Report) error {
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		return &os.PathError{Op: "write", Path: path, Err: errNotRegular}
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".klog-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := WriteHTML(f, rep); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

type reportError string

func (e reportError) Error() string { return string(e) }

const errNotRegular = reportError("exists and is not a regular file")

func isoMs(ms int64) string {
	if ms < 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

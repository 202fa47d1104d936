package verify

import (
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/klog-dev/klog/partition"
)

// Metric names of Metrics.Write, a public interface (documented in the
// README). All are gauges: a textfile-collector file describes the last run.
const (
	metricRunTimestamp     = "klog_verify_run_timestamp_seconds"
	metricRunDuration      = "klog_verify_run_duration_seconds"
	metricRunBytesRead     = "klog_verify_run_bytes_read"
	metricDirTimestamp     = "klog_verify_log_dir_last_run_timestamp_seconds"
	metricDirBytes         = "klog_verify_log_dir_bytes_verified"
	metricDirBatches       = "klog_verify_log_dir_batches_verified"
	metricDirFindings      = "klog_verify_log_dir_findings"
	metricDirProblems      = "klog_verify_log_dir_problems"
	metricDirIOErrors      = "klog_verify_log_dir_io_errors"
	metricPartTimestamp    = "klog_verify_partition_last_run_timestamp_seconds"
	metricPartBytes        = "klog_verify_partition_bytes_verified"
	metricPartBatches      = "klog_verify_partition_batches_verified"
	metricPartFindings     = "klog_verify_partition_findings"
	metricPartProblems     = "klog_verify_partition_problems"
	metricPartIOErrors     = "klog_verify_partition_io_errors"
	metricPartSkippedFiles = "klog_verify_partition_files_unchanged"
)

// tally is what one log dir or partition adds up to over a run.
type tally struct {
	logDir, topic, part string
	bytes, batches      int64
	findings, ioErrors  int64
	unchanged           int64
	problems            map[string]int64
}

func (t *tally) add(f *FileReport) {
	if !f.Skipped {
		t.bytes += f.Bytes - f.VerifiedFrom
		t.batches += f.scanned
	} else {
		t.unchanged++
	}
	if f.ioErr != nil {
		t.ioErrors++
	}
	for _, p := range f.Problems {
		if p.Info {
			continue
		}
		t.findings++
		if t.problems == nil {
			t.problems = map[string]int64{}
		}
		t.problems[string(p.Kind)]++
	}
}

// Metrics adds up the reports of a run, per log directory and partition,
// for node_exporter's textfile collector: Add each report Files yields,
// then Write.
type Metrics struct {
	start       time.Time
	bytesRead   int64
	dirs, parts map[string]*tally
}

// NewMetrics returns empty Metrics of a run that began at start.
func NewMetrics(start time.Time) *Metrics {
	return &Metrics{start: start, dirs: map[string]*tally{}, parts: map[string]*tally{}}
}

// Write writes the metrics to path, atomically (so the collector never
// reads half a file): for the run, its start time, its duration and the
// bytes it read; per log directory and per partition, the run time, the
// bytes and batches this run verified (bytes a --state run skipped are not
// counted), findings, problems by kind and I/O errors. The text is
// Prometheus's exposition format, written by prometheus/common/expfmt.
func (m *Metrics) Write(path string, duration time.Duration) error {
	return writeAtomic(path, func(w io.Writer) error { return m.write(w, duration) })
}

// Add counts the file f.
func (m *Metrics) Add(f *FileReport) {
	m.bytesRead += f.BytesRead
	abs, err := filepath.Abs(f.Path)
	if err != nil {
		abs = f.Path
	}
	dir := filepath.Dir(abs)
	logDir := dir
	topic, part, isPart := partition.NameOf(dir)
	if isPart {
		logDir = filepath.Dir(dir)
	}
	d := m.dirs[logDir]
	if d == nil {
		d = &tally{logDir: logDir}
		m.dirs[logDir] = d
	}
	d.add(f)
	if !isPart {
		return
	}
	p := m.parts[dir]
	if p == nil {
		p = &tally{logDir: logDir, topic: topic, part: strconv.Itoa(int(part))}
		m.parts[dir] = p
	}
	p.add(f)
}

func (m *Metrics) write(w io.Writer, duration time.Duration) error {
	start := float64(m.start.UnixNano()) / 1e9
	fams := []*dto.MetricFamily{
		gauge(metricRunTimestamp, "Unix time the last klog verify run started.", metric(start)),
		gauge(metricRunDuration, "How long the last klog verify run took.", metric(duration.Seconds())),
		gauge(metricRunBytesRead, "Bytes the last klog verify run read from disk or page cache.", metric(float64(m.bytesRead))),
	}
	fams = append(fams, tallies(sorted(m.dirs), start, []string{
		metricDirTimestamp, metricDirBytes, metricDirBatches, metricDirFindings, metricDirProblems, metricDirIOErrors, ""}, "log directory")...)
	fams = append(fams, tallies(sorted(m.parts), start, []string{
		metricPartTimestamp, metricPartBytes, metricPartBatches, metricPartFindings, metricPartProblems, metricPartIOErrors, metricPartSkippedFiles}, "partition")...)
	for _, mf := range fams {
		if len(mf.Metric) == 0 {
			continue
		}
		if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
			return err
		}
	}
	return nil
}

func sorted(m map[string]*tally) []*tally {
	ts := make([]*tally, 0, len(m))
	for _, t := range m {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool {
		a, b := ts[i], ts[j]
		if a.logDir != b.logDir {
			return a.logDir < b.logDir
		}
		if a.topic != b.topic {
			return a.topic < b.topic
		}
		return len(a.part) < len(b.part) || len(a.part) == len(b.part) && a.part < b.part
	})
	return ts
}

// tallies renders one family per name (timestamp, bytes, batches,
// findings, problems by kind, I/O errors, unchanged files; "" omits one).
func tallies(ts []*tally, start float64, names []string, what string) []*dto.MetricFamily {
	fams := make([]*dto.MetricFamily, 0, len(names))
	helps := []string{
		"Unix time klog verify last checked this " + what + ".",
		"Bytes klog verify read and checked in this " + what + " in its last run.",
		"Log batches klog verify checked in this " + what + " in its last run.",
		"Findings (corruption or inconsistency) in this " + what + " in the last run.",
		"Findings in this " + what + " in the last run, by problem kind.",
		"Files of this " + what + " the last run could not read.",
		"Files of this " + what + " the last run did not read: unchanged since a clean run (--state).",
	}
	for i, name := range names {
		if name == "" {
			continue
		}
		mf := &dto.MetricFamily{Name: proto.String(name), Help: proto.String(helps[i]), Type: dto.MetricType_GAUGE.Enum()}
		for _, t := range ts {
			labels := []*dto.LabelPair{label("log_dir", t.logDir)}
			if t.topic != "" {
				labels = append(labels, label("topic", t.topic), label("partition", t.part))
			}
			var v float64
			switch i {
			case 0:
				v = start
			case 1:
				v = float64(t.bytes)
			case 2:
				v = float64(t.batches)
			case 3:
				v = float64(t.findings)
			case 4:
				kinds := make([]string, 0, len(t.problems))
				for k := range t.problems {
					kinds = append(kinds, k)
				}
				sort.Strings(kinds)
				for _, k := range kinds {
					m := metric(float64(t.problems[k]))
					m.Label = append(append([]*dto.LabelPair(nil), labels...), label("kind", k))
					mf.Metric = append(mf.Metric, m)
				}
				continue
			case 5:
				v = float64(t.ioErrors)
			case 6:
				v = float64(t.unchanged)
			}
			m := metric(v)
			m.Label = labels
			mf.Metric = append(mf.Metric, m)
		}
		fams = append(fams, mf)
	}
	return fams
}

func gauge(name, help string, ms ...*dto.Metric) *dto.MetricFamily {
	return &dto.MetricFamily{Name: proto.String(name), Help: proto.String(help), Type: dto.MetricType_GAUGE.Enum(), Metric: ms}
}

func metric(v float64) *dto.Metric { return &dto.Metric{Gauge: &dto.Gauge{Value: proto.Float64(v)}} }

func label(name, value string) *dto.LabelPair {
	return &dto.LabelPair{Name: proto.String(name), Value: proto.String(value)}
}

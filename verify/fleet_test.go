package verify

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/klogtest"
)

// appendBatches appends n batches of 16 records to the segment at p, from
// offset off, and returns the next offset.
func appendBatches(tb testing.TB, p string, off int64, n int) int64 {
	tb.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var c format.Compressor
	recs := make([]format.Record, 16)
	var buf []byte
	for range n {
		for i := range recs {
			recs[i] = format.Record{Offset: off + int64(i), Timestamp: 1700000000000 + off, Key: []byte("key"), Value: []byte("appended value")}
		}
		h := &format.Batch{Magic: 2, BaseOffset: off, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		format.PrepareBatch(h, recs)
		buf, err = c.AppendBatch(buf[:0], h, recs)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := f.Write(buf); err != nil {
			tb.Fatal(err)
		}
		off += int64(len(recs))
	}
	return off
}

// lastOffset is the last offset of the clean segment at p.
func lastOffset(tb testing.TB, p string) int64 {
	tb.Helper()
	rep, err := collect(context.Background(), []string{p}, Options{Jobs: 1})
	if err != nil || !rep.Files[0].OK {
		tb.Fatal(err, rep.Files[0].Problems)
	}
	return rep.Files[0].LastOffset
}

// TestRateCap: reads across all jobs stay under --rate (a run is never
// faster than its bytes over the rate, less the bucket's first burst), and
// not far under it: the limiter is asked for what is read, up to a read
// window per file more (a loaded machine makes a run slower, never faster,
// so only the floor is a matter of time).
func TestRateCap(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		rate  int64
		jobs  int
		files int
	}{
		{"jobs=2,files=2", 12 << 20, 2, 2},
		{"jobs=1,files=1", 6 << 20, 1, 1},
		{"jobs=4,files=3", 10 << 20, 4, 3}, // prefetching, one file per job
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var paths []string
			var total int64
			for i := range tc.files {
				p := klogtest.WriteSegment(t, dir, int64(i)*1_000_000, 3<<20)
				paths = append(paths, p)
				st, _ := os.Stat(p)
				total += st.Size()
			}
			opts := Options{Jobs: tc.jobs, Rate: tc.rate, KeepCache: true}
			rd := newReads(context.Background(), opts)
			start := time.Now()
			var read int64
			pc, err := runPiece(context.Background(), paths, opts, rd, nil, func(f *FileReport) bool {
				read += f.BytesRead
				return true
			})
			elapsed := time.Since(start)
			if err != nil || (&runReport{Files: pc.files}).Findings() != 0 {
				t.Fatal(err)
			}
			if read < total {
				t.Fatalf("read %d bytes, the files hold %d", read, total)
			}
			burst := max(tc.rate/20, minBurst)
			floor := time.Duration(float64(read-burst) / float64(tc.rate) * float64(time.Second))
			t.Logf("%d bytes at --rate %d: %v (at least %v), %d bytes charged", read, tc.rate, elapsed, floor, rd.charged.Load())
			if elapsed < floor*95/100 {
				t.Errorf("read %d bytes at --rate %d in %v, faster than the rate allows (%v)", read, tc.rate, elapsed, floor)
			}
			if c := rd.charged.Load(); c < read || c > read+int64(tc.files)*2*logReadAhead {
				t.Errorf("the limiter was asked for %d bytes for %d read: the rate would be far under --rate", c, read)
			}
		})
	}
}

// TestRateCancel: a run waiting on the rate limit ends when its context
// is cancelled.
func TestRateCancel(t *testing.T) {
	t.Parallel()
	p := klogtest.WriteSegment(t, t.TempDir(), 0, 2<<20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := collect(ctx, []string{p}, Options{Jobs: 1, Rate: 256 << 10})
	if err == nil {
		t.Fatal("no error from a cancelled run")
	}
	if d := time.Since(start); d > time.Minute { // a hang, not a slow machine
		t.Errorf("cancelled run took %v", d)
	}
}

// writeDir makes a log dir with partitions t-0..t-(parts-1), each with
// segs segments of about size bytes, and returns it.
func writeLogDir(tb testing.TB, parts, segs int, size int64) string {
	tb.Helper()
	root := tb.TempDir()
	for p := range parts {
		dir := filepath.Join(root, "t-"+itoa(int64(p)))
		if err := os.Mkdir(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		base := int64(0)
		for range segs {
			seg := klogtest.WriteSegment(tb, dir, base, size)
			base = writeIndexes(tb, seg, base) + 1
		}
	}
	return root
}

// writeIndexes writes the .index and .timeindex of the segment at p (base
// offset base) as a broker would, an entry every 4 KiB of log, and returns
// the segment's last offset.
func writeIndexes(tb testing.TB, p string, base int64) int64 {
	tb.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	var idx, tidx []byte
	sc := format.NewScanner(bytes.NewReader(data), int64(len(data)), format.ScanOptions{})
	last, since := int64(-1), int64(0)
	maxTS := int64(-1)
	for {
		b, err := sc.Next()
		if err != nil {
			break
		}
		last = b.LastOffset()
		if since == 0 || since >= 4096 {
			idx = binary.BigEndian.AppendUint32(idx, uint32(last-base))
			idx = binary.BigEndian.AppendUint32(idx, uint32(b.Pos))
			since = 0
		}
		since += b.Size()
		if b.MaxTimestamp > maxTS {
			maxTS = b.MaxTimestamp
			tidx = binary.BigEndian.AppendUint64(tidx, uint64(maxTS))
			tidx = binary.BigEndian.AppendUint32(tidx, uint32(last-base))
		}
	}
	stem := strings.TrimSuffix(p, ".log")
	if err := os.WriteFile(stem+".index", idx, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(stem+".timeindex", tidx, 0o644); err != nil {
		tb.Fatal(err)
	}
	return last
}

func mustRun(tb testing.TB, paths []string, opts Options) *runReport {
	tb.Helper()
	rep, err := collect(context.Background(), paths, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}

// summary is what a report says about each file, without how this run got
// there: an incremental run must say the same as a full one.
func summary(rep *runReport) string {
	var b strings.Builder
	for i := range rep.Files {
		f := &rep.Files[i]
		b.WriteString(f.Path + " " + f.Kind + " " + itoa(f.Batches) + " " + itoa(f.Records) + " " + itoa(f.Bytes) + " " +
			itoa(f.FirstOffset) + " " + itoa(f.LastOffset) + " " + itoa(f.ValidBytes) + " " + itoa(int64(f.Findings())) + "\n")
	}
	return b.String()
}

// TestStateIncremental runs verify with --state over a log dir as a cron
// job would: unchanged, appended to, a segment replaced, corrupted, --full.
func TestStateIncremental(t *testing.T) {
	t.Parallel()
	root := writeLogDir(t, 2, 3, 2<<20)
	statePath := filepath.Join(t.TempDir(), "verify.state")
	var total int64
	filepath.Walk(root, func(_ string, fi os.FileInfo, _ error) error {
		if fi.Mode().IsRegular() {
			total += fi.Size()
		}
		return nil
	})
	runState := func(full bool) *runReport {
		t.Helper()
		st, err := LoadState(statePath)
		if err != nil {
			t.Fatal(err)
		}
		rep := mustRun(t, []string{root}, Options{Jobs: 2, State: st, Full: full})
		if err := st.Save(statePath); err != nil {
			t.Fatal(err)
		}
		return rep
	}

	first := runState(false)
	if first.BytesRead < total || first.Findings() != 0 {
		t.Fatalf("first run read %d of %d bytes, %d findings", first.BytesRead, total, first.Findings())
	}

	// Unchanged: nothing is read.
	second := runState(false)
	if second.BytesRead >= 1<<20 {
		t.Errorf("second run over an unchanged dir read %d bytes, want < 1 MiB", second.BytesRead)
	}
	if second.BytesRead != 0 {
		t.Errorf("second run read %d bytes, want 0", second.BytesRead)
	}
	for i := range second.Files {
		if !second.Files[i].Skipped {
			t.Errorf("%s: not skipped", second.Files[i].Path)
		}
	}
	if got, want := summary(second), summary(first); got != want {
		t.Errorf("unchanged run says\n%s\nfull run said\n%s", got, want)
	}

	// Appended to: the last batch is re-read, then only the new bytes.
	active := lastLog(t, filepath.Join(root, "t-1"))
	before, _ := os.Stat(active)
	appendBatches(t, active, lastOffset(t, active)+1, 20)
	after, _ := os.Stat(active)
	third := runState(false)
	appended := after.Size() - before.Size()
	t.Logf("appended %d bytes to a %d-byte segment: the run read %d bytes", appended, before.Size(), third.BytesRead)
	if third.BytesRead < appended || third.BytesRead > appended+2*format.DefaultReadAhead {
		t.Errorf("after appending %d bytes the run read %d", appended, third.BytesRead)
	}
	for i := range third.Files {
		f := &third.Files[i]
		switch {
		case f.Path == active && (f.Skipped || f.VerifiedFrom != before.Size() || f.scanned != 20):
			t.Errorf("%s: skipped %v, verified from %d (want %d), %d batches checked (want 20)", f.Path, f.Skipped, f.VerifiedFrom, before.Size(), f.scanned)
		case strings.HasPrefix(f.Path, strings.TrimSuffix(active, ".log")):
			// The active segment's indexes are checked again against
			// the log that grew.
			if f.Skipped {
				t.Errorf("%s: skipped, its log grew", f.Path)
			}
		case !f.Skipped:
			t.Errorf("%s: checked again, unchanged", f.Path)
		}
	}
	if got, want := summary(third), summary(mustRun(t, []string{root}, Options{Jobs: 2})); got != want {
		t.Errorf("incremental run says\n%s\nfull run says\n%s", got, want)
	}

	// A segment replaced by a copy (a new inode, same bytes): checked in
	// full. A segment whose last batch changed: checked in full, and the
	// damage is found and found again in the next run.
	replaced := filepath.Join(root, "t-0", klogtest.SegmentName(0)+".log")
	data, _ := os.ReadFile(replaced)
	os.Remove(replaced)
	os.WriteFile(replaced, data, 0o644)
	damaged := lastLog(t, filepath.Join(root, "t-0"))
	dd, _ := os.ReadFile(damaged)
	dd[len(dd)-10] ^= 0xff
	os.WriteFile(damaged, dd, 0o644)
	appendBatches(t, damaged, lastOffset0(t, dd)+1, 1)
	for run := 0; run < 2; run++ {
		rep := runState(false)
		for i := range rep.Files {
			f := &rep.Files[i]
			switch f.Path {
			case replaced:
				// Run 0 checks the new inode in full; it is then clean,
				// so run 1 skips it.
				if run == 0 && (f.Skipped || f.VerifiedFrom != 0 || f.scanned != f.Batches) || run == 1 && !f.Skipped {
					t.Errorf("run %d: replaced %s: skipped %v, from %d, %d of %d batches", run, f.Path, f.Skipped, f.VerifiedFrom, f.scanned, f.Batches)
				}
			case damaged:
				if f.Skipped || f.VerifiedFrom != 0 || f.OK {
					t.Errorf("run %d: damaged %s: skipped %v, from %d, ok %v", run, f.Path, f.Skipped, f.VerifiedFrom, f.OK)
				}
			}
		}
		if rep.Findings() == 0 {
			t.Errorf("run %d: the damage was not reported", run)
		}
	}

	// Same size, another mtime; and a log cut back to an earlier batch:
	// both checked in full.
	touched := filepath.Join(root, "t-1", klogtest.SegmentName(0)+".log")
	later := time.Now().Add(time.Hour)
	os.Chtimes(touched, later, later)
	cut := lastLog(t, filepath.Join(root, "t-1"))
	cd, _ := os.ReadFile(cut)
	bounds := klogtest.BatchBounds(t, cd)
	os.Truncate(cut, bounds[len(bounds)/2][0])
	for _, f := range runState(false).Files {
		if (f.Path == touched || f.Path == cut) && (f.Skipped || f.VerifiedFrom != 0 || f.scanned != f.Batches || !f.OK) {
			t.Errorf("%s: skipped %v, from %d, %d of %d batches, ok %v", f.Path, f.Skipped, f.VerifiedFrom, f.scanned, f.Batches, f.OK)
		}
	}

	// --full reads everything again.
	total = 0
	filepath.Walk(root, func(_ string, fi os.FileInfo, _ error) error {
		if fi.Mode().IsRegular() {
			total += fi.Size()
		}
		return nil
	})
	full := runState(true)
	if full.BytesRead < total {
		t.Errorf("--full read %d bytes, the dir holds more than %d", full.BytesRead, total)
	}
	for i := range full.Files {
		if full.Files[i].Skipped || full.Files[i].VerifiedFrom != 0 {
			t.Errorf("--full: %s skipped or resumed", full.Files[i].Path)
		}
	}
}

func lastLog(tb testing.TB, dir string) string {
	tb.Helper()
	ms, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(ms) == 0 {
		tb.Fatal("no segment in " + dir)
	}
	return ms[len(ms)-1]
}

// lastOffset0 is the last offset of the last complete batch in data.
func lastOffset0(tb testing.TB, data []byte) int64 {
	tb.Helper()
	sc := format.NewScanner(bytes.NewReader(data), int64(len(data)), format.ScanOptions{})
	last := int64(-1)
	for {
		b, err := sc.Next()
		if err != nil {
			break
		}
		last = b.LastOffset()
	}
	return last
}

// TestStateFile: the state survives Save and LoadState, Save leaves no
// temporary file, and a file that is not a state is refused.
func TestStateFile(t *testing.T) {
	t.Parallel()
	root := writeLogDir(t, 1, 2, 64<<10)
	dir := t.TempDir()
	p := filepath.Join(dir, "state")
	st, err := LoadState(p)
	if err != nil || st.Len() != 0 {
		t.Fatalf("missing state file: %v, %d entries", err, st.Len())
	}
	rep := mustRun(t, []string{root}, Options{Jobs: 1, State: st})
	if err := st.Save(p); err != nil {
		t.Fatal(err)
	}
	again, err := LoadState(p)
	if err != nil {
		t.Fatal(err)
	}
	if again.Len() != len(rep.Files) {
		t.Errorf("state holds %d files, the run checked %d", again.Len(), len(rep.Files))
	}
	for d, m := range st.dirs {
		for n, e := range m {
			if g, ok := again.dirs[d][n]; !ok || *g != *e {
				t.Errorf("%s/%s: saved %+v, loaded %+v", d, n, e, g)
			}
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("Save left %d files in its directory, want 1", len(ents))
	}
	for _, bad := range []string{"hello\n", `{"type":"klog-verify-state","version":99}` + "\n", `{"type":"klog-verify-state","version":1}` + "\n{\"type\":\"file\",\"path\":\"rel\"}\n"} {
		os.WriteFile(p, []byte(bad), 0o644)
		if _, err := LoadState(p); err == nil {
			t.Errorf("LoadState(%q): no error", bad)
		}
	}
}

// TestMetrics: the --prometheus file parses with expfmt, and says per log
// dir and partition what the run did.
func TestMetrics(t *testing.T) {
	t.Parallel()
	root := writeLogDir(t, 2, 2, 64<<10)
	bad := lastLog(t, filepath.Join(root, "t-1"))
	data, _ := os.ReadFile(bad)
	data[100] ^= 1
	os.WriteFile(bad, data, 0o644)
	st := NewState()
	rep := mustRun(t, []string{root}, Options{Jobs: 2, State: st})
	prom := filepath.Join(t.TempDir(), "klog.prom")
	if err := writeMetricsFile(prom, rep); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(prom)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string, labels ...string) (float64, bool) {
		mf := fams[name]
		if mf == nil {
			return 0, false
		}
	next:
		for _, m := range mf.Metric {
			have := map[string]string{}
			for _, l := range m.Label {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue next
				}
			}
			return m.GetGauge().GetValue(), true
		}
		return 0, false
	}
	abs, _ := filepath.Abs(root)
	var partBytes, partBatches [2]float64
	for i := range rep.Files {
		fr := &rep.Files[i]
		k := 0
		if strings.Contains(fr.Path, "/t-1/") {
			k = 1
		}
		partBytes[k] += float64(fr.Bytes)
		partBatches[k] += float64(fr.Batches)
	}
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{metricPartBytes, []string{"log_dir", abs, "topic", "t", "partition", "0"}, partBytes[0]},
		{metricPartBytes, []string{"log_dir", abs, "topic", "t", "partition", "1"}, partBytes[1]},
		{metricDirBytes, []string{"log_dir", abs}, partBytes[0] + partBytes[1]},
		{metricPartFindings, []string{"partition", "0"}, 0},
		{metricPartFindings, []string{"partition", "1"}, 1},
		{metricPartProblems, []string{"partition", "1", "kind", string(KindCRCMismatch)}, 1},
		{metricDirProblems, []string{"log_dir", abs, "kind", string(KindCRCMismatch)}, 1},
		{metricPartBatches, []string{"partition", "0"}, partBatches[0]},
		{metricPartTimestamp, []string{"partition", "1"}, float64(rep.Start.UnixNano()) / 1e9},
		{metricRunBytesRead, nil, float64(rep.BytesRead)},
		{metricRunDuration, nil, rep.Duration.Seconds()},
		{metricPartSkippedFiles, []string{"partition", "0"}, 0},
	}
	for _, c := range checks {
		got, ok := get(c.name, c.labels...)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if _, ok := get(metricPartProblems, "partition", "0"); ok {
		t.Errorf("%s reported for a clean partition", metricPartProblems)
	}
	if fams[metricRunDuration].GetType().String() != "GAUGE" {
		t.Errorf("%s is a %v", metricRunDuration, fams[metricRunDuration].GetType())
	}

	// An incremental run: bytes verified count only what was read.
	rep2 := mustRun(t, []string{root}, Options{Jobs: 2, State: st})
	var buf bytes.Buffer
	if err := writeMetrics(&buf, rep2); err != nil {
		t.Fatal(err)
	}
	fams, err = p.TextToMetricFamilies(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := get(metricPartBytes, "partition", "0"); got != 0 {
		t.Errorf("unchanged partition: %v bytes verified", got)
	}
	if got, _ := get(metricPartSkippedFiles, "partition", "0"); got != 6 {
		t.Errorf("unchanged partition: %v files unchanged, want 6 (2 segments)", got)
	}
	if got, _ := get(metricPartProblems, "partition", "1", "kind", string(KindCRCMismatch)); got != 1 {
		t.Errorf("the damaged partition's crc-mismatch is %v in the second run", got)
	}
	ents, _ := os.ReadDir(filepath.Dir(prom))
	if len(ents) != 1 {
		t.Errorf("WriteMetrics left %d files, want 1", len(ents))
	}
}

// sortedSummary is summary in path order (RunEach puts a log dir's
// checkpoints after its partitions), with each file's problem kinds.
func sortedSummary(files []FileReport) string {
	lines := make([]string, 0, len(files))
	for i := range files {
		f := &files[i]
		lines = append(lines, summary(&runReport{Files: files[i : i+1]})+strings.Join(kinds(f), ",")+" ok="+strconvBool(f.OK))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func strconvBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestPiecesSameAsOneRun: verifying in pieces finds what one piece finds,
// on the fixtures and on a log dir of many partitions with a checkpoint past
// a log's end, a few partitions at a time.
func TestPiecesSameAsOneRun(t *testing.T) {
	root := writeLogDir(t, 7, 1, 32<<10)
	os.WriteFile(filepath.Join(root, "recovery-point-offset-checkpoint"), []byte("0\n2\nt 1 5\nt 4 999999\n"), 0o644)
	dd, _ := os.ReadFile(lastLog(t, filepath.Join(root, "t-2")))
	dd[70] ^= 1
	os.WriteFile(lastLog(t, filepath.Join(root, "t-2")), dd, 0o644)

	for _, paths := range [][]string{{root}, {segments(t, "kafka-written")}, {filepath.Join(root, "t-3"), lastLog(t, filepath.Join(root, "t-1"))}} {
		one, err := runPiece(context.Background(), paths, Options{Jobs: 2}, newReads(context.Background(), Options{}), nil, func(*FileReport) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		want := &runReport{Files: one.files}
		old := chunkPartitions
		chunkPartitions = 3
		got := mustRun(t, paths, Options{Jobs: 2})
		chunkPartitions = old
		if g, w := sortedSummary(got.Files), sortedSummary(want.Files); g != w {
			t.Errorf("%v: pieces say\n%s\none run says\n%s", paths, g, w)
		}
		if got.Findings() != want.Findings() || got.IOErrors() != want.IOErrors() {
			t.Errorf("%v: %d findings, %d I/O errors; one run: %d, %d", paths, got.Findings(), got.IOErrors(), want.Findings(), want.IOErrors())
		}
		if paths[0] == root && (!strings.Contains(sortedSummary(got.Files), string(KindCheckpointRange)) || !strings.Contains(sortedSummary(got.Files), string(KindCRCMismatch))) {
			t.Errorf("the damage was not found:\n%s", sortedSummary(got.Files))
		}
	}
}

// FuzzLoadState: any state file either loads or is refused, never a panic;
// one that loads survives Save and LoadState unchanged.
func FuzzLoadState(f *testing.F) {
	f.Add([]byte(`{"type":"klog-verify-state","version":1}` + "\n" +
		`{"type":"file","path":"/var/lib/kafka/t-0/00000000000000000000.log","kind":"log","dev":1,"inode":2,"size":482,"mtimeNs":3,"batches":2,"records":5,"firstOffset":0,"lastOffset":4,"validBytes":482,"lastBatchPosition":376,"lastBatchCrc":4084513389}` + "\n"))
	f.Add([]byte(`{"type":"klog-verify-state","version":1}` + "\n" + `{"type":"file","path":"/"}` + "\n"))
	f.Add([]byte(`{"type":"klog-verify-state","version":2}`))
	f.Add([]byte("\n\n"))
	// The state a run over real partitions saves.
	st := NewState()
	mustRun(f, []string{segments(f, "kafka-written", "v2-none"), segments(f, "kafka-written", "unifiedlog-producer", "topic-0")},
		Options{Jobs: 1, State: st})
	if st.Len() == 0 {
		f.Fatal("a clean run saved no state")
	}
	seed := filepath.Join(f.TempDir(), "state")
	if err := st.Save(seed); err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "state")
		os.WriteFile(p, data, 0o644)
		st, err := LoadState(p)
		if err != nil {
			return
		}
		if err := st.Save(p); err != nil {
			t.Fatal(err)
		}
		again, err := LoadState(p)
		if err != nil {
			t.Fatalf("a saved state does not load: %v", err)
		}
		if again.Len() != st.Len() {
			t.Fatalf("saved %d entries, loaded %d", st.Len(), again.Len())
		}
	})
}

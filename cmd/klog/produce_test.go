package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/verifytest"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/verify"
	kafkago "github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// prodRec is a record as the three readers report it; nil and empty byte
// slices differ (null and empty in Kafka).
type prodRec struct {
	Offset    int64
	Timestamp int64
	Key       []byte
	Value     []byte
	Headers   []format.Header
}

func (r prodRec) String() string {
	show := func(b []byte) string {
		if b == nil {
			return "null"
		}
		if len(b) > 24 {
			return fmt.Sprintf("%q…(%d bytes)", b[:24], len(b))
		}
		return fmt.Sprintf("%q", b)
	}
	s := fmt.Sprintf("offset=%d ts=%d key=%s value=%s headers=[", r.Offset, r.Timestamp, show(r.Key), show(r.Value))
	for _, h := range r.Headers {
		s += show(h.Key) + ":" + show(h.Value) + " "
	}
	return s + "]"
}

func prodSame(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func prodClone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func prodCompare(t *testing.T, reader string, got, want []prodRec, checkTS bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d records, want %d", reader, len(got), len(want))
	}
	bad := 0
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		same := g.Offset == w.Offset && (!checkTS || g.Timestamp == w.Timestamp) && prodSame(g.Key, w.Key) &&
			prodSame(g.Value, w.Value) && len(g.Headers) == len(w.Headers)
		for j := 0; same && j < len(g.Headers); j++ {
			same = bytes.Equal(g.Headers[j].Key, w.Headers[j].Key) && prodSame(g.Headers[j].Value, w.Headers[j].Value)
		}
		if !same {
			t.Errorf("%s: record %d:\n got  %v\n want %v", reader, i, g, w)
			if bad++; bad > 5 {
				return
			}
		}
	}
}

func prodSegments(t testing.TB, dir string) []partition.Segment {
	t.Helper()
	d, err := partition.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var segs []partition.Segment
	for _, s := range d.Segments {
		if s.Log != "" {
			segs = append(segs, s)
		}
	}
	return segs
}

// prodReadKlog reads every batch of dir with klog's Scanner and
// RecordReader and fails unless every batch is valid, segments end on a
// batch boundary and offsets are contiguous. It returns the raw batches
// and the data records.
func prodReadKlog(t testing.TB, dir string) ([]*format.Batch, []prodRec) {
	t.Helper()
	var (
		batches []*format.Batch
		recs    []prodRec
		rr      format.RecordReader
		r       format.Record
		next    = int64(-1)
	)
	for _, s := range prodSegments(t, dir) {
		data, err := os.ReadFile(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		sc := format.NewScanner(bytes.NewReader(data), int64(len(data)), format.ScanOptions{})
		for {
			b, err := sc.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", s.Log, err)
			}
			if !b.Valid() {
				t.Fatalf("%s: batch at position %d has an invalid CRC", s.Log, b.Pos)
			}
			if next >= 0 && b.BaseOffset != next {
				t.Fatalf("%s: batch at position %d starts at offset %d, want %d", s.Log, b.Pos, b.BaseOffset, next)
			}
			next = b.NextOffset()
			batches = append(batches, b.Clone())
			if err := rr.Reset(b); err != nil {
				t.Fatal(err)
			}
			for {
				err := rr.Next(&r)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				var hs []format.Header
				for _, h := range r.Headers {
					hs = append(hs, format.Header{Key: prodClone(h.Key), Value: prodClone(h.Value)})
				}
				if !b.IsControl() {
					recs = append(recs, prodRec{r.Offset, r.Timestamp, prodClone(r.Key), prodClone(r.Value), hs})
				}
			}
		}
		if tail := sc.Tail(); tail.Bytes != 0 {
			t.Fatalf("%s: %d bytes after the last batch", s.Log, tail.Bytes)
		}
	}
	return batches, recs
}

// prodReadFranz decodes each segment as a fetch response's RecordBatches
// with franz-go (which checks the CRCs).
func prodReadFranz(t testing.TB, dir string, leo int64) []prodRec {
	t.Helper()
	var out []prodRec
	for _, s := range prodSegments(t, dir) {
		data, err := os.ReadFile(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		p := kmsg.NewFetchResponseTopicPartition()
		p.RecordBatches, p.HighWatermark, p.LastStableOffset = data, leo, leo
		fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Offset: s.BaseOffset, Topic: "t"}, &p, kgo.DefaultDecompressor(), nil)
		if fp.Err != nil {
			t.Fatalf("franz-go: %s: %v", s.Log, fp.Err)
		}
		for _, r := range fp.Records {
			var hs []format.Header
			for _, h := range r.Headers {
				hs = append(hs, format.Header{Key: []byte(h.Key), Value: prodClone(h.Value)})
			}
			out = append(out, prodRec{r.Offset, r.Timestamp.UnixMilli(), prodClone(r.Key), prodClone(r.Value), hs})
		}
	}
	return out
}

// prodReadKafkaGo decodes each batch with kafka-go's protocol.RecordSet,
// one at a time so no checksum error is dropped. kafka-go reports
// baseTimestamp + delta even for LogAppendTime batches.
func prodReadKafkaGo(t testing.TB, batches []*format.Batch) []prodRec {
	t.Helper()
	var out []prodRec
	for _, b := range batches {
		var framed bytes.Buffer
		binary.Write(&framed, binary.BigEndian, int32(len(b.Raw)))
		framed.Write(b.Raw)
		var rs kafkago.RecordSet
		if _, err := rs.ReadFrom(bufio.NewReader(&framed)); err != nil || rs.Records == nil {
			t.Fatalf("kafka-go: batch at offset %d: %v", b.BaseOffset, err)
		}
		if rs.Attributes.Control() {
			continue
		}
		for {
			r, err := rs.Records.ReadRecord()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("kafka-go: batch at offset %d: %v", b.BaseOffset, err)
			}
			k, _ := kafkago.ReadAll(r.Key)
			v, _ := kafkago.ReadAll(r.Value)
			if r.Key == nil {
				k = nil
			}
			if r.Value == nil {
				v = nil
			}
			var hs []format.Header
			for _, h := range r.Headers {
				hs = append(hs, format.Header{Key: []byte(h.Key), Value: prodClone(h.Value)})
			}
			out = append(out, prodRec{r.Offset, r.Time.UnixMilli(), k, v, hs})
		}
	}
	return out
}

// prodVerify runs verify on dir and returns the findings as text lines.
func prodVerify(t testing.TB, dir string) (*verifytest.Report, []string) {
	t.Helper()
	rep, err := verifytest.Run(context.Background(), []string{dir}, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range rep.Files {
		if f.Err != "" {
			out = append(out, f.Path+": "+f.Err)
		}
		for _, p := range f.Problems {
			if !p.Info {
				out = append(out, fmt.Sprintf("%s: %s at position %d: %s", filepath.Base(f.Path), p.Kind, p.Position, p.Message))
			}
		}
	}
	return rep, out
}

func prodVerifyClean(t testing.TB, dir string) {
	t.Helper()
	if _, probs := prodVerify(t, dir); len(probs) > 0 {
		t.Errorf("verify:\n%s", strings.Join(probs, "\n"))
	}
}

// prodSample returns records for the CLI: null, empty and binary keys and
// values, headers with null, empty and binary values, a value large enough
// for several snappy/lz4 blocks, timestamps out of order.
func prodSample(n int) []prodRec {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	recs := make([]prodRec, n)
	for i := range recs {
		r := &recs[i]
		r.Offset = int64(i)
		r.Timestamp = 1_700_000_000_000 + int64(i*5) - int64(i%3)*7
		switch i % 6 {
		case 0:
			r.Key, r.Value = nil, nil
		case 1:
			r.Key, r.Value = []byte{}, []byte{}
		case 2:
			r.Key, r.Value = all, all
		case 3:
			r.Key, r.Value = []byte("key"), bytes.Repeat([]byte("big value "), 10000)
		case 4:
			r.Key, r.Value = nil, []byte("text ✓")
		case 5:
			r.Key, r.Value = []byte{0}, nil
		}
		switch i % 4 {
		case 1:
			r.Headers = []format.Header{{Key: []byte("h"), Value: nil}}
		case 2:
			r.Headers = []format.Header{{Key: []byte(""), Value: []byte{}}, {Key: []byte("bin"), Value: all[:9]}, {Key: []byte("h"), Value: nil}}
		}
	}
	return recs
}

// prodJSONLines renders records as produce --input json lines, binary as
// base64, null as null, empty as "".
func prodJSONLines(t *testing.T, recs []prodRec) string {
	t.Helper()
	b64 := func(b []byte) any {
		if b == nil {
			return nil
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	var sb strings.Builder
	for i, r := range recs {
		m := map[string]any{"key": b64(r.Key), "keyEncoding": "base64", "value": b64(r.Value), "valueEncoding": "base64",
			"timestamp": r.Timestamp}
		if i%5 == 4 && r.Value != nil && !bytes.ContainsAny(r.Value, "\x00\xff") { // some as text
			m["value"], m["valueEncoding"] = string(r.Value), "utf8"
		}
		var hs []map[string]any
		for _, h := range r.Headers {
			hs = append(hs, map[string]any{"key": string(h.Key), "value": b64(h.Value), "valueEncoding": "base64"})
		}
		if hs != nil {
			m["headers"] = hs
		}
		line, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		sb.Write(line)
		sb.WriteByte('\n')
	}
	return sb.String()
}

type prodResponse struct {
	BaseOffset, LastOffset, LogAppendTime, LogStartOffset int64
}

// prodRun runs klog in-process with stdin.
func prodRun(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := run(context.Background(), append([]string{"klog"}, args...), strings.NewReader(stdin), &out, &errw)
	return code, out.String(), errw.String()
}

// TestProduceCLIRoundTrip feeds the same records as --input json to
// `klog produce` for every codec and timestamp type, then reads them back
// with klog, franz-go and kafka-go: same records, valid CRCs, contiguous
// offsets from 0, one response line per batch, segments rolled by
// --segment-bytes and a clean verify.
//
// The in-process tests do not run in parallel: urfave/cli mutates the
// package-level commands and flags while it runs.
func TestProduceCLIRoundTrip(t *testing.T) {
	recs := prodSample(36)
	input := prodJSONLines(t, recs)
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		for _, tt := range []string{"create", "log-append"} {
			t.Run("codec="+codec+"/ts="+tt, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "topic-0")
				before := time.Now().UnixMilli()
				code, out, errs := prodRun(t, input, "produce", "--log", dir, "--input", "json", "--compression", codec,
					"--timestamp-type", tt, "--batch-records", "5", "--segment-bytes", "20000", "--index-interval-bytes", "300", "--json")
				after := time.Now().UnixMilli()
				if code != ExitOK {
					t.Fatalf("exit %d: %s", code, errs)
				}
				var resps []prodResponse
				dec := json.NewDecoder(strings.NewReader(out))
				for dec.More() {
					var r prodResponse
					if err := dec.Decode(&r); err != nil {
						t.Fatalf("response %q: %v", out, err)
					}
					resps = append(resps, r)
				}
				// One line per batch; a batch closes at 5 records or
				// --batch-bytes (16 KiB) of keys and values.
				next := int64(0)
				for i, r := range resps {
					if r.BaseOffset != next || r.LastOffset < r.BaseOffset || r.LastOffset-r.BaseOffset >= 5 || r.LogStartOffset != 0 {
						t.Errorf("response %d: %+v, want a batch of 1 to 5 records from offset %d", i, r, next)
					}
					next = r.LastOffset + 1
					if (tt == "create") != (r.LogAppendTime == -1) {
						t.Errorf("response %d: logAppendTime %d with --timestamp-type %s", i, r.LogAppendTime, tt)
					}
				}
				if next != int64(len(recs)) {
					t.Errorf("responses end at offset %d, want %d", next, len(recs))
				}
				batches, got := prodReadKlog(t, dir)
				want := recs
				if tt == "log-append" {
					// The broker's clock: each batch's max timestamp.
					want = append([]prodRec(nil), recs...)
					for _, b := range batches {
						if b.TimestampType() != format.LogAppendTime || b.MaxTimestamp < before || b.MaxTimestamp > after {
							t.Errorf("batch at %d: %v %d, want LogAppendTime within [%d, %d]", b.BaseOffset, b.TimestampType(), b.MaxTimestamp, before, after)
						}
						for o := b.BaseOffset; o <= b.LastOffset(); o++ {
							want[o].Timestamp = b.MaxTimestamp
						}
					}
				}
				if len(batches) != len(resps) {
					t.Errorf("%d batches, %d response lines", len(batches), len(resps))
				}
				for _, b := range batches {
					if b.Compression().String() != codec {
						t.Errorf("batch at %d: codec %v, want %s", b.BaseOffset, b.Compression(), codec)
					}
				}
				prodCompare(t, "klog", got, want, true)
				prodCompare(t, "franz-go", prodReadFranz(t, dir, int64(len(recs))), want, true)
				prodCompare(t, "kafka-go", prodReadKafkaGo(t, batches), recs, true)
				segs := prodSegments(t, dir)
				if codec == "none" && len(segs) < 2 {
					t.Error("--segment-bytes did not roll a segment")
				}
				// Each roll takes a producer snapshot named like the new segment.
				for _, s := range segs[1:] {
					if _, err := os.Stat(filepath.Join(dir, partition.FileName(s.BaseOffset, partition.SnapshotSuffix))); err != nil {
						t.Errorf("no snapshot for the roll to %s: %v", filepath.Base(s.Log), err)
					}
				}
				prodVerifyClean(t, dir)
			})
		}
	}
}

// TestProduceCLIAppendsToKafkaSegment: lines input appended to a copy of a
// broker-written partition continue at its log end offset (59, from its
// last valid batch), leave its bytes alone and verify clean.
func TestProduceCLIAppendsToKafkaSegment(t *testing.T) {
	src := segments(t, "kafka-written", "v2-none")
	dir := filepath.Join(t.TempDir(), "topic-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{partition.LogSuffix, partition.IndexSuffix, partition.TimeIndexSuffix} {
		data, err := os.ReadFile(filepath.Join(src, partition.FileName(0, suffix)))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, partition.FileName(0, suffix)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, old := prodReadKlog(t, dir)
	orig, _ := os.ReadFile(filepath.Join(dir, partition.FileName(0, partition.LogSuffix)))
	code, out, errs := prodRun(t, "k1=v1\nno separator\nk3=\n=v4\n\n", "produce", "--log", dir, "--key-separator", "=", "--compression", "gzip")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.HasPrefix(out, "baseOffset: 59 lastOffset: 63 ") {
		t.Errorf("response %q, want baseOffset 59 lastOffset 63", out)
	}
	now, _ := os.ReadFile(filepath.Join(dir, partition.FileName(0, partition.LogSuffix)))
	if !bytes.HasPrefix(now, orig) {
		t.Error("the broker's bytes changed")
	}
	_, got := prodReadKlog(t, dir)
	if len(got) != len(old)+5 {
		t.Fatalf("%d records, want %d", len(got), len(old)+5)
	}
	kv := [][2][]byte{{[]byte("k1"), []byte("v1")}, {nil, []byte("no separator")}, {[]byte("k3"), {}}, {{}, []byte("v4")}, {nil, {}}}
	for i, w := range kv {
		r := got[len(old)+i]
		if r.Offset != int64(59+i) || !prodSame(r.Key, w[0]) || !prodSame(r.Value, w[1]) {
			t.Errorf("record %d: %v, want key %q value %q", 59+i, r, w[0], w[1])
		}
	}
	prodVerifyClean(t, dir)
}

// TestProduceProcesses runs the klog binary as separate processes: the
// directory lock between writers, and SIGKILL at random moments.
func TestProduceProcesses(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("needs flock and SIGKILL")
	}
	bin := klogBinary(t, "")
	t.Run("concurrent writers wait", func(t *testing.T) { t.Parallel(); testConcurrentWriters(t, bin) })
	t.Run("locked without wait", func(t *testing.T) { t.Parallel(); testLockedWithoutWait(t, bin) })
	t.Run("crash", func(t *testing.T) { t.Parallel(); testCrash(t, bin) })
}

// testConcurrentWriters: two writers, each running a series of `klog produce
// --wait` processes, append to one directory at the same time. Every record
// is there exactly once, each process's records are contiguous (the lock
// keeps writers apart for a whole run), every batch is valid, offsets are
// contiguous, and verify finds nothing.
func testConcurrentWriters(t *testing.T, bin string) {
	dir := filepath.Join(t.TempDir(), "topic-0")
	const writers, runs, lines = 2, 6, 400
	var wg sync.WaitGroup
	errs := make(chan error, writers*runs)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range runs {
				var in strings.Builder
				for i := range lines {
					fmt.Fprintf(&in, "w%d-r%d:%05d\n", w, r, i)
				}
				cmd := exec.Command(bin, "produce", "--log", dir, "--wait", "--batch-records", "7", "--key-separator", ":",
					"--segment-bytes", "16384", "--index-interval-bytes", "1000", "--acks", "0")
				cmd.Stdin = strings.NewReader(in.String())
				if out, err := cmd.CombinedOutput(); err != nil {
					errs <- fmt.Errorf("writer %d run %d: %v: %s", w, r, err, out)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	batches, recs := prodReadKlog(t, dir)
	if len(recs) != writers*runs*lines {
		t.Fatalf("%d records, want %d", len(recs), writers*runs*lines)
	}
	seen := map[string]bool{}
	for i := 0; i < len(recs); i += lines {
		// A run's records are contiguous and in order.
		run := string(recs[i].Key)
		for j := range lines {
			r := recs[i+j]
			if r.Offset != int64(i+j) {
				t.Fatalf("record %d has offset %d", i+j, r.Offset)
			}
			if string(r.Key) != run || string(r.Value) != fmt.Sprintf("%05d", j) {
				t.Fatalf("record at offset %d is %s:%s, want %s:%05d (runs interleaved)", r.Offset, r.Key, r.Value, run, j)
			}
		}
		if seen[run] {
			t.Fatalf("run %s appears twice", run)
		}
		seen[run] = true
	}
	if len(prodSegments(t, dir)) < 2 || len(batches) < writers*runs*lines/7 {
		t.Errorf("%d segments, %d batches", len(prodSegments(t, dir)), len(batches))
	}
	prodVerifyClean(t, dir)
}

// testLockedWithoutWait: while one `klog produce` holds the directory
// (it is reading stdin), a second without --wait fails at once with exit 2
// and a message that says the directory is locked; one with --wait appends
// after the first is done.
func testLockedWithoutWait(t *testing.T, bin string) {
	dir := filepath.Join(t.TempDir(), "topic-0")
	first := exec.Command(bin, "produce", "--log", dir, "--batch-records", "100", "--acks", "0")
	stdin, err := first.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	// klog reads stdin only after it holds the lock; once more than a
	// pipe buffer (64 KiB) has been written, it has read some, so it holds
	// the lock. It keeps it until its stdin closes.
	line := strings.Repeat("x", 99) + "\n"
	for range 2000 { // 200 KB
		if _, err := io.WriteString(stdin, line); err != nil {
			t.Fatal(err)
		}
	}

	second := exec.Command(bin, "produce", "--log", dir)
	second.Stdin = strings.NewReader("second\n")
	var serr bytes.Buffer
	second.Stderr = &serr
	err = second.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitTrouble {
		t.Errorf("second writer without --wait: %v, want exit %d", err, ExitTrouble)
	}
	if !strings.Contains(serr.String(), "locked") {
		t.Errorf("second writer's stderr %q does not say the directory is locked", serr.String())
	}

	third := exec.Command(bin, "produce", "--log", dir, "--wait", "--json")
	third.Stdin = strings.NewReader("third\n")
	var tout bytes.Buffer
	third.Stdout = &tout
	if err := third.Start(); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	if err := first.Wait(); err != nil {
		t.Fatalf("first writer: %v: %s", err, firstErr.String())
	}
	if err := third.Wait(); err != nil {
		t.Fatalf("third writer with --wait: %v", err)
	}
	var r prodResponse
	if err := json.Unmarshal(tout.Bytes(), &r); err != nil || r.BaseOffset != 2000 {
		t.Errorf("third writer's response %q: it should append at offset 2000, after the first", tout.String())
	}
	_, recs := prodReadKlog(t, dir)
	if len(recs) != 2001 || string(recs[2000].Value) != "third" {
		t.Errorf("%d records, want the first writer's 2000 then the third's", len(recs))
	}
	prodVerifyClean(t, dir)
}

// crashLine is record i of iteration it, as `klog produce` gets it on
// stdin: "it-i" as the key, a padded value.
func crashLine(it, i int) string {
	return fmt.Sprintf("%03d-%07d:%s\n", it, i, strings.Repeat("v", 40+i%50))
}

// testCrash starts `klog produce --fsync never` on a long stdin and SIGKILLs
// it at a random moment, many times over the same directory. After each
// kill: verify finds nothing but, at most, a cut batch at the end of the
// last segment; the records of the killed run are a prefix of its input.
// Sometimes the tail is torn by hand too (the start of the next batch, as
// a write cut by the kill or a crash before the page cache was written
// leaves it). Then a plain produce refuses (exit 1, naming
// --truncate-invalid) and one with --truncate-invalid cuts the tail and
// appends; the result verifies clean with contiguous offsets.
func testCrash(t *testing.T, bin string) {
	dir := filepath.Join(t.TempDir(), "topic-0")
	rng := rand.New(rand.NewPCG(2024, 11))
	iterations := 20
	if testing.Short() {
		iterations = 5
	}
	deadline := time.Now().Add(20 * time.Second)
	var want []string // keys of every record, in offset order
	killedMidRun, torn := 0, 0
	for it := 0; it < iterations && time.Now().Before(deadline); it++ {
		cmd := exec.Command(bin, "produce", "--log", dir, "--fsync", "never", "--key-separator", ":", "--batch-records", "40",
			"--segment-bytes", "262144", "--index-interval-bytes", "4096", "--acks", "0")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		const total = 30000 // ~2.5 MB: more than a run can write before most kills
		fed := make(chan struct{})
		go func() {
			defer close(fed)
			w := bufio.NewWriterSize(stdin, 64<<10)
			for i := range total {
				if _, err := w.WriteString(crashLine(it, i)); err != nil {
					return // the process is dead
				}
			}
			w.Flush()
			stdin.Close()
		}()
		time.Sleep(time.Duration(rng.IntN(60_000)) * time.Microsecond) // a random moment, not a sync
		cmd.Process.Signal(syscall.SIGKILL)
		err = cmd.Wait()
		stdin.Close()
		<-fed
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killedMidRun++
		} else if err != nil {
			t.Fatalf("iteration %d: klog produce failed before the kill: %v: %s", it, err, stderr.String())
		}

		if _, err := os.Stat(dir); err == nil && rng.IntN(2) == 0 {
			tearTail(t, dir, rng)
		}

		// verify: nothing but a cut batch at the very end.
		tornNow := false
		// Killed before the first segment was created (a loaded machine
		// starts the process late): nothing to verify yet.
		if _, err := os.Stat(dir); err == nil && len(prodSegments(t, dir)) > 0 {
			rep, _ := prodVerify(t, dir)
			segs := prodSegments(t, dir)
			lastLog := ""
			if len(segs) > 0 {
				lastLog = segs[len(segs)-1].Log
			}
			for _, f := range rep.Files {
				for _, p := range f.Problems {
					if p.Info {
						continue
					}
					if f.Path == lastLog && (p.Kind == verify.KindTruncated || p.Kind == verify.KindTrailingBytes) && p.Position == f.ValidBytes {
						tornNow = true
						continue
					}
					t.Fatalf("iteration %d: verify after the kill: %s: %s at position %d: %s", it, filepath.Base(f.Path), p.Kind, p.Position, p.Message)
				}
				if f.Err != "" {
					t.Fatalf("iteration %d: %s: %s", it, f.Path, f.Err)
				}
			}
		}

		recoverArgs := []string{"produce", "--log", dir, "--key-separator", ":", "--segment-bytes", "262144"}
		recoverIn := crashLine(it, total) + crashLine(it, total+1)
		if tornNow {
			torn++
			code, _, errs := prodRunBin(t, bin, recoverIn, recoverArgs...)
			if code != ExitFindings || !strings.Contains(errs, "--truncate-invalid") {
				t.Fatalf("iteration %d: plain produce on a torn tail: exit %d, stderr %q; want exit 1 naming --truncate-invalid", it, code, errs)
			}
			recoverArgs = append(recoverArgs, "--truncate-invalid")
		}
		code, _, errs := prodRunBin(t, bin, recoverIn, recoverArgs...)
		if code != ExitOK {
			t.Fatalf("iteration %d: %v: exit %d: %s", it, recoverArgs[3:], code, errs)
		}
		if tornNow && !strings.Contains(errs, "cut") {
			t.Errorf("iteration %d: --truncate-invalid did not say what it cut: %q", it, errs)
		}

		// The log: everything before, a prefix of this run's input, then
		// the two recovery records; offsets contiguous; verify clean.
		_, recs := prodReadKlog(t, dir)
		if len(recs) < len(want)+2 {
			t.Fatalf("iteration %d: %d records, fewer than the %d before plus 2", it, len(recs), len(want))
		}
		for i, r := range recs {
			if r.Offset != int64(i) {
				t.Fatalf("iteration %d: record %d has offset %d", it, i, r.Offset)
			}
		}
		for i, k := range want {
			if string(recs[i].Key) != k {
				t.Fatalf("iteration %d: record %d is %s, was %s before the kill", it, i, recs[i].Key, k)
			}
		}
		n := len(recs) - len(want) - 2
		for i := range n + 2 {
			j := i
			if i >= n {
				j = total + i - n
			}
			wantLine := crashLine(it, j)
			r := recs[len(want)+i]
			if got := string(r.Key) + ":" + string(r.Value) + "\n"; got != wantLine {
				t.Fatalf("iteration %d: record %d is %q, want %q (the killed run's records must be a prefix of its input)", it, r.Offset, got, wantLine)
			}
		}
		for _, r := range recs[len(want):] {
			want = append(want, string(r.Key))
		}
		prodVerifyClean(t, dir)
		if t.Failed() {
			return
		}
	}
	t.Logf("%d records; %d runs killed mid-run, %d torn tails refused and cut", len(want), killedMidRun, torn)
	if killedMidRun == 0 || torn == 0 {
		t.Errorf("the test exercised too little: %d kills mid-run, %d torn tails", killedMidRun, torn)
	}
}

// tearTail appends to the last segment the first bytes of a batch that
// would come next, as a write cut short leaves it.
func tearTail(t *testing.T, dir string, rng *rand.Rand) {
	segs := prodSegments(t, dir)
	if len(segs) == 0 {
		return
	}
	last := segs[len(segs)-1]
	data, err := os.ReadFile(last.Log)
	if err != nil {
		t.Fatal(err)
	}
	sc := format.NewScanner(bytes.NewReader(data), int64(len(data)), format.ScanOptions{})
	leo := last.BaseOffset
	for {
		b, err := sc.Next()
		if err != nil {
			break
		}
		leo = b.NextOffset()
	}
	if sc.Tail().Bytes > 0 {
		return // already torn
	}
	recs := []format.Record{{Offset: leo, Timestamp: 1, Value: []byte("torn")}, {Offset: leo + 1, Timestamp: 1, Value: []byte("write")}}
	h := &format.Batch{Magic: format.MagicV2, BaseOffset: leo, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	format.PrepareBatch(h, recs)
	var c format.Compressor
	raw, err := c.AppendBatch(nil, h, recs)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(last.Log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(raw[:1+rng.IntN(len(raw)-1)]); err != nil {
		t.Fatal(err)
	}
}

// prodRunBin runs the built klog with stdin.
func prodRunBin(t *testing.T, bin, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errw bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errw
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errw.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errw.String()
}

// TestProduceLeaderEpoch: --leader-epoch is written in the batches and in
// leader-epoch-checkpoint; without it the partition's latest epoch is kept;
// an older one is refused.
func TestProduceLeaderEpoch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	checkpoint := func(want string) {
		t.Helper()
		got, err := os.ReadFile(filepath.Join(dir, "leader-epoch-checkpoint"))
		if err != nil || string(got) != want {
			t.Errorf("leader-epoch-checkpoint %q (%v), want %q", got, err, want)
		}
	}
	if code, _, errs := prodRun(t, "a\nb\n", "produce", "--log", dir, "--acks", "0"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	checkpoint("0\n1\n0 0\n")
	if code, _, errs := prodRun(t, "c\n", "produce", "--log", dir, "--acks", "0", "--leader-epoch", "4"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	checkpoint("0\n2\n0 0\n4 2\n")
	if code, _, errs := prodRun(t, "d\n", "produce", "--log", dir, "--acks", "0"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	checkpoint("0\n2\n0 0\n4 2\n")
	code, _, errs := prodRun(t, "e\n", "produce", "--log", dir, "--acks", "0", "--leader-epoch", "3")
	// A fenced leader epoch is the broker's answer (FENCED_LEADER_EPOCH),
	// exit 1 like a fenced producer epoch, not trouble.
	if code != ExitFindings || !strings.Contains(errs, "below the partition's latest leader epoch 4 (fenced: FENCED_LEADER_EPOCH)") {
		t.Errorf("older epoch: exit %d %s", code, errs)
	}
	code, out, _ := klog(t, "dump", filepath.Join(dir, "00000000000000000000.log"))
	if code != ExitOK || strings.Count(out, "partitionLeaderEpoch: 4") != 2 || strings.Count(out, "partitionLeaderEpoch: 0") != 1 {
		t.Errorf("batch epochs:\n%s", out)
	}
	// The max-timestamp answer carries the batch's epoch.
	code, out, _ = klog(t, "offsets", "--time", "max-timestamp", "--json", dir)
	if code != ExitOK || !strings.Contains(out, `"leaderEpoch":4`) {
		t.Errorf("offsets: %s", out)
	}
}

// TestProduceDirArgument: the partition directory is DIR or --log DIR, with
// flags on either side; a missing, second or contradicting directory is a
// one-line usage error (exit 2) that writes nothing.
func TestProduceDirArgument(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    func(dir, other string) []string
		code    int
		wantErr string // a substring of stderr; "" for none
	}{
		{"positional", func(d, _ string) []string { return []string{"produce", d} }, ExitOK, ""},
		{"positional flags after", func(d, _ string) []string { return []string{"produce", d, "--acks", "0"} }, ExitOK, ""},
		{"positional flags before", func(d, _ string) []string { return []string{"produce", "--acks", "0", d} }, ExitOK, ""},
		{"--log", func(d, _ string) []string { return []string{"produce", "--log", d} }, ExitOK, ""},
		{"--log=", func(d, _ string) []string { return []string{"produce", "--log=" + d} }, ExitOK, ""},
		{"both agree", func(d, _ string) []string { return []string{"produce", "--log", d, d + string(filepath.Separator)} }, ExitOK, ""},
		{"none", func(_, _ string) []string { return []string{"produce"} }, ExitTrouble, "klog produce DIR (or --log DIR)"},
		{"two", func(d, o string) []string { return []string{"produce", d, o} }, ExitTrouble, "2 arguments"},
		{"--log and other", func(d, o string) []string { return []string{"produce", "--log", d, o} }, ExitTrouble, "differ"},
		{"other and --log", func(d, o string) []string { return []string{"produce", o, "--log", d} }, ExitTrouble, "differ"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "orders-0")
			other := filepath.Join(t.TempDir(), "other-0")
			code, _, errs := prodRun(t, "a\nb\n", tc.args(dir, other)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, errs)
			}
			if tc.wantErr == "" {
				if _, err := os.Stat(filepath.Join(dir, "00000000000000000000.log")); err != nil {
					t.Fatalf("nothing written: %v", err)
				}
				return
			}
			if !strings.Contains(errs, tc.wantErr) || strings.Count(errs, "\n") != 1 {
				t.Errorf("stderr %q: want one line containing %q", errs, tc.wantErr)
			}
			for _, d := range []string{dir, other} {
				if _, err := os.Stat(d); err == nil {
					t.Errorf("%s created on a usage error", d)
				}
			}
		})
	}
}

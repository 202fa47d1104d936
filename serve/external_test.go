package serve

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/produce"
)

// writeTxnPartition writes a partition with klog's appender: plain
// records, a committed transaction, an aborted one interleaved with it,
// and records after, all with one codec.
func writeTxnPartition(t *testing.T, dir string, codec format.Compression) {
	t.Helper()
	a, err := produce.Open(dir, produce.Options{})
	if err != nil {
		t.Fatal(err)
	}
	recs := func(p string, n int) []format.Record {
		var rs []format.Record
		for i := 0; i < n; i++ {
			rs = append(rs, format.Record{Key: []byte(p + strconv.Itoa(i)), Value: []byte(strings.Repeat(p, 20+i)), Timestamp: 1700000000000 + int64(i)})
		}
		return rs
	}
	steps := []func() error{
		func() error {
			_, err := a.Append(&produce.Batch{Records: recs("plain", 2), Compression: codec})
			return err
		},
		func() error {
			_, err := a.Append(&produce.Batch{Records: recs("commit", 3), Compression: codec, Producer: &produce.Producer{ID: 10}, Transactional: true})
			return err
		},
		func() error {
			_, err := a.Append(&produce.Batch{Records: recs("abort", 2), Compression: codec, Producer: &produce.Producer{ID: 11}, Transactional: true})
			return err
		},
		func() error { _, err := a.EndTxn(10, 0, true, 0); return err },
		func() error { _, err := a.EndTxn(11, 0, false, 0); return err },
		func() error {
			_, err := a.Append(&produce.Batch{Records: recs("after", 2), Compression: codec})
			return err
		},
	}
	for _, st := range steps {
		if err := st(); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

// External clients run through exec.Command. Locally a missing client
// skips its test; under CI=true (.ci/run installs them) it fails.

// lockedLog collects a request log.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func needClient(t *testing.T, name string, check ...string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil && len(check) > 0 {
		err = exec.Command(path, check...).Run()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI (.ci/run installs it): %v", name, err)
		}
		t.Skipf("%s not available: %v", name, err)
	}
	return path
}

// runClient runs a client and returns its standard output.
func runClient(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, out.String(), errb.String())
	}
	if s := errb.String(); strings.Contains(s, "not compressing") {
		t.Fatalf("%s did not compress: %s", name, s)
	}
	return out.String()
}

// lines renders records as the client scripts print them:
// "offset keyLen valueLen" (-1 for null), plus the timestamp for kcat.
func lines(rs []rec, withTS bool) string {
	var b strings.Builder
	for _, r := range rs {
		vl := len(r.Value) / 2
		if r.Value == "null" {
			vl = -1
		}
		kl := len(r.Key) / 2
		if r.Key == "null" {
			kl = -1
		}
		b.WriteString(strconv.FormatInt(r.Offset, 10) + " " + strconv.Itoa(kl) + " " + strconv.Itoa(vl))
		if withTS {
			b.WriteString(" " + strconv.FormatInt(r.Timestamp, 10))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func sameLines(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\ngot:\n%s\nwant:\n%s", what, got, want)
	}
}

// TestKcatConsume: `kcat -C -e` at both isolation levels (librdkafka
// 2.0.2) gets exactly what klog fetch gives, and `-o s@TIMESTAMP` starts
// where ListOffsets by time says.
func TestKcatConsume(t *testing.T) {
	kcat := needClient(t, "kcat", "-V")
	dir := fixtureLogDir(t, "txn-0", "producer-0", "none-0", "gzip-0", "zstd-0")
	before := hashTree(t, dir)
	var reqLog lockedLog
	_, addr := startServer(t, Config{LogDir: dir, RequestLog: &reqLog})
	// Each topic and isolation at once (t.Run from goroutines): each kcat
	// waits on its fetches, not on the CPU.
	var wg sync.WaitGroup
	for _, topic := range []string{"txn", "producer", "none", "gzip", "zstd"} {
		for _, iso := range []fetch.Isolation{fetch.ReadUncommitted, fetch.ReadCommitted} {
			want := fetchRecords(t, filepath.Join(dir, topic+"-0"), iso)
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(topic+"/"+iso.String(), func(t *testing.T) {
					got := runClient(t, "", kcat, "-C", "-b", addr, "-t", topic, "-o", "beginning", "-e", "-q",
						"-X", "isolation.level="+iso.String(), "-f", `%o %K %S %T\n`)
					sameLines(t, "kcat "+topic+" "+iso.String(), got, lines(want, true))
				})
			}()
		}
	}
	wg.Wait()
	all := fetchRecords(t, filepath.Join(dir, "producer-0"), fetch.ReadUncommitted)
	var from []rec
	for _, r := range all {
		if r.Offset >= 16 {
			from = append(from, r)
		}
	}
	// Kafka's answer for 1700001000017 is offset 16 (../partition/testdata/kafka-listoffsets).
	got := runClient(t, "", kcat, "-C", "-b", addr, "-t", "producer", "-o", "s@1700001000017", "-e", "-q",
		"-X", "isolation.level=read_uncommitted", "-f", `%o %K %S %T\n`)
	sameLines(t, "kcat -o s@1700001000017", got, lines(from, true))
	// What librdkafka 2.0.2 sent, as the client survey measured it
	// against kfake: ApiVersions v3, Metadata v4, ListOffsets v2 and
	// Fetch v11 at read_committed.
	for _, kv := range []string{`"requestApiKey":18,"requestApiVersion":3`, `"requestApiKey":3,"requestApiVersion":4`,
		`"requestApiKey":2,"requestApiVersion":2`, `"requestApiKey":1,"requestApiVersion":11`} {
		if !strings.Contains(reqLog.String(), kv) {
			t.Errorf("kcat did not send %s", kv)
		}
	}
	if !strings.Contains(reqLog.String(), `"softwareName":"librdkafka","softwareVersion":"2.0.2"`) {
		t.Errorf("no librdkafka 2.0.2 in the request log")
	}
	if hashTree(t, dir) != before {
		t.Fatal("read-only serve changed the log dir")
	}
}

// TestKcatProduce: `kcat -P -z CODEC` stores batches really compressed
// with that codec (librdkafka compresses gzip/snappy/lz4 only because the
// Produce range includes 0), and `-X enable.idempotence=true` delivers.
func TestKcatProduce(t *testing.T) {
	kcat := needClient(t, "kcat", "-V")
	dir := t.TempDir()
	var input strings.Builder
	for i := 0; i < 40; i++ {
		input.WriteString("key-" + strconv.Itoa(i) + ":" + strings.Repeat("value-"+strconv.Itoa(i)+" ", 10) + "\n")
	}
	cases := []struct{ topic, codec string }{{"none", "none"}, {"gzip", "gzip"}, {"snappy", "snappy"}, {"lz4", "lz4"}, {"zstd", "zstd"}, {"idem", "lz4"}}
	for _, c := range cases {
		os.MkdirAll(filepath.Join(dir, "p-"+c.topic+"-0"), 0o755)
	}
	s, addr := startServer(t, Config{LogDir: dir, Writable: true})
	for _, c := range cases {
		args := []string{"-P", "-b", addr, "-t", "p-" + c.topic, "-z", c.codec, "-K", ":", "-X", "linger.ms=20"}
		if c.topic == "idem" {
			args = append(args, "-X", "enable.idempotence=true")
		}
		runClient(t, input.String(), kcat, args...)
		waitHW(t, s, "p-"+c.topic, 40)
		pd := filepath.Join(dir, "p-"+c.topic+"-0")
		got := dumpRecords(t, pd)
		for i, r := range got {
			if r.Offset != int64(i) || r.Key != hexOf("key-"+strconv.Itoa(i)) || r.Value != hexOf(strings.Repeat("value-"+strconv.Itoa(i)+" ", 10)) {
				t.Fatalf("%s: record %d = %+v", c.topic, i, r)
			}
		}
		for _, codec := range batchCodecs(t, pd) {
			if codec != c.codec {
				t.Errorf("%s: a batch is stored as %s, kcat was asked for %s", c.topic, codec, c.codec)
			}
		}
	}
	verifyClean(t, dir)
}

func hexOf(s string) string { return fromParts(0, 0, []byte(s), nil, 0).Key }

// TestKcatGroup: `kcat -G` (librdkafka's balanced consumer) reads a topic.
func TestKcatGroup(t *testing.T) {
	kcat := needClient(t, "kcat", "-V")
	dir := fixtureLogDir(t, "none-0")
	_, addr := startServer(t, Config{LogDir: dir})
	want := fetchRecords(t, filepath.Join(dir, "none-0"), fetch.ReadCommitted)
	got := runClient(t, "", kcat, "-b", addr, "-G", "kcat-group", "-o", "beginning", "-c", strconv.Itoa(len(want)), "-q",
		"-f", `%o %K %S %T\n`, "none")
	sameLines(t, "kcat -G", got, lines(want, true))
}

const systemPython = "/usr/bin/python3"

// TestKafkaPython: Debian's python3-kafka consumes with a group and
// produces.
func TestKafkaPython(t *testing.T) {
	py := needClient(t, systemPython, "-c", "import kafka")
	dir := fixtureLogDir(t, "none-0")
	os.MkdirAll(filepath.Join(dir, "py-0"), 0o755)
	s, addr := startServer(t, Config{LogDir: dir, Writable: true})
	want := fetchRecords(t, filepath.Join(dir, "none-0"), fetch.ReadUncommitted)
	got := runClient(t, "", py, filepath.Join("testdata", "clients", "kafka_python.py"), "consume", addr, "none", "pyg", strconv.Itoa(len(want)))
	sameLines(t, "kafka-python consume", got, lines(want, false))
	runClient(t, "", py, filepath.Join("testdata", "clients", "kafka_python.py"), "produce", addr, "py", "30")
	waitHW(t, s, "py", 30)
	checkProduced(t, filepath.Join(dir, "py-0"), 30, 1)
}

// checkProduced checks records k<i> / v<i> repeated rep times, with
// timestamps 1700000000000+i.
func checkProduced(t *testing.T, pd string, n, rep int) {
	t.Helper()
	got := dumpRecords(t, pd)
	if len(got) != n {
		t.Fatalf("%s: %d records, want %d", pd, len(got), n)
	}
	for i, r := range got {
		if want := fromParts(int64(i), 1700000000000+int64(i), []byte("k"+strconv.Itoa(i)), []byte(strings.Repeat("v"+strconv.Itoa(i), rep)), 0); r != want {
			t.Fatalf("%s: record %d = %+v, want %+v", pd, i, r, want)
		}
	}
}

// TestConfluentPython: Debian's python3-confluent-kafka (librdkafka 2.0.2)
// consumes a transactional topic with a group at read_committed (its
// default) and produces idempotently with lz4, stored compressed.
func TestConfluentPython(t *testing.T) {
	py := needClient(t, systemPython, "-c", "import confluent_kafka")
	dir := fixtureLogDir(t, "txn-0", "producer-0")
	os.MkdirAll(filepath.Join(dir, "cf-0"), 0o755)
	s, addr := startServer(t, Config{LogDir: dir, Writable: true})
	for _, topic := range []string{"txn", "producer"} {
		want := fetchRecords(t, filepath.Join(dir, topic+"-0"), fetch.ReadCommitted)
		got := runClient(t, "", py, filepath.Join("testdata", "clients", "confluent.py"), "consume", addr, topic, "cfg-"+topic, strconv.Itoa(len(want)))
		sameLines(t, "confluent-kafka "+topic, got, lines(want, false))
	}
	runClient(t, "", py, filepath.Join("testdata", "clients", "confluent.py"), "produce", addr, "cf", "30", "lz4")
	waitHW(t, s, "cf", 30)
	checkProduced(t, filepath.Join(dir, "cf-0"), 30, 20)
	for _, codec := range batchCodecs(t, filepath.Join(dir, "cf-0")) {
		if codec != "lz4" {
			t.Errorf("confluent-kafka lz4 batch stored as %s", codec)
		}
	}
	verifyClean(t, filepath.Join(dir, "cf-0"))
}

// TestKafkajs: kafkajs 2.2.4 (npm, lockfile in testdata/kafkajs) consumes
// a transactional topic with a group (read_committed by default) and
// produces idempotently.
func TestKafkajs(t *testing.T) {
	node := needClient(t, "node", "--version")
	js := filepath.Join("testdata", "kafkajs")
	if _, err := os.Stat(filepath.Join(js, "node_modules", "kafkajs")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kafkajs is not installed (npm ci in serve/testdata/kafkajs): %v", err)
		}
		t.Skipf("kafkajs not installed: %v", err)
	}
	// kafkajs decodes only gzip itself: a gzip transactional partition
	// written by klog's appender, with a committed and an aborted
	// transaction.
	dir := fixtureLogDir(t, "gzip-0")
	writeTxnPartition(t, filepath.Join(dir, "jstxn-0"), format.CompressionGzip)
	os.MkdirAll(filepath.Join(dir, "js-0"), 0o755)
	s, addr := startServer(t, Config{LogDir: dir, Writable: true})
	if rc, ru := fetchRecords(t, filepath.Join(dir, "jstxn-0"), fetch.ReadCommitted), fetchRecords(t, filepath.Join(dir, "jstxn-0"), fetch.ReadUncommitted); len(rc) != 7 || len(ru) != 9 {
		t.Fatalf("the transactional partition reads %d committed and %d uncommitted records, want 7 and 9", len(rc), len(ru))
	}
	for _, topic := range []string{"gzip", "jstxn"} {
		want := fetchRecords(t, filepath.Join(dir, topic+"-0"), fetch.ReadCommitted)
		got := runClient(t, "", node, filepath.Join(js, "client.js"), addr, "consume", topic, "jsg-"+topic, strconv.Itoa(len(want)))
		sameLines(t, "kafkajs consume "+topic, got, lines(want, false))
	}
	runClient(t, "", node, filepath.Join(js, "client.js"), addr, "produce", "js", "30")
	waitHW(t, s, "js", 30)
	checkProduced(t, filepath.Join(dir, "js-0"), 30, 1)
}

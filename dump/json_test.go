package dump

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/jsoncontract"
)

func runJSON(t *testing.T, dir string, opts Options, files ...string) ([]map[string]any, Result, error) {
	t.Helper()
	opts.JSON = true
	opts.Cwd = dir
	if opts.MaxBytes == 0 {
		opts.MaxBytes = -1
	}
	var out, errw bytes.Buffer
	res, err := Run(files, opts, &out, &errw)
	var objs []map[string]any
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if jerr := json.Unmarshal(sc.Bytes(), &m); jerr != nil {
			t.Fatalf("line is not JSON: %v\n%s", jerr, sc.Text())
		}
		if err := jsoncontract.Line(sc.Bytes()); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, m)
	}
	return objs, res, err
}

func ofType(objs []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, o := range objs {
		if o["type"] == typ {
			out = append(out, o)
		}
	}
	return out
}

func TestJSONTransactions(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(segmentsDir(t), "kafka-written", "v2-transactions")
	objs, res, err := runJSON(t, dir, Options{PrintData: true}, "00000000000000000000.log")
	if err != nil || res.Findings != 0 {
		t.Fatalf("err %v findings %d", err, res.Findings)
	}
	batches := ofType(objs, "batch")
	records := ofType(objs, "record")
	if len(batches) == 0 || len(records) == 0 {
		t.Fatalf("got %d batches, %d records", len(batches), len(records))
	}
	var commits, aborts int
	for _, r := range records {
		c, ok := r["control"].(map[string]any)
		if !ok {
			if _, has := r["value"]; !has {
				t.Errorf("data record without value field: %v", r)
			}
			continue
		}
		switch c["type"] {
		case "COMMIT":
			commits++
		case "ABORT":
			aborts++
		}
		if _, ok := c["coordinatorEpoch"].(float64); !ok {
			t.Errorf("control record without coordinatorEpoch: %v", c)
		}
	}
	if commits == 0 || aborts == 0 {
		t.Errorf("commits %d aborts %d, want both", commits, aborts)
	}
	txn := 0
	for _, b := range batches {
		for _, f := range []string{"baseOffset", "lastOffset", "recordCount", "magic", "crc", "isValid", "sizeBytes", "position",
			"compression", "timestampType", "maxTimestamp", "producerId", "producerEpoch", "baseSequence",
			"lastSequence", "partitionLeaderEpoch", "isTransactional", "isControl", "deleteHorizonMs"} {
			if _, ok := b[f]; !ok {
				t.Errorf("batch object lacks %q: %v", f, b)
			}
		}
		if b["isTransactional"] == true {
			txn++
		}
	}
	if txn == 0 {
		t.Errorf("no transactional batch among %d", len(batches))
	}
}

func TestJSONBinaryAndNulls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Spec §3.13 A plus a record whose value is not UTF-8.
	seg := buildSegment(t, []testRecord{
		{key: []byte("a"), value: []byte("hello")},
		{key: nil, value: []byte{0xff, 0xfe, 0x00}},
		{key: []byte{}, value: nil},
	})
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	objs, _, err := runJSON(t, dir, Options{PrintData: true}, "00000000000000000000.log")
	if err != nil {
		t.Fatal(err)
	}
	recs := ofType(objs, "record")
	if len(recs) != 3 {
		t.Fatalf("got %d records", len(recs))
	}
	if recs[0]["key"] != "a" || recs[0]["value"] != "hello" || recs[0]["keyEncoding"] != nil {
		t.Errorf("record 0: %v", recs[0])
	}
	if recs[1]["key"] != nil || recs[1]["valueEncoding"] != "base64" {
		t.Errorf("record 1: %v", recs[1])
	}
	if v, _ := base64.StdEncoding.DecodeString(recs[1]["value"].(string)); !bytes.Equal(v, []byte{0xff, 0xfe, 0x00}) {
		t.Errorf("record 1 value decodes to %x", v)
	}
	if recs[2]["key"] != "" || recs[2]["value"] != nil || recs[2]["keySize"] != float64(0) || recs[2]["valueSize"] != float64(-1) {
		t.Errorf("record 2: %v", recs[2])
	}
}

func TestJSONProblems(t *testing.T) {
	t.Parallel()
	corrupt := filepath.Join(segmentsDir(t), "kafka-written", "derived-corrupt")
	cases := []struct {
		dir, kind string
	}{
		{"bad-crc-none", "crc-mismatch"},
		{"truncated-tail", "truncated"},
		{"bad-magic", "bad-magic"},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			t.Parallel()
			objs, res, err := runJSON(t, filepath.Join(corrupt, c.dir), Options{}, "00000000000000000000.log")
			if err != nil {
				t.Fatal(err)
			}
			if res.Findings == 0 {
				t.Errorf("no findings")
			}
			probs := ofType(objs, "problem")
			found := false
			for _, p := range probs {
				if p["kind"] == c.kind {
					found = true
					if _, ok := p["position"].(float64); !ok {
						t.Errorf("problem without position: %v", p)
					}
				}
			}
			if !found {
				t.Errorf("no %q problem in %v", c.kind, probs)
			}
		})
	}
}

func TestDumpIsReadOnly(t *testing.T) {
	t.Parallel()
	src := filepath.Join(segmentsDir(t), "kafka-written", "v2-gzip", "00000000000000000000.log")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "00000000000000000000.log")
	if err := os.WriteFile(p, data, 0o444); err != nil {
		t.Fatal(err)
	}
	old := time.Unix(1700000000, 0)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{MaxBytes: -1, PrintData: true}, {MaxBytes: -1, JSON: true, PrintData: true}} {
		o.Cwd = dir
		if _, err := Run([]string{"00000000000000000000.log"}, o, new(bytes.Buffer), new(bytes.Buffer)); err != nil {
			t.Fatal(err)
		}
	}
	after, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if !bytes.Equal(after, data) || !st.ModTime().Equal(old) {
		t.Errorf("dump changed the file (bytes equal %v, mtime %v)", bytes.Equal(after, data), st.ModTime())
	}
}

// TestDumpNeverChangesIndexes: unlike Kafka's tool, dumping an odd-sized
// index does not trim it and a missing index is not created.
func TestDumpNeverChangesIndexes(t *testing.T) {
	t.Parallel()
	src := filepath.Join(segmentsDir(t), "kafka-written", "derived-corrupt")
	dir := t.TempDir()
	files := map[string][]byte{}
	for _, sub := range []string{"index-odd-size", "index-no-log"} {
		des, _ := os.ReadDir(filepath.Join(src, sub))
		for _, de := range des {
			if filepath.Ext(de.Name()) == ".txt" {
				continue
			}
			b, _ := os.ReadFile(filepath.Join(src, sub, de.Name()))
			if de.Name() == "00000000000000000000.index" && sub == "index-odd-size" {
				b = append(b, 1, 2, 3) // 27 bytes, as Kafka's tool would trim
			}
			p := filepath.Join(dir, sub, de.Name())
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, b, 0o644)
			files[p] = b
		}
	}
	os.Remove(filepath.Join(dir, "index-no-log", "00000000000000000000.index")) // only the time index left
	delete(files, filepath.Join(dir, "index-no-log", "00000000000000000000.index"))
	for _, o := range []Options{{MaxBytes: -1}, {MaxBytes: -1, IndexSanityOnly: true}, {MaxBytes: -1, VerifyIndexOnly: true}, {MaxBytes: -1, JSON: true}} {
		for p := range files {
			o.Cwd = filepath.Dir(p)
			Run([]string{filepath.Base(p)}, o, new(bytes.Buffer), new(bytes.Buffer))
		}
	}
	for p, b := range files {
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s changed (err %v)", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "index-no-log", "00000000000000000000.index")); err == nil {
		t.Error("dump created a missing index")
	}
}

// TestJSONSchemaEveryFixture dumps every fixture file (segments, indexes,
// snapshots, transaction indexes, KRaft checkpoints, partition files) as
// JSON, with data and with Kafka's decoders where they apply, and
// validates every line against the schema.
func TestJSONSchemaEveryFixture(t *testing.T) {
	t.Parallel()
	root := segmentsDir(t)
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		name := de.Name()
		if !hasAnySuffix(name, dumpedSuffixes) && name != "leader-epoch-checkpoint" && name != "partition.metadata" &&
			!strings.HasSuffix(name, "-offset-checkpoint") {
			return nil
		}
		dir := filepath.Dir(path)
		for _, opts := range []Options{{PrintData: true, Deep: true, Decoder: fixtureDecoder(dir, name)}, {IndexSanityOnly: true}} {
			opts.JSON, opts.Cwd, opts.MaxBytes = true, dir, -1
			var out, errw bytes.Buffer
			Run([]string{name}, opts, &out, &errw)
			sc := bufio.NewScanner(&out)
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				if err := jsoncontract.Line(sc.Bytes()); err != nil {
					t.Errorf("%s: %v", path, err)
					return nil
				}
				var o struct{ Type string }
				json.Unmarshal(sc.Bytes(), &o)
				seen[o.Type] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// No fixture has an offset checkpoint: write one.
	tmp := t.TempDir()
	cp := format.AppendOffsetCheckpoint(nil, []format.OffsetEntry{{Topic: "t\x00\xff", Partition: 3, Offset: 9}})
	if err := os.WriteFile(filepath.Join(tmp, "replication-offset-checkpoint"), cp, 0o644); err != nil {
		t.Fatal(err)
	}
	objs, _, err := runJSON(t, tmp, Options{}, "replication-offset-checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		seen[o["type"].(string)] = true
	}
	for _, typ := range []string{"file", "batch", "record", "problem", "summary", "sanity", "indexEntry", "timeIndexEntry",
		"producer", "abortedTxn", "epoch", "checkpointEntry"} {
		if !seen[typ] {
			t.Errorf("no %q object in the fixtures' JSON", typ)
		}
	}
}

// TestRunContext: a dump stops when its context ends, with the context's
// error, before the next file and inside a large one.
func TestRunContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var c format.Compressor
	var seg []byte
	for i := int64(0); i < 5000; i++ {
		h := format.Batch{BaseOffset: i, Magic: format.MagicV2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		recs := []format.Record{{Offset: i, Value: []byte("v")}}
		format.PrepareBatch(&h, recs)
		seg, _ = c.AppendBatch(seg, &h, recs)
	}
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	res, err := RunContext(ctx, []string{"00000000000000000000.log"}, Options{JSON: true, MaxBytes: -1, Cwd: dir}, &out, io.Discard)
	if !errors.Is(err, context.Canceled) || res.Files != 0 || out.Len() != 0 {
		t.Fatalf("canceled before: %v, %d files, %d bytes out", err, res.Files, out.Len())
	}
	// Cancelled while the file is read: stops within 256 batches.
	ctx, cancel = context.WithCancel(context.Background())
	w := &cancelOnWrite{cancel: cancel}
	_, err = RunContext(ctx, []string{"00000000000000000000.log"}, Options{JSON: true, MaxBytes: -1, Cwd: dir}, w, io.Discard)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled during: %v", err)
	}
	if n := bytes.Count(w.buf.Bytes(), []byte(`"type":"batch"`)); n >= 5000 {
		t.Errorf("all %d batches written after the cancel", n)
	}
}

// cancelOnWrite cancels on the renderer's first (buffered) write.
type cancelOnWrite struct {
	cancel context.CancelFunc
	buf    bytes.Buffer
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.cancel()
	return w.buf.Write(p)
}

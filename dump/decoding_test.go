package dump

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klog-dev/klog/internal/jsoncontract"
	"github.com/klog-dev/klog/internaltopic"
)

// fixtureDecoder is the decoder kafka-dump-log was run with to make the
// F.decoder.txt oracles: chosen by the partition folder's topic
// (testdata/segments/FIXTURES-README.md).
func fixtureDecoder(dir, name string) internaltopic.Kind {
	folder := filepath.Base(dir)
	switch {
	case strings.HasPrefix(folder, "__consumer_offsets-"):
		return internaltopic.Offsets
	case strings.HasPrefix(folder, "__transaction_state-"):
		return internaltopic.TransactionLog
	case strings.HasPrefix(folder, "__cluster_metadata-"), name == "bootstrap.checkpoint":
		return internaltopic.ClusterMetadata
	case strings.HasPrefix(folder, "__remote_log_metadata-"):
		return internaltopic.RemoteLog
	case strings.HasPrefix(folder, "__share_group_state-"):
		return internaltopic.ShareGroupState
	}
	return internaltopic.None
}

// wire builds Kafka protocol bytes by hand, independent of the reader under
// test.
type wire []byte

func (w wire) i16(v int16) wire { return binary.BigEndian.AppendUint16(w, uint16(v)) }
func (w wire) i32(v int32) wire { return binary.BigEndian.AppendUint32(w, uint32(v)) }
func (w wire) i64(v int64) wire { return binary.BigEndian.AppendUint64(w, uint64(v)) }

// str is a classic string: int16 length, -1 for null.
func (w wire) str(s string) wire { return append(w.i16(int16(len(s))), s...) }

// TestDecoderMissingKey: a keyless record in __consumer_offsets kills
// Kafka's tool after the record's metadata; klog stops there with a
// FatalError in text mode and reports a problem in JSON mode.
func TestDecoderMissingKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seg := buildSegment(t, []testRecord{
		{key: wire{}.i16(2).str("g"), value: nil},
		{key: nil, value: wire{}.i16(0)},
		{key: wire{}.i16(2).str("h"), value: nil},
	})
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	res, err := Run([]string{"00000000000000000000.log"}, Options{MaxBytes: -1, Decoder: internaltopic.Offsets, Cwd: dir}, &out, &errw)
	var fe *FatalError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "Failed to decode message at offset 1 using the specified decoder (message had a missing key)") {
		t.Fatalf("err = %v, want Kafka's missing-key FatalError", err)
	}
	if res.Findings != 1 {
		t.Errorf("findings = %d, want 1", res.Findings)
	}
	lines := strings.Split(out.String(), "\n")
	if n := len(lines); n != 5 ||
		lines[3] != `| offset: 0 CreateTime: 1700000000000 keySize: 5 valueSize: -1 sequence: -1 headerKeys: [] key: {"type":"2","data":{"group":"g"}} payload: <DELETE>` ||
		lines[4] != `| offset: 1 CreateTime: 1700000000001 keySize: -1 valueSize: 2 sequence: -1 headerKeys: []` {
		t.Errorf("stdout:\n%s", out.String())
	}

	objs, res, err := runJSON(t, dir, Options{Decoder: internaltopic.Offsets}, "00000000000000000000.log")
	if err != nil || res.Findings != 1 {
		t.Fatalf("JSON: err %v findings %d", err, res.Findings)
	}
	if recs := ofType(objs, "record"); len(recs) != 3 || recs[2]["decodedKey"].(map[string]any)["type"] != "2" {
		t.Errorf("JSON records: %v", recs)
	}
	probs := ofType(objs, "problem")
	if len(probs) != 1 || probs[0]["kind"] != "record-decode" || probs[0]["offset"] != float64(1) {
		t.Errorf("JSON problems: %v", probs)
	}
}

// TestDecoderFindings: records a decoder cannot decode are printed as
// Kafka prints them and counted as findings.
func TestDecoderFindings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seg := buildSegment(t, []testRecord{
		{key: wire{}.i16(42).str("g"), value: wire{}.i16(0)},
		{key: wire{}.i16(1).str("g").str("t").i32(0), value: wire{}.i16(3).i64(1).i32(0).str("").i64(2)},
	})
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	res, err := Run([]string{"00000000000000000000.log"}, Options{MaxBytes: -1, Decoder: internaltopic.Offsets, SkipRecordMetadata: true, Cwd: dir}, &out, &errw)
	if err != nil || res.Findings != 1 {
		t.Fatalf("err %v findings %d", err, res.Findings)
	}
	want := "| key: Unknown record type 42 at offset 0, skipping.\n" +
		`| key: {"type":"1","data":{"group":"g","topic":"t","partition":0}} payload: {"version":"3","data":{"offset":1,"leaderEpoch":0,"metadata":"","commitTimestamp":2}}` + "\n"
	if got := out.String(); !strings.HasSuffix(got, want) {
		t.Errorf("stdout:\n%s\nwant it to end with:\n%s", got, want)
	}
	objs, _, _ := runJSON(t, dir, Options{Decoder: internaltopic.Offsets}, "00000000000000000000.log")
	if probs := ofType(objs, "problem"); len(probs) != 1 || probs[0]["kind"] != "record-decode" {
		t.Errorf("JSON problems: %v", probs)
	}
	if recs := ofType(objs, "record"); len(recs) != 2 || recs[0]["decodedKey"] != "Unknown record type 42 at offset 0, skipping." {
		t.Errorf("JSON records: %v", recs)
	}
}

// TestGoldenDecoderReferenceOnly checks the decoder oracles of the
// reference-only fixtures (never copied into the repository) when
// KLOG_REFERENCE_ONLY names their folder.
func TestGoldenDecoderReferenceOnly(t *testing.T) {
	t.Parallel()
	root := os.Getenv("KLOG_REFERENCE_ONLY")
	if root == "" {
		t.Skip("KLOG_REFERENCE_ONLY not set")
	}
	checked := 0
	err := filepath.WalkDir(root, func(path string, de os.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".decoder.txt") {
			return err
		}
		f := strings.TrimSuffix(path, ".decoder.txt")
		dir, name := filepath.Dir(f), filepath.Base(f)
		want, _ := os.ReadFile(path)
		wantErr, _ := os.ReadFile(f + ".decoder.stderr.txt")
		wantErr = bytes.ReplaceAll(wantErr, []byte("{DIR}"), []byte(dir))
		checked++
		var stdout, stderr bytes.Buffer
		_, rerr := Run([]string{name}, Options{MaxBytes: -1, Decoder: fixtureDecoder(dir, name), Cwd: dir}, &stdout, &stderr)
		if rerr != nil {
			t.Errorf("%s: %v", f, rerr)
		}
		if !bytes.Equal(stdout.Bytes(), want) {
			t.Errorf("%s: stdout differs:\n%s", f, lineDiff(want, stdout.Bytes()))
		}
		if !bytes.Equal(stderr.Bytes(), wantErr) {
			t.Errorf("%s: stderr differs:\n%s", f, lineDiff(wantErr, stderr.Bytes()))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatalf("no *.decoder.txt under %s", root)
	}
}

// TestDecoderJSONShareAndRemoteLog: with --json the share coordinator's
// records are Kafka's JSON, each data object of its schema definition, and
// __remote_log_metadata records are typed objects; every line validates.
func TestDecoderJSONShareAndRemoteLog(t *testing.T) {
	t.Parallel()
	root := filepath.Join(segmentsDir(t), "kafka-written", "coordinator")
	for _, dir := range []string{"__share_group_state-0", "__share_group_state-1"} {
		objs, res, err := runJSON(t, filepath.Join(root, dir), Options{Decoder: internaltopic.ShareGroupState}, "00000000000000000000.log")
		if err != nil || res.Findings != 0 {
			t.Fatalf("%s: err %v findings %d", dir, err, res.Findings)
		}
		recs := ofType(objs, "record")
		if len(recs) == 0 {
			t.Fatalf("%s: no records", dir)
		}
		for _, r := range recs {
			k := r["decodedKey"].(map[string]any)
			checkDef(t, "shareGroupStateKey", k["data"])
			v, ok := r["decodedValue"].(map[string]any)
			if !ok {
				if r["decodedValue"] != "<DELETE>" {
					t.Errorf("%s offset %v: value %v", dir, r["offset"], r["decodedValue"])
				}
				continue
			}
			def := map[any]string{"0": "shareSnapshotValue", "1": "shareUpdateValue"}[k["type"]]
			checkDef(t, def, v["data"])
		}
	}
	objs, res, err := runJSON(t, filepath.Join(root, "__remote_log_metadata-0"), Options{Decoder: internaltopic.RemoteLog}, "00000000000000000000.log")
	if err != nil || res.Findings != 0 {
		t.Fatalf("remote log: err %v findings %d", err, res.Findings)
	}
	kinds := map[string]int{}
	for _, r := range ofType(objs, "record") {
		v, ok := r["decodedValue"].(map[string]any)
		if !ok || r["decodedKey"] != nil {
			t.Fatalf("offset %v: key %v value %v", r["offset"], r["decodedKey"], r["decodedValue"])
		}
		kinds[v["kind"].(string)]++
		// record's decodedValue also admits any JSON (find's formats): check
		// the object against its own definition.
		checkDef(t, "remoteLogMetadata", v)
	}
	want := map[string]int{"RemoteLogSegmentMetadata": 3, "RemoteLogSegmentMetadataUpdate": 4,
		"RemotePartitionDeleteMetadata": 3, "RemoteLogSegmentMetadataSnapshot": 1}
	if !maps.Equal(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
}

func checkDef(t *testing.T, def string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := jsoncontract.Def(def, b); err != nil {
		t.Error(err)
	}
}

// TestDecoderRemoteLogHostile: a tombstone and a record Kafka's serde
// refuses print Kafka's error payload and are findings; the dump goes on.
func TestDecoderRemoteLogHostile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A RemotePartitionDeleteMetadataRecord: frame 1, apiKey 2, version
	// 0; topic "o", id 0x01..., partition 3, no tags; broker 4; event
	// time 9; state 1; no tags.
	good := []byte{1, 2, 0, 2, 'o', 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 3, 0, 0, 0, 0, 4,
		0, 0, 0, 0, 0, 0, 0, 9, 1, 0}
	seg := buildSegment(t, []testRecord{
		{key: nil, value: nil},
		{key: []byte("ignored"), value: good},
		{key: nil, value: []byte{}},
		{key: nil, value: append(append([]byte{}, good[:len(good)-2]...), 7, 0)},
	})
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	res, err := Run([]string{"00000000000000000000.log"}, Options{MaxBytes: -1, Decoder: internaltopic.RemoteLog, SkipRecordMetadata: true, Cwd: dir}, &out, &errw)
	if err != nil || res.Findings != 3 {
		t.Fatalf("err %v, findings %d, want 3", err, res.Findings)
	}
	lines := strings.Split(out.String(), "\n")
	want := []string{
		`| payload: Error at offset 0, skipping. Cannot invoke "java.nio.ByteBuffer.remaining()" because the return value of "org.apache.kafka.common.record.internal.Record.value()" is null`,
		`| payload: RemotePartitionDeleteMetadata{topicPartition=AQEBAQEBAQEBAQEBAQEBAQ:o-3, state=DELETE_PARTITION_STARTED, eventTimestampMs=9, brokerId=4}`,
		`| payload: Error at offset 2, skipping. Error while reading frame version`,
		`| payload: Error at offset 3, skipping. null`,
	}
	if len(lines) != 8 || !slices.Equal(lines[3:7], want) {
		t.Errorf("stdout:\n%s\nwant records:\n%s", out.String(), strings.Join(want, "\n"))
	}
	objs, res, err := runJSON(t, dir, Options{Decoder: internaltopic.RemoteLog}, "00000000000000000000.log")
	if err != nil || res.Findings != 3 || len(ofType(objs, "problem")) != 3 {
		t.Errorf("JSON: err %v, findings %d, problems %v", err, res.Findings, ofType(objs, "problem"))
	}
}

package dump

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klog-dev/klog/internaltopic"
)

func strp(s string) *string { return &s }

// TestDecoderClassLoading follows DumpLogSegmentsOptions.messageParser:
// the value class is loaded first, then the key class, for each log file
// after its Dumping line, with Kafka's exception for each kind of class it
// cannot use; a message decoder wins and no class is loaded.
func TestDecoderClassLoading(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(segmentsDir(t), "kafka-written", "v2-none")
	tests := []struct {
		name       string
		key, value *string
		decoder    internaltopic.Kind
		want       string // the error's message; "" none
	}{
		{name: "unknown value class", value: strp("com.example.Avro"),
			want: `--value-decoder-class "com.example.Avro": java.lang.RuntimeException: Failed to load decoder class (java.lang.ClassNotFoundException: com.example.Avro)`},
		{name: "the value class is loaded first", key: strp("x.Key"), value: strp("x.Value"),
			want: `--value-decoder-class "x.Value": java.lang.RuntimeException: Failed to load decoder class (java.lang.ClassNotFoundException: x.Value)`},
		{name: "unknown key class", key: strp("kafka.serializer.StringDecoder"),
			want: `--key-decoder-class "kafka.serializer.StringDecoder": java.lang.RuntimeException: Failed to load decoder class (java.lang.ClassNotFoundException: kafka.serializer.StringDecoder)`},
		{name: "the empty name", key: strp(""),
			want: `--key-decoder-class "": java.lang.RuntimeException: Failed to load decoder class (java.lang.ClassNotFoundException: )`},
		{name: "a class that is not a Decoder", value: strp("java.lang.String"),
			want: `--value-decoder-class "java.lang.String": java.lang.ClassCastException: class java.lang.String`},
		{name: "the Decoder interface itself", value: strp("org.apache.kafka.tools.api.Decoder"),
			want: `--value-decoder-class "org.apache.kafka.tools.api.Decoder": org.apache.kafka.common.KafkaException: Could not find a public no-argument constructor for org.apache.kafka.tools.api.Decoder`},
		{name: "a message decoder wins", value: strp("x.Value"), decoder: internaltopic.Offsets},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errw bytes.Buffer
			_, err := Run([]string{"00000000000000000000.index", "00000000000000000000.log", "00000000000000000000.timeindex"},
				Options{MaxBytes: -1, Cwd: dir, KeyDecoderClass: tc.key, ValueDecoderClass: tc.value, Decoder: tc.decoder}, &out, &errw)
			var dce *DecoderClassError
			if tc.want == "" {
				// (the offsets decoder then dies on the keyless record)
				if errors.As(err, &dce) || !strings.Contains(out.String(), "Log starting offset: 0") {
					t.Fatalf("err %v\n%s", err, out.String())
				}
				return
			}
			if !errors.As(err, &dce) || dce.Error() != tc.want {
				t.Fatalf("err %v\nwant %s", err, tc.want)
			}
			// The index was dumped (no class is loaded for it); the log's
			// Dumping line is the last thing printed; no summary.
			if !strings.HasSuffix(out.String(), "offset: 58 position: 374\nDumping 00000000000000000000.log\n") || errw.Len() != 0 {
				t.Errorf("stdout:\n%s\nstderr:\n%s", out.String(), errw.String())
			}
		})
	}
}

// TestDecoderClassRecords: IntegerDecoder and LongDecoder print the first
// 4 or 8 bytes as a Java int or long (extra bytes ignored), DefaultDecoder
// the bytes in hex; a shorter key or value is Kafka's
// BufferUnderflowException: the dump stops after the record's metadata, or
// in JSON a record-decode problem and the dump goes on.
func TestDecoderClassRecords(t *testing.T) {
	t.Parallel()
	be32 := binary.BigEndian.AppendUint32(nil, 0xfffffffe)
	be64 := binary.BigEndian.AppendUint64(nil, 1<<40)
	dir := t.TempDir()
	seg := buildSegment(t, []testRecord{
		{key: append(be32, 9, 9), value: be64},
		{key: nil, value: append(be64, 1)},
		{key: be32, value: []byte{1, 2}},
		{key: []byte{0}, value: nil},
	})
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	opts := Options{MaxBytes: -1, Cwd: dir, SkipRecordMetadata: true,
		KeyDecoderClass: strp("org.apache.kafka.tools.api.IntegerDecoder"), ValueDecoderClass: strp("org.apache.kafka.tools.api.LongDecoder")}
	var out, errw bytes.Buffer
	res, err := Run([]string{"00000000000000000000.log"}, opts, &out, &errw)
	var fe *FatalError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "LongDecoder needs 8 bytes, the value has 2") || res.Findings != 1 {
		t.Fatalf("err %v findings %d", err, res.Findings)
	}
	lines := strings.Split(out.String(), "\n")
	if len(lines) != 6 || lines[3] != "| key: -2 payload: 1099511627776" || lines[4] != "| payload: 1099511627776" || lines[5] != "" {
		t.Errorf("stdout:\n%q", lines)
	}

	objs, res, err := runJSON(t, dir, Options{KeyDecoderClass: opts.KeyDecoderClass, ValueDecoderClass: opts.ValueDecoderClass}, "00000000000000000000.log")
	if err != nil || res.Findings != 2 {
		t.Fatalf("JSON: err %v findings %d", err, res.Findings)
	}
	recs := ofType(objs, "record")
	if len(recs) != 4 || recs[0]["decodedKey"] != float64(-2) || recs[0]["decodedValue"] != float64(1<<40) || recs[1]["decodedKey"] != nil {
		t.Errorf("records: %v", recs)
	}
	if probs := ofType(objs, "problem"); len(probs) != 2 || probs[0]["kind"] != "record-decode" || probs[1]["offset"] != float64(3) {
		t.Errorf("problems: %v", probs)
	}

	out.Reset()
	opts.KeyDecoderClass, opts.ValueDecoderClass = nil, strp("org.apache.kafka.tools.api.DefaultDecoder")
	if _, err := Run([]string{"00000000000000000000.log"}, opts, &out, &errw); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "payload: 0000010000000000\n") {
		t.Errorf("DefaultDecoder:\n%s", out.String())
	}
}

// fakeValueDecoder answers "v<len>" and fails on the value "bad".
type fakeValueDecoder struct{ calls int }

func (f *fakeValueDecoder) DecodeValue(offset int64, v []byte) ([]byte, error) {
	f.calls++
	if string(v) == "bad" {
		return nil, errors.New("it broke")
	}
	return []byte("v" + string(rune('0'+len(v)))), nil
}

// TestValueDecoder: values only (never a null one) go to the external
// decoder; its failure prints nothing of that record and stops the run.
func TestValueDecoder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seg := buildSegment(t, []testRecord{{key: []byte("k"), value: []byte("ab")}, {key: []byte("t"), value: nil}, {value: []byte("bad")}, {value: []byte("x")}})
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fakeValueDecoder{}
	var out, errw bytes.Buffer
	_, err := Run([]string{"00000000000000000000.log", "00000000000000000000.log"}, Options{MaxBytes: -1, Cwd: dir, SkipRecordMetadata: true, ValueDecoder: f}, &out, &errw)
	var vde *ValueDecoderError
	if !errors.As(err, &vde) || vde.Offset != 2 || f.calls != 2 {
		t.Fatalf("err %v, calls %d", err, f.calls)
	}
	if got := out.String(); !strings.HasSuffix(got, "| key: k payload: v2\n| key: t\n") || strings.Count(got, "Dumping") != 1 {
		t.Errorf("stdout:\n%s", got)
	}
}

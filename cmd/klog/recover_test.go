package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
)

var updateGolden = flag.Bool("update-recover-golden", false, "rewrite cmd/klog/testdata/recover/*.txt from klog's output")

// recoverBatch is a v2 batch of n records at base with a real CRC; mut may
// patch the encoded bytes (the CRC is recomputed after).
func recoverBatch(t *testing.T, base int64, n int, mut func(b []byte)) []byte {
	t.Helper()
	recs := make([]format.Record, n)
	for i := range recs {
		recs[i] = format.Record{Offset: base + int64(i), Timestamp: 1700000000000 + int64(i), Key: []byte("k"), Value: []byte("v")}
	}
	h := &format.Batch{BaseOffset: base, PartitionLeaderEpoch: 1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	format.PrepareBatch(h, recs)
	var c format.Compressor
	b, err := c.AppendBatch(nil, h, recs)
	if err != nil {
		t.Fatal(err)
	}
	if mut != nil {
		mut(b)
		binary.BigEndian.PutUint32(b[17:], format.ChecksumC(b[21:]))
	}
	return b
}

// recoverDir writes a partition directory topic-0 holding one segment at
// base offset 0 (with an empty .index, as a broker leaves it) under the
// current directory.
func recoverDir(t *testing.T, name string, log []byte) string {
	t.Helper()
	dir := filepath.Join(name, "topic-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), log, 0o644)
	os.WriteFile(filepath.Join(dir, "00000000000000000000.index"), nil, 0o644)
	return dir
}

// everyObjectTyped fails when a JSON object lacks "type".
func everyObjectTyped(t *testing.T, v any, where string) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["type"]; !ok {
			t.Errorf("%s: object without \"type\": %v", where, x)
		}
		for k, e := range x {
			everyObjectTyped(t, e, where+"."+k)
		}
	case []any:
		for _, e := range x {
			everyObjectTyped(t, e, where+"[]")
		}
	}
}

func TestRecoverCLI(t *testing.T) {
	t.Chdir(t.TempDir())
	good := recoverBatch(t, 0, 3, nil)
	clean := recoverDir(t, "clean", good)
	torn := recoverDir(t, "torn", append(append([]byte(nil), good...), good[:30]...))
	overflow := recoverDir(t, "overflow", recoverBatch(t, 1<<31, 2, nil))
	refused := recoverDir(t, "refused", recoverBatch(t, 0, 1, func(b []byte) {
		binary.BigEndian.PutUint32(b[57:], 0)          // record count 0
		binary.BigEndian.PutUint32(b[23:], 0xffffffff) // last offset delta -1
	}))
	cases := []struct {
		name   string
		args   []string
		code   int
		golden string
		has    string
	}{
		{"clean", []string{"recover", clean}, ExitOK, "clean.txt", ""},
		{"torn", []string{"recover", torn}, ExitFindings, "torn.txt", ""},
		{"overflow", []string{"recover", overflow}, ExitFindings, "overflow.txt", ""},
		{"refused", []string{"recover", refused}, ExitFindings, "refused.txt", ""},
		{"overflow json", []string{"recover", "--json", overflow}, ExitFindings, "overflow.json", ""},
		{"refused json", []string{"recover", "--json", refused}, ExitFindings, "refused.json", ""},
		{"no dir", []string{"recover", "no-such-dir"}, ExitTrouble, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := klog(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, out, errs)
			}
			if strings.HasSuffix(c.golden, ".json") {
				var v any
				if err := json.Unmarshal([]byte(out), &v); err != nil {
					t.Fatalf("not JSON: %v\n%s", err, out)
				}
				everyObjectTyped(t, v, "plan")
			}
			if c.golden == "" {
				return
			}
			path := filepath.Join(goldenDir(t), c.golden)
			if *updateGolden {
				os.WriteFile(path, []byte(out), 0o644)
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if out != string(want) {
				t.Errorf("output differs from %s:\n%s", path, out)
			}
		})
	}
}

func goldenDir(t *testing.T) string {
	t.Helper()
	wd, _ := os.Getwd()
	_ = wd
	dir, err := filepath.Abs(filepath.Join(testSourceDir, "testdata", "recover"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// testSourceDir is the package directory (tests Chdir away from it).
var testSourceDir, _ = os.Getwd()

func TestRecoverOutput(t *testing.T) {
	t.Chdir(t.TempDir())
	over := recoverBatch(t, 1<<31, 2, nil)
	good := recoverBatch(t, 0, 3, nil)
	split := recoverDir(t, "split", append(append([]byte(nil), good...), over...))
	code, out, errs := klog(t, "recover", "--output", "out-0", split)
	if code != ExitFindings {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	// Kafka leaves the batches under the new base offsets, bytes unchanged.
	for name, want := range map[string][]byte{"00000000000000000000.log": good, "00000000002147483648.log": over} {
		got, err := os.ReadFile(filepath.Join("out-0", name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v, %d bytes, want %d", name, err, len(got), len(want))
		}
	}
	// The recovered copy is what Kafka loads unchanged.
	if code, out, _ := klog(t, "recover", "out-0"); code != ExitOK {
		t.Errorf("recovered copy: exit %d\n%s", code, out)
	}
	if code, out, errs := klog(t, "verify", "out-0"); code != ExitOK {
		t.Errorf("verify of the recovered copy: exit %d\n%s%s", code, out, errs)
	}

	refused := recoverDir(t, "refused", recoverBatch(t, 0, 1, func(b []byte) {
		binary.BigEndian.PutUint32(b[23:], 0xfffffffb) // last offset delta -5
	}))
	code, _, errs = klog(t, "recover", "--output", "out-1", refused)
	if code != ExitFindings || !strings.Contains(errs, "refuse to load") || !strings.Contains(errs, "--salvage") {
		t.Errorf("exit %d, stderr %q: want 1 naming the refusal and --salvage", code, errs)
	}
	if _, err := os.Stat("out-1"); !os.IsNotExist(err) {
		t.Errorf("a refused recovery wrote out-1 (%v)", err)
	}
}

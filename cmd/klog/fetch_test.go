package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixturePartition copies a Kafka-written partition into a log dir.
func fixturePartition(t *testing.T, name string) string {
	t.Helper()
	src := segments(t, "kafka-written", name)
	dst := filepath.Join(t.TempDir(), "orders-0")
	os.MkdirAll(dst, 0o755)
	des, _ := os.ReadDir(src)
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".txt") {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(src, de.Name()))
		os.WriteFile(filepath.Join(dst, de.Name()), b, 0o644)
	}
	return dst
}

func TestFetchCLI(t *testing.T) {
	dir := fixturePartition(t, "v2-transactions")
	code, out, errs := klog(t, "fetch", "--log", dir, "--isolation", "read_committed")
	if code != ExitOK || !strings.Contains(out, "abortedTransactions: [{producerId: 2000") || !strings.Contains(errs, "using the log end offset") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = klog(t, "fetch", "--log", dir, "--json", "--partition-max-bytes", "10", "--min-one-message=false")
	var line struct {
		Request  map[string]any `json:"request"`
		Response struct {
			Truncated          bool  `json:"truncated"`
			RecordsSizeInBytes int64 `json:"recordsSizeBytes"`
		} `json:"response"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &line) != nil || !line.Response.Truncated || line.Response.RecordsSizeInBytes != 10 {
		t.Fatalf("KIP-74 off: exit %d %s", code, out)
	}
	code, _, errs = klog(t, "fetch", "--log", dir, "--offset", "999")
	if code != ExitFindings || !strings.Contains(errs, "OFFSET_OUT_OF_RANGE") {
		t.Errorf("out of range: exit %d %s", code, errs)
	}
	// A consumer group: reads to the end, commits, resumes.
	code, out, errs = klog(t, "fetch", "--log", dir, "--follow", "--group", "g", "--timeout", "300ms")
	if code != ExitOK || !strings.Contains(out, "lag: 0") {
		t.Fatalf("follow: exit %d\n%s\n%s", code, out, errs)
	}
	// The commit is a record of __consumer_offsets, as Kafka writes it.
	logs, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "__consumer_offsets-*", "*.log"))
	if len(logs) != 1 {
		t.Fatalf("__consumer_offsets segments %v, want one", logs)
	}
	code, out, _ = klog(t, "dump", "--offsets-decoder", logs[0])
	if code != ExitOK || !strings.Contains(out, `key: {"type":"1","data":{"group":"g","topic":"orders","partition":0}} payload: {"version":"3","data":{"offset":6,"leaderEpoch":-1,"metadata":""`) {
		t.Errorf("the committed offset: exit %d\n%s", code, out)
	}
	// fetch's old text file is migrated once, then renamed.
	os.WriteFile(filepath.Join(filepath.Dir(dir), "klog-consumer-offsets"), []byte("0\n1\nold orders 0 4\n"), 0o644)
	code, out, _ = klog(t, "fetch", "--log", dir, "--follow", "--group", "old", "--timeout", "300ms")
	if code != ExitOK || !strings.Contains(out, "| offset: 4 ") || strings.Contains(out, "| offset: 3 ") {
		t.Errorf("a group of the old file resumes at 4: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "klog-consumer-offsets.migrated")); err != nil {
		t.Errorf("the old file was not renamed: %v", err)
	}
}

func TestOffsetsCLI(t *testing.T) {
	dir := fixturePartition(t, "v2-baseoffset-sparseindex")
	cases := []struct{ time, want string }{
		{"latest", "orders:0:1234698\n"},
		{"earliest", "orders:0:1234567\n"},
		{"1700000000372", "orders:0:1234680\n"},
	}
	for _, c := range cases {
		code, out, errs := klog(t, "offsets", "--time", c.time, dir)
		if code != ExitOK || out != c.want {
			t.Errorf("--time %s: exit %d %q %s, want %q", c.time, code, out, errs, c.want)
		}
	}
}

func TestDumpMaxBytes(t *testing.T) {
	code, out, _ := klog(t, "dump", "--max-bytes", "200", segments(t, "kafka-written", "v2-none", "00000000000000000000.log"))
	if code != ExitOK || strings.Count(out, "baseOffset:") != 1 || strings.Contains(out, "invalid bytes") {
		t.Errorf("--max-bytes 200: exit %d\n%s", code, out)
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplicateStepTable(t *testing.T) {
	code, out, errs := klog(t, "replicate", "--dir", filepath.Join(t.TempDir(), "c"), "--preload", "7", "--records", "1", "--step")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, row := range []string{
		"Record 7 appended on the leader",
		"A's fetch for offset 7 returns record 7",
		"7 (writing it)",
		"A asks for offset 8, B asks for offset 7",
		"B asks for offset 8",
		"offsets 0 to 7",
		"produce 1: offset 7: answered at tick 3",
	} {
		if !strings.Contains(out, row) {
			t.Errorf("output lacks %q:\n%s", row, out)
		}
	}
}

func TestReplicateJSONAcks0(t *testing.T) {
	code, out, errs := klog(t, "replicate", "--dir", filepath.Join(t.TempDir(), "c"), "--preload", "2", "--records", "1",
		"--acks", "0", "--step", "--json", "--consumer-group", "g")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	apis := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct {
			API      string `json:"requestApiKeyName"`
			Request  map[string]any
			Response any
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not JSON: %s", line)
		}
		apis[r.API]++
		if r.API == "PRODUCE" && r.Response != "" {
			t.Errorf("acks=0 PRODUCE has a response: %v", r.Response)
		}
	}
	if apis["PRODUCE"] != 1 || apis["FETCH"] == 0 || apis["OFFSET_COMMIT"] == 0 {
		t.Errorf("RPCs %v", apis)
	}
}

// TestReplicateRealTime runs the real-time mode with a consumer that
// long-polls on its own goroutine.
func TestReplicateRealTime(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	code, out, errs := klog(t, "replicate", "--dir", dir, "--preload", "2", "--records", "3", "--produce-every", "2",
		"--tick", "5ms", "--consumer-group", "g")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "The reader fetches") || !strings.Contains(out, "produce 3: offset 4: answered") {
		t.Errorf("output:\n%s", out)
	}
	code, _, errs = klog(t, "verify", dir)
	if code != ExitOK {
		t.Errorf("verify after the run: exit %d\n%s", code, errs)
	}
}

// TestReplicateFormat: --format tsv is the moments table as tab-separated
// values under a header, the produce lines as comments; --format json is
// --json; a bad or contradictory format is a usage error.
func TestReplicateFormat(t *testing.T) {
	code, out, errs := klog(t, "replicate", "--dir", filepath.Join(t.TempDir(), "c"), "--preload", "7", "--records", "1", "--step", "--format", "tsv")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "Moment\tLeader log end offset\t") {
		t.Errorf("no TSV header: %q", lines[0])
	}
	if last := lines[len(lines)-1]; last != "# produce 1: offset 7: answered at tick 3" {
		t.Errorf("last line %q, want the produce line as a comment", last)
	}
	for _, l := range lines[1 : len(lines)-1] {
		if strings.Count(l, "\t") != strings.Count(lines[0], "\t") || strings.ContainsAny(l, "│┌") {
			t.Errorf("not a TSV row of the header's width: %q", l)
		}
	}

	_, viaFormat, _ := klog(t, "replicate", "--dir", filepath.Join(t.TempDir(), "c"), "--preload", "2", "--step", "--format", "json")
	_, viaJSON, _ := klog(t, "replicate", "--dir", filepath.Join(t.TempDir(), "c"), "--preload", "2", "--step", "--json")
	if viaFormat != viaJSON || !strings.HasPrefix(viaJSON, "{") {
		t.Errorf("--format json and --json differ:\n%s\n%s", viaFormat, viaJSON)
	}

	for _, args := range [][]string{{"--format", "csv"}, {"--json", "--format", "tsv"}} {
		dir := filepath.Join(t.TempDir(), "c")
		code, _, errs := klog(t, append([]string{"replicate", "--dir", dir, "--step"}, args...)...)
		if code != ExitTrouble || !strings.Contains(errs, "--format") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%v: the cluster directory was created despite the usage error", args)
		}
	}
}

package main

import (
	"encoding/json"
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

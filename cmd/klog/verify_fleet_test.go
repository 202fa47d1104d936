package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"golang.org/x/sys/unix"
)

// copyDir copies the regular files of src into a new directory named like
// src under a temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if !de.Type().IsRegular() || strings.HasSuffix(de.Name(), ".txt") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, de.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestVerifyLiveBrokerFlags runs verify as the README's cron line does,
// twice: the second run reads nothing and says so; the metrics file parses.
func TestVerifyLiveBrokerFlags(t *testing.T) {
	dir := copyDir(t, segments(t, "kafka-written", "unifiedlog-producer", "topic-0"))
	work := t.TempDir()
	state, prom := filepath.Join(work, "verify.state"), filepath.Join(work, "klog.prom")
	args := []string{"verify", "--json", "--jobs", "1", "--rate", "64MiB", "--state", state, "--prometheus", prom, dir}
	for run := 0; run < 2; run++ {
		code, out, errs := klog(t, args...)
		if code != ExitOK {
			t.Fatalf("run %d: exit %d: %s", run, code, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		for _, l := range lines {
			var f struct {
				Path    string `json:"path"`
				Kind    string `json:"fileKind"`
				Skipped bool   `json:"skipped"`
			}
			if err := json.Unmarshal([]byte(l), &f); err != nil {
				t.Fatal(err)
			}
			if f.Kind == "ignored" {
				continue // not a Kafka file (kafka-recovery.json): listed, never read
			}
			if f.Skipped != (run == 1) {
				t.Errorf("run %d: %s skipped=%v", run, f.Path, f.Skipped)
			}
		}
		r, err := os.Open(prom)
		if err != nil {
			t.Fatal(err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		mf := fams["klog_verify_partition_bytes_verified"]
		if mf == nil || len(mf.Metric) != 1 {
			t.Fatalf("run %d: no klog_verify_partition_bytes_verified: %v", run, fams)
		}
		if got := mf.Metric[0].GetGauge().GetValue(); (got == 0) != (run == 1) {
			t.Errorf("run %d: %v bytes verified", run, got)
		}
	}
	// --full reads everything again.
	code, out, _ := klog(t, append([]string{"verify", "--json", "--full"}, args[2:]...)...)
	if code != ExitOK || strings.Contains(out, `"skipped":true`) {
		t.Errorf("--full: exit %d, %s", code, out)
	}
}

// TestVerifyLiveBrokerFindings: findings give exit 1 and still write the
// metrics and state (without the damaged file).
func TestVerifyLiveBrokerFindings(t *testing.T) {
	dir := copyDir(t, segments(t, "kafka-written", "derived-corrupt", "bad-crc-none"))
	work := t.TempDir()
	state, prom := filepath.Join(work, "s"), filepath.Join(work, "m.prom")
	code, _, errs := klog(t, "verify", "--state", state, "--prometheus", prom, dir)
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(prom)
	if err != nil || !strings.Contains(string(data), `kind="crc-mismatch"`) {
		t.Errorf("metrics: %v\n%s", err, data)
	}
	st, _ := os.ReadFile(state)
	if strings.Contains(string(st), ".log\"") {
		t.Errorf("the damaged log is in the state:\n%s", st)
	}
	// A second run checks it again and finds it again.
	if code, _, _ := klog(t, "verify", "--state", state, dir); code != ExitFindings {
		t.Errorf("second run: exit %d", code)
	}
}

func TestVerifyLiveBrokerUsage(t *testing.T) {
	good := segments(t, "kafka-written", "v2-none", "00000000000000000000.log")
	bad := filepath.Join(t.TempDir(), "state")
	os.WriteFile(bad, []byte("not a state\n"), 0o644)
	cases := []struct {
		name      string
		args      []string
		stderrHas string
	}{
		{"bad rate", []string{"verify", "--rate", "fast", good}, "--rate"},
		{"zero rate", []string{"verify", "--rate", "0", good}, "--rate"},
		{"full without state", []string{"verify", "--full", good}, "--full needs --state"},
		{"not a state file", []string{"verify", "--state", bad, good}, "klog verify state"},
		{"metrics in a missing dir", []string{"verify", "--prometheus", filepath.Join(t.TempDir(), "no", "m.prom"), good}, "--prometheus"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := klog(t, c.args...)
			if code != ExitTrouble || !strings.Contains(errs, c.stderrHas) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, c.stderrHas)
			}
		})
	}
}

func TestParseBytes(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"200MiB", 200 << 20, true},
		{"200MiB/s", 200 << 20, true},
		{"50MB", 50e6, true},
		{"1.5GiB", 3 << 29, true},
		{"64k", 64 << 10, true},
		{"1048576", 1 << 20, true},
		{"10 MiB", 10 << 20, true},
		{"fast", 0, false},
		{"MiB", 0, false},
		{"-1MiB", 0, false},
		{"1PiB", 0, false},
		{"", 0, false},
	}
	for _, c := range cases {
		got, err := parseBytes(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

// TestVerifyOutputsNeverReplaceSpecialFiles: --state and --prometheus
// naming a FIFO, a character device or a symlink are refused before
// anything is read (exit 2), and the file stays what it was; a user's
// FILE.tmp beside them is never touched. Before, the temporary file was
// renamed over them (this replaced a machine's /dev/full), FILE.tmp was
// deleted first, and --state on a FIFO waited forever.
func TestVerifyOutputsNeverReplaceSpecialFiles(t *testing.T) {
	part := segments(t, "kafka-written", "v2-none")
	for _, kind := range []string{"fifo", "char device", "symlink"} {
		for _, flag := range []string{"--state", "--prometheus"} {
			t.Run(kind+" "+flag, func(t *testing.T) {
				dir := t.TempDir()
				p := filepath.Join(dir, "out.prom")
				var err error
				switch kind {
				case "fifo":
					err = unix.Mkfifo(p, 0o644)
				case "char device":
					err = unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
				case "symlink":
					os.WriteFile(p+"-target", []byte("keep"), 0o644)
					err = os.Symlink(p+"-target", p)
				}
				if err != nil {
					t.Skipf("cannot make a %s here: %v", kind, err)
				}
				os.WriteFile(p+".tmp", []byte("mine"), 0o644)
				before, _ := os.Lstat(p)
				done := make(chan int, 1)
				var errs string
				go func() {
					code, _, e := klog(t, "verify", flag, p, part)
					errs = e
					done <- code
				}()
				select {
				case code := <-done:
					if code != ExitTrouble {
						t.Errorf("exit %d, want 2: %s", code, errs)
					}
				case <-time.After(20 * time.Second):
					t.Fatalf("verify %s on a %s did not return (it waits on the file)", flag, kind)
				}
				if st, err := os.Lstat(p); err != nil || st.Mode().Type() != before.Mode().Type() {
					t.Errorf("the %s was replaced: %v, %v", kind, st.Mode(), err)
				}
				if b, _ := os.ReadFile(p + ".tmp"); string(b) != "mine" {
					t.Errorf("FILE.tmp is now %q", b)
				}
			})
		}
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func segments(t *testing.T, parts ...string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(append([]string{"../../testdata/segments"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func klog(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errw bytes.Buffer
	code = run(context.Background(), append([]string{"klog"}, args...), strings.NewReader(""), &out, &errw)
	return code, out.String(), errw.String()
}

func TestExitCodes(t *testing.T) {
	good := segments(t, "kafka-written", "v2-none", "00000000000000000000.log")
	corrupt := segments(t, "kafka-written", "derived-corrupt")
	cases := []struct {
		name       string
		args       []string
		code       int
		stdoutHas  string
		stderrHas  string
		stdoutNone bool
	}{
		{"clean", []string{"dump", good}, ExitOK, "isvalid: true", "", false},
		{"clean files flag", []string{"dump", "--files", good, "--print-data-log"}, ExitOK, "payload:", "", false},
		{"bad crc", []string{"dump", filepath.Join(corrupt, "bad-crc-none", "00000000000000000000.log")}, ExitFindings, "isvalid: false", "", false},
		{"truncated tail", []string{"dump", filepath.Join(corrupt, "truncated-tail", "00000000000000000000.log")}, ExitFindings, "invalid bytes at the end", "", false},
		{"garbage", []string{"dump", filepath.Join(corrupt, "garbage-log", "00000000000000000000.log")}, ExitFindings, "Found 128 invalid bytes", "", false},
		{"empty log", []string{"dump", filepath.Join(corrupt, "empty-files", "00000000000000000000.log")}, ExitOK, "Log starting offset: 0", "", false},
		{"zstd record structure dies like Kafka", []string{"dump", "--deep-iteration", segments(t, "licensed", "_derived-segments", "v0_recordbatch_zstd.json.batch.bin", "00000000000000000000.log")}, ExitFindings, "isvalid: true", "position 61", false},
		{"missing file", []string{"dump", filepath.Join(t.TempDir(), "00000000000000000000.log")}, ExitTrouble, "Dumping", "no such file", false},
		{"no files", []string{"dump"}, ExitTrouble, "", "no files given", true},
		{"flag after file", []string{"dump", good, "--deep-iteration"}, ExitOK, "| offset: 0", "", false},
		{"unknown flag", []string{"dump", "--no-such-flag", good}, ExitTrouble, "", "no-such-flag", false},
		{"unknown file kind", []string{"dump", segments(t, "kafka-written", "v2-none", "00000000000000000000.log.dump.txt")}, ExitTrouble, "Dumping", "Ignoring unknown file", false},
		{"partition.metadata", []string{"dump", segments(t, "kafka-written", "unifiedlog-producer", "topic-0", "partition.metadata")}, ExitOK, "topicId: AAAAAAAAAAAAAAAAAAAAAQ", "", false},
		{"version", []string{"--version"}, ExitOK, "klog version", "", false},
		{"help", []string{"dump", "--help"}, ExitOK, "kafka-dump-log", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := klog(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, clip(out), errs)
			}
			if c.stdoutHas != "" && !strings.Contains(out, c.stdoutHas) {
				t.Errorf("stdout lacks %q:\n%s", c.stdoutHas, clip(out))
			}
			if c.stderrHas != "" && !strings.Contains(errs, c.stderrHas) {
				t.Errorf("stderr lacks %q:\n%s", c.stderrHas, errs)
			}
			if c.stdoutNone && out != "" {
				t.Errorf("unexpected stdout: %s", clip(out))
			}
		})
	}
}

func TestDumpMatchesOracleThroughCLI(t *testing.T) {
	dir := segments(t, "kafka-written", "unifiedlog-producer", "topic-0")
	t.Chdir(dir)
	code, out, errs := klog(t, "dump", "--deep-iteration", "--files", "00000000000000000016.log")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want, _ := os.ReadFile("00000000000000000016.log.deep.txt")
	wantErr, _ := os.ReadFile("00000000000000000016.log.deep.stderr.txt")
	if out != string(want) {
		t.Errorf("stdout differs")
	}
	if errs != strings.ReplaceAll(string(wantErr), "{DIR}", dir) {
		t.Errorf("stderr = %q, want %q", errs, wantErr)
	}
}

func TestDumpJSONFlag(t *testing.T) {
	code, out, _ := klog(t, "dump", "--json", "--print-data-log", segments(t, "kafka-written", "v2-zstd", "00000000000000000000.log"))
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{`"type":"file"`, `"type":"batch"`, `"type":"record"`, `"compression":"zstd"`, `"type":"summary"`} {
		if !strings.Contains(out, want) {
			t.Errorf("JSON output lacks %s", want)
		}
	}
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

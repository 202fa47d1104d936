package dump

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The oracle: next to each fixture F under testdata/segments, the real output
// of Kafka 4.3.1's kafka-dump-log.sh run in F's folder as --files F
// (testdata/segments/FIXTURES-README.md). These files are never written by
// klog: there is deliberately no -update flag here.
var oracleModes = []struct {
	suffix string
	opts   Options
}{
	{"dump", Options{MaxBytes: -1}},
	{"deep", Options{MaxBytes: -1, Deep: true}},
	{"data", Options{MaxBytes: -1, PrintData: true}},
	{"skip", Options{MaxBytes: -1, PrintData: true, SkipRecordMetadata: true}},
}

func segmentsDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs("../testdata/segments")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestGoldenKafkaDumpLog(t *testing.T) {
	t.Parallel()
	root := segmentsDir(t)
	checked := 0
	err := filepath.WalkDir(root, func(path string, de os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := de.Name()
		if de.IsDir() || !(strings.HasSuffix(name, ".log") || strings.HasSuffix(name, ".checkpoint")) {
			return nil
		}
		dir := filepath.Dir(path)
		for _, m := range oracleModes {
			want, err := os.ReadFile(path + "." + m.suffix + ".txt")
			if err != nil {
				continue
			}
			checked++
			rel, _ := filepath.Rel(root, path)
			t.Run(rel+"/"+m.suffix, func(t *testing.T) {
				t.Parallel()
				wantErr, _ := os.ReadFile(path + "." + m.suffix + ".stderr.txt")
				wantErr = bytes.ReplaceAll(wantErr, []byte("{DIR}"), []byte(dir))
				_, kafkaDied := os.Stat(path + "." + m.suffix + ".exitcode.txt")
				opts := m.opts
				opts.Cwd = dir
				var stdout, stderr bytes.Buffer
				_, err := Run([]string{name}, opts, &stdout, &stderr)
				if !bytes.Equal(stdout.Bytes(), want) {
					t.Errorf("stdout differs from kafka-dump-log:\n%s", lineDiff(want, stdout.Bytes()))
				}
				if kafkaDied == nil {
					// Kafka threw: klog must stop at the same place and
					// report a fatal problem instead of a stack trace.
					var fe *FatalError
					if !errors.As(err, &fe) {
						t.Errorf("Kafka died on this file; klog returned %v, want a *FatalError", err)
					}
					return
				}
				if err != nil {
					t.Errorf("unexpected error: %v", err)
				}
				if !bytes.Equal(stderr.Bytes(), wantErr) {
					t.Errorf("stderr differs from kafka-dump-log:\n%s", lineDiff(wantErr, stderr.Bytes()))
				}
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 200 {
		t.Fatalf("only %d oracle outputs found under %s; fixtures missing?", checked, root)
	}
}

// lineDiff shows the first differing line of two outputs.
func lineDiff(want, got []byte) string {
	wl := strings.Split(string(want), "\n")
	gl := strings.Split(string(got), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + clip(w) + "\n  got:  " + clip(g)
		}
	}
	return "(identical lines, different bytes)"
}

func clip(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

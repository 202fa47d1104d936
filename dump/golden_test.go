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
	{"verify", Options{MaxBytes: -1, VerifyIndexOnly: true}},
	{"sanity", Options{MaxBytes: -1, IndexSanityOnly: true}},
	// Options.Decoder is picked from the fixture's folder: fixtureDecoder
	// (decoder_test.go).
	{"decoder", Options{MaxBytes: -1}},
	{"decoder-skip", Options{MaxBytes: -1, SkipRecordMetadata: true}},
}

// dumpedSuffixes are the files kafka-dump-log prints.
var dumpedSuffixes = []string{".log", ".checkpoint", ".index", ".timeindex", ".snapshot", ".txnindex"}

// oracleTakenOnOtherBytes lists oracle outputs that were captured on a file
// other than the one stored beside them: Kafka's tool trims an odd-sized
// .index when it opens it, and the stored copy is the trimmed one. Each has
// its own test that rebuilds the original bytes.
var oracleTakenOnOtherBytes = map[string]string{
	"kafka-written/derived-corrupt/index-odd-size/00000000000000000000.index/sanity": "captured on the 27-byte original; see TestGoldenOddSizedIndexSanity",
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
		if de.IsDir() || !hasAnySuffix(name, dumpedSuffixes) {
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
			if _, skip := oracleTakenOnOtherBytes[rel+"/"+m.suffix]; skip {
				continue
			}
			t.Run(rel+"/"+m.suffix, func(t *testing.T) {
				t.Parallel()
				wantErr, _ := os.ReadFile(path + "." + m.suffix + ".stderr.txt")
				wantErr = bytes.ReplaceAll(wantErr, []byte("{DIR}"), []byte(dir))
				_, kafkaDied := os.Stat(path + "." + m.suffix + ".exitcode.txt")
				opts := m.opts
				opts.Cwd = dir
				if strings.HasPrefix(m.suffix, "decoder") {
					opts.Decoder = fixtureDecoder(dir, name)
				}
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
	if checked < 600 {
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

func hasAnySuffix(s string, suffixes []string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

func TestGoldenOddSizedIndexSanity(t *testing.T) {
	t.Parallel()
	src := filepath.Join(segmentsDir(t), "kafka-written", "derived-corrupt", "index-odd-size")
	dir := t.TempDir()
	for _, n := range []string{"00000000000000000000.log", "00000000000000000000.index"} {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(n, ".index") {
			b = append(b, 0, 0, 0) // the 3 extra bytes the oracle saw (27 bytes)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := os.ReadFile(filepath.Join(src, "00000000000000000000.index.sanity.txt"))
	var stdout, stderr bytes.Buffer
	_, err := Run([]string{"00000000000000000000.index"}, Options{MaxBytes: -1, IndexSanityOnly: true, Cwd: dir}, &stdout, &stderr)
	if !bytes.Equal(stdout.Bytes(), want) {
		t.Errorf("stdout:\n%s", lineDiff(want, stdout.Bytes()))
	}
	var fe *FatalError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "found 27 bytes which is neither positive nor a multiple of 8") {
		t.Errorf("err = %v, want Kafka's CorruptIndexException message", err)
	}
}

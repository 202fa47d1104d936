package main

import (
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/klog-dev/klog/internal/jsoncontract"

	"github.com/klog-dev/klog/replicate"
)

// golden compares got with testdata/forensics/name; KLOG_UPDATE_GOLDEN=1
// rewrites it (klog's own output only, never a Kafka oracle).
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "forensics", name)
	if os.Getenv("KLOG_UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// treeHash hashes every file's name and bytes under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	var names []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	sort.Strings(names)
	for _, n := range names {
		b, _ := os.ReadFile(n)
		h.Write([]byte(n))
		h.Write(b)
	}
	return string(h.Sum(nil))
}

// crashCluster runs replicate's unclean-election scenario: broker 1 leads,
// takes an acks=1 batch only it holds, crashes; broker 2 leads at epoch 1
// and takes another batch. Returns the three partition directories.
func crashCluster(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	c, err := replicate.New(replicate.Config{Dir: dir, Topic: "orders", Brokers: []int32{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Preload(4); err != nil {
		t.Fatal(err)
	}
	c.Produce([][]byte{[]byte("acked-by-one"), []byte("acked-by-one-too")}, replicate.AcksLeader)
	if _, err := c.CrashLeader(); err != nil {
		t.Fatal(err)
	}
	c.Produce([][]byte{[]byte("after-election")}, replicate.AcksLeader)
	for i := 0; i < 3; i++ {
		c.Step()
	}
	var dirs []string
	for _, b := range c.Brokers() {
		dirs = append(dirs, b.Dir)
	}
	return dirs
}

func TestForensicsCommands(t *testing.T) {
	t.Setenv("COLUMNS", "")
	producer := segments(t, "kafka-written", "unifiedlog-producer", "topic-0")
	dirs := crashCluster(t)
	agree := []string{producer, copyPartition(t, producer)}
	behind := t.TempDir()
	redactOut := filepath.Join(t.TempDir(), "out")
	cases := []struct {
		name      string
		args      []string
		code      int
		stdoutHas string
		stderrHas string
	}{
		{"retention nothing due", []string{"retention", "--now", "1700001000048", producer}, ExitOK, "deletable now: 0 segments", ""},
		{"retention by time", []string{"retention", "--now", "1700087400048", "--retention-ms", "86400016", producer}, ExitOK, "delete: retention.ms", ""},
		{"retention future timestamps", []string{"retention", "--now", "1600000000000", producer}, ExitFindings, "KAFKA-20609", ""},
		{"retention future timestamps, no time limit", []string{"retention", "--now", "1600000000000", "--retention-ms", "-1", producer}, ExitOK, "kept: no-limit", ""},
		{"retention config file", []string{"retention", "--now", "1700001000048", "--config", writeTemp(t, "retention.bytes=1200\n"), producer}, ExitOK, "delete: retention.bytes", ""},
		{"retention bad config", []string{"retention", "--config", writeTemp(t, "retention.ms=x\n"), producer}, ExitTrouble, "", "not a number"},
		{"retention tsv", []string{"retention", "--format", "tsv", "--now", "1700001000048", producer}, ExitOK, "segment\tnext offset\tbytes", ""},
		{"retention json and tsv", []string{"retention", "--json", "--format", "tsv", producer}, ExitTrouble, "", "exclude each other"},
		{"diff tsv", append([]string{"diff", "--format", "tsv"}, dirs...), ExitFindings, "replica\tstate\tlog start", ""},
		{"retention two dirs", []string{"retention", producer, producer}, ExitTrouble, "", "exactly one"},
		{"retention not a partition", []string{"retention", t.TempDir() + "/x"}, ExitTrouble, "", "not a partition directory"},
		{"retention bad now", []string{"retention", "--now", "yesterday", producer}, ExitTrouble, "", "--now"},
		{"diff identical", append([]string{"diff"}, agree...), ExitOK, "identical", ""},
		{"diff unclean election", append([]string{"diff", "--leader", dirs[1]}, dirs...), ExitFindings, "DIVERGED", ""},
		{"diff records", append([]string{"diff", "--records", "--leader", dirs[1]}, dirs...), ExitFindings, `value "acked-by-one-too"`, ""},
		{"diff one dir", []string{"diff", producer}, ExitTrouble, "", "at least two"},
		{"diff unknown leader", []string{"diff", "--leader", behind, producer, producer}, ExitTrouble, "", "not one of the DIR"},
		{"redact", []string{"redact", "--output", redactOut, producer}, ExitOK, "redacted", "left out"},
		{"redact into a non-empty dir", []string{"redact", "--output", redactOut, producer}, ExitTrouble, "", "not empty"},
		{"redact corrupt source", []string{"redact", "--output", filepath.Join(t.TempDir(), "o"), segments(t, "generated", "corrupt-crc-flipped")}, ExitFindings, "1 batches with a wrong CRC", ""},
		{"redact no output", []string{"redact", producer}, ExitTrouble, "", "--output"},
		{"redact bad mode", []string{"redact", "--mode", "blur", "--output", filepath.Join(t.TempDir(), "o"), producer}, ExitTrouble, "", "--mode"},
		{"stats what-if", []string{"stats", "--what-if", "zstd,lz4,gzip,snappy,none", producer}, ExitOK, "what if:", ""},
		{"stats what-if bad codec", []string{"stats", "--what-if", "brotli", producer}, ExitTrouble, "", "unknown codec"},
		{"stats sample without what-if", []string{"stats", "--sample", "0.5", producer}, ExitTrouble, "", "--sample needs --what-if"},
		{"stats bad sample", []string{"stats", "--what-if", "zstd", "--sample", "2", producer}, ExitTrouble, "", "--sample"},
	}
	before := treeHash(t, producer) + treeHash(t, filepath.Dir(filepath.Dir(dirs[0])))
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
		})
	}
	if after := treeHash(t, producer) + treeHash(t, filepath.Dir(filepath.Dir(dirs[0]))); after != before {
		t.Error("a read-only command changed the input")
	}
}

var squeeze = regexp.MustCompile(`( {2,}|─{2,})`)

func writeTemp(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.properties")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestForensicsGolden pins klog's own output of retention and diff (text
// and JSON) and checks that every JSON object has a "type".
func TestForensicsGolden(t *testing.T) {
	t.Setenv("COLUMNS", "")
	producer := segments(t, "kafka-written", "unifiedlog-producer", "topic-0")
	dirs := crashCluster(t)
	root := filepath.Dir(filepath.Dir(dirs[0]))
	cases := []struct {
		name string
		args []string
	}{
		{"retention.txt", []string{"retention", "--now", "1700087400048", "--retention-ms", "86400016", "--high-watermark", "49", producer}},
		{"retention.json", []string{"retention", "--json", "--now", "1700087400048", "--retention-ms", "86400016", "--high-watermark", "49", producer}},
		{"retention-compact.txt", []string{"retention", "--cleanup-policy", "compact,delete", "--now", "1700001000048", "--high-watermark", "49", producer}},
		{"diff.txt", append([]string{"diff"}, dirs...)},
		{"diff.json", append([]string{"diff", "--json"}, dirs...)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, out, errs := klog(t, c.args...)
			if errs != "" {
				t.Fatalf("stderr: %s", errs)
			}
			out = strings.ReplaceAll(out, root, "$CLUSTER")
			out = strings.ReplaceAll(out, producer, "$PRODUCER")
			// Table widths follow the temporary path's length.
			out = squeeze.ReplaceAllStringFunc(out, func(s string) string { return s[:len(string([]rune(s)[0]))] })
			golden(t, c.name, out)
			if strings.HasSuffix(c.name, ".json") {
				for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
					var m map[string]any
					if err := json.Unmarshal([]byte(line), &m); err != nil {
						t.Fatalf("%v: %s", err, line)
					}
					if _, ok := m["type"].(string); !ok {
						t.Errorf("no type: %s", line)
					}
				}
			}
		})
	}
}

// TestForensicsJSONSchema checks every --json object of the four commands
// against klog's one JSON Schema (ndjson/schema.json: every field
// documented, typed, and a "type" on every object), with a maintained
// validator.
func TestForensicsJSONSchema(t *testing.T) {
	producer := segments(t, "kafka-written", "unifiedlog-producer", "topic-0")
	dirs := crashCluster(t)
	runs := [][]string{
		{"retention", "--json", "--now", "1700087400048", "--retention-ms", "86400016", producer},
		{"retention", "--json", "--cleanup-policy", "compact,delete", "--now", "1600000000000", producer},
		append([]string{"diff", "--json"}, dirs...),
		append([]string{"diff", "--json", "--records"}, dirs...),
		{"redact", "--json", "--output", filepath.Join(t.TempDir(), "o"), producer},
	}
	for _, args := range runs {
		_, out, _ := klog(t, args...)
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if err := jsoncontract.Line([]byte(line)); err != nil {
				t.Errorf("%s: %v", args[0], err)
			}
		}
	}
	// stats --what-if: the second object.
	_, out, _ := klog(t, "stats", "--json", "--what-if", "zstd,none", producer)
	objs, err := jsoncontract.Lines(out)
	if err != nil {
		t.Errorf("stats --what-if: %v", err)
	}
	if len(objs) != 2 || objs[1]["type"] != "whatif" {
		t.Errorf("stats --what-if printed %d objects", len(objs))
	}
}

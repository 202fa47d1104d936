package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
)

// TestTablesFit: every table view, on real fixtures, at 60, 80, 120 and
// 200 columns ($COLUMNS): no table line is wider than the terminal, and
// the cells that carry each view's answer are still there (a byte count's
// number, a date, a verdict, a path's file name) at every width.
func TestTablesFit(t *testing.T) {
	p := segments(t, "kafka-written", "unifiedlog-producer", "topic-0")
	behind := filepath.Join(t.TempDir(), "topic-0")
	copyFixtureDir(t, p, behind, "00000000000000000032.")
	tiered := filepath.Join("..", "..", "tiered", "testdata", "kafka-written", "local-tiered")
	views := []struct {
		name string
		args []string
		keep []string // regexps every width must show
	}{
		{"segments", []string{"segments", p}, []string{`│ 0 +│ 15 +│`, `│ 1121\b`, `2023-11`}},
		{"stats", []string{"stats", p}, []string{`│ files +│ 3 `, `│ none +│`, `3419`}},
		{"stats what-if", []string{"stats", "--what-if", "zstd,lz4", "--sample", "1", p}, []string{`│ zstd +│ \d+`, `│ lz4 +│`}},
		{"retention", []string{"retention", p, "--now", "1700087400048", "--retention-ms", "86400016", "--high-watermark", "49"},
			[]string{`│ delete: +│|│ delete: retention\.ms`, `│ 1121\b`, `2023-11-15`}},
		{"find", []string{"find", "--offset", "20", p}, []string{`00000000000000000016\.log`, `offset 20`}},
		{"diff", []string{"diff", p, behind}, []string{`│ \S*topic-0`, `│ (behind|leader)`}},
		{"replicate", []string{"replicate", "--dir", "TMP", "--preload", "2", "--records", "1", "--step"},
			[]string{`│ Record 2 `, `0 to 2|│ to 2 `}},
		{"ls", []string{"ls", filepath.Dir(p)}, []string{`│ topic +│ 0 +│`, `│ 49 +│`}},
		{"tail table", []string{"tail", "--table", "--from-beginning", "--timeout", "300ms", p}, []string{`│ topic-0`, `│ 49\b`}},
		{"tiered ls", []string{"tiered", "ls", "--remote", filepath.Join(tiered, "remote"), "--log-dir", filepath.Join(tiered, "broker-logdir")},
			[]string{`│ COPY_SEGMENT_FINISHED`, `│ 8 +│ 13 `}},
		{"tiered retention", []string{"tiered", "retention", "--remote", filepath.Join(tiered, "remote"), "--log-dir", filepath.Join(tiered, "broker-logdir"),
			"--topic", "orders", "--partition", "0", "--now", "2023-11-20T00:00:00Z"}, []string{`│ kept`, `│ 2023-11-21`, `│ 14 +│ 21 `}},
	}
	for _, v := range views {
		for _, width := range []int{60, 80, 120, 200} {
			t.Run(v.name+"/"+strconv.Itoa(width), func(t *testing.T) {
				t.Setenv("COLUMNS", strconv.Itoa(width))
				args := append([]string(nil), v.args...)
				for i, a := range args {
					if a == "TMP" {
						args[i] = filepath.Join(t.TempDir(), "r")
					}
				}
				code, out, errs := klog(t, args...)
				if code == ExitTrouble {
					t.Fatalf("exit %d: %s", code, errs)
				}
				tables := 0
				for _, l := range strings.Split(out, "\n") {
					if !strings.ContainsAny(l, "│┌└├") {
						continue
					}
					tables++
					if w := runewidth.StringWidth(l); w > width {
						t.Errorf("a %d-column line at width %d:\n%s", w, width, l)
					}
				}
				if tables == 0 {
					t.Fatalf("no table:\n%s%s", out, errs)
				}
				for _, k := range v.keep {
					if !regexp.MustCompile(k).MatchString(out) {
						t.Errorf("%q is gone at width %d:\n%s", k, width, out)
					}
				}
			})
		}
	}
}

// copyFixtureDir copies a fixture partition's Kafka files (not the oracle
// outputs beside them), skipping names with the given prefixes.
func copyFixtureDir(t *testing.T, src, dst string, skip ...string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
next:
	for _, de := range des {
		n := de.Name()
		if de.IsDir() || strings.HasSuffix(n, ".txt") || strings.HasSuffix(n, ".json") {
			continue
		}
		for _, s := range skip {
			if strings.HasPrefix(n, s) {
				continue next
			}
		}
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

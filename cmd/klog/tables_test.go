package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/mattn/go-runewidth"
)

// TestTablesFit: every table view, on real fixtures, at 60, 80, 120 and
// 200 columns ($COLUMNS): no table line is wider than the terminal, and
// the cells that carry each view's answer are still there (a byte count's
// number, a date, a verdict, a path's file name) at every width.
func TestTablesFit(t *testing.T) {
	p := segments(t, "kafka-written", "unifiedlog-producer", "topic-0")
	behind := filepath.Join(t.TempDir(), "topic-0")
	klogtest.CopyPartition(t, p, behind, "00000000000000000032.")
	tiered := filepath.Join(tieredFixtures, "local-tiered")
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

// TestKafkaToolTablesFit: groups and transactions print the Kafka tools'
// tables (kafka-consumer-groups --describe, kafka-transactions describe
// and find-hanging) from real broker files at 60, 80, 120 and 200 columns:
// no table line is wider than the terminal, the cells that carry the
// answer are still there, and a table that fits in the tool's own layout
// is printed exactly as without a width (Kafka's column names and
// widths).
func TestKafkaToolTablesFit(t *testing.T) {
	coord := segments(t, "kafka-written", "coordinator")
	open := segments(t, "kafka-written", "unifiedlog-producer", "topic-0")
	now := "2023-11-20T00:00:00Z"
	// prose: the lines around the tables (notes, titles, statistics).
	prose := regexp.MustCompile(`^$|^(Warning: )?Consumer group '|^\d+ transactional ids|^\d+ open transactions|^In the data|^In __transaction_state|^  \S+ producer \d+:`)
	views := []struct {
		name string
		args []string
		keep []string
	}{
		{"groups", []string{"groups", coord}, []string{`group-1 +orders +0 +42 `, `member-1`}},
		{"groups verbose", []string{"groups", "--verbose", coord}, []string{`group-1 +orders +0 +42 `, `2023-11-14`}},
		{"groups state", []string{"groups", "--state", coord}, []string{`group-1 +__consumer_offsets-49`, ` Stable `}},
		{"groups members", []string{"groups", "--members", "--verbose", coord}, []string{`group-1 +member-1 `, `orders\(0\)`}},
		{"groups list", []string{"groups", "--list", coord}, []string{`cg-new +consumer +Empty`}},
		{"groups deleted", []string{"groups", "--deleted", coord}, []string{`old +t +2 +- +deleted \(tombstone 4\)`, `2023-11-14`}},
		{"transactions", []string{"transactions", "--now", now, coord}, []string{`tx-1\s+1000\s+3\s+CompleteCommit`}},
		{"transactions open", []string{"transactions", "--now", now, "--max-transaction-timeout", "0", open}, []string{`topic\s+0\s+5000\s`, `unknown`}},
		{"transactions find-hanging", []string{"transactions", "--now", now, "--find-hanging", open}, []string{`Topic\s+Part`}},
	}
	for _, v := range views {
		t.Setenv("COLUMNS", "")
		code, whole, errs := klog(t, v.args...)
		if code == ExitTrouble {
			t.Fatalf("%s: exit %d: %s", v.name, code, errs)
		}
		for _, width := range []int{60, 80, 120, 200} {
			t.Run(v.name+"/"+strconv.Itoa(width), func(t *testing.T) {
				t.Setenv("COLUMNS", strconv.Itoa(width))
				_, out, _ := klog(t, v.args...)
				tables, wholeFits := 0, true
				for _, l := range strings.Split(whole, "\n") {
					if !prose.MatchString(l) && dump.LineWidth(l) > width {
						wholeFits = false
					}
				}
				for _, l := range strings.Split(out, "\n") {
					if prose.MatchString(l) {
						continue
					}
					tables++
					if w := dump.LineWidth(l); w > width {
						t.Errorf("a %d-column table line at width %d:\n%s", w, width, l)
					}
				}
				if tables == 0 {
					t.Fatalf("no table:\n%s", out)
				}
				if wholeFits && out != whole {
					t.Errorf("the tool's layout fits %d columns, but it was changed:\n%s\nwant:\n%s", width, out, whole)
				}
				for _, k := range v.keep {
					if !regexp.MustCompile(`(?m)` + k).MatchString(out) {
						t.Errorf("%q is gone at width %d:\n%s", k, width, out)
					}
				}
			})
		}
	}
}

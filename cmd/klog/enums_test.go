package main

import (
	"io"
	"strings"
	"testing"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/ndjson"
)

// TestEnumFlagsSuggest: a misspelt value of any closed-list flag of any
// command is a usage error naming the values, with a "did you mean" for the
// value it is close to; the command does not run.
func TestEnumFlagsSuggest(t *testing.T) {
	app := newApp(nil, io.Discard, io.Discard)
	checked := map[string]bool{}
	for _, cmd := range app.Commands {
		for _, f := range cmd.Flags {
			names, ok := enumFlags[f]
			if !ok {
				continue
			}
			for _, want := range names {
				if len(want) < 4 {
					continue
				}
				typo := want[:len(want)-1] + "#"
				code, _, errs := klog(t, cmd.Name, "--"+f.Names()[0], typo, "/nonexistent")
				if code != ExitTrouble || !strings.Contains(errs, "(did you mean "+want+"?)") || !strings.Contains(errs, "--"+f.Names()[0]) {
					t.Errorf("%s --%s %s: exit %d, %q", cmd.Name, f.Names()[0], typo, code, errs)
				}
				checked[f.Names()[0]] = true
			}
		}
	}
	for f := range enumFlags {
		if !checked[f.Names()[0]] && f != prodAcksFlag && f != replAcksFlag {
			t.Errorf("--%s is in enumFlags but no command was checked", f.Names()[0])
		}
	}
}

// TestEnumFlagsParse: every value enumFlags lets through is one the flag's
// parser accepts.
func TestEnumFlagsParse(t *testing.T) {
	parsers := map[string]func(string) error{
		"isolation":    func(s string) error { _, err := parseIsolation(s); return err },
		"key-encoding": func(s string) error { _, err := ndjson.ParseEncoding(s); return err },
		"reset":        func(s string) error { _, err := fetch.ParseOffsetReset(s); return err },
		"compression": func(s string) error {
			if _, ok := format.ParseCompression(s); !ok {
				return errString("unknown codec " + s)
			}
			return nil
		},
		"timestamp-type": func(s string) error { _, err := format.ParseTimestampType(s); return err },
	}
	parsers["value-encoding"] = parsers["key-encoding"]
	for f, vals := range enumFlags {
		p, ok := parsers[f.Names()[0]]
		if !ok {
			continue // produce's own checks: testdata/script/produce.txtar
		}
		for _, v := range vals {
			if err := p(v); err != nil {
				t.Errorf("--%s %q passes the check but its parser refuses it: %v", f.Names()[0], v, err)
			}
		}
	}
}

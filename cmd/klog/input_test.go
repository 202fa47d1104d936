package main

import (
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/ndjson"
)

func TestParseTime(t *testing.T) {
	fixed := time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC)
	defer func(f func() time.Time) { now = f }(now)
	now = func() time.Time { return fixed }
	ms := fixed.UnixMilli()
	cases := []struct {
		in   string
		want int64
		err  string
	}{
		{"1700000000000", 1700000000000, ""},
		{"0", 0, ""},
		{"2023-11-14T22:13:20Z", ms, ""},
		{"2023-11-14T22:13:20.5Z", ms + 500, ""},
		{"2023-11-15T00:13:20+02:00", ms, ""},
		{"-1h", ms - 3600_000, ""},
		{"-90m", ms - 90*60_000, ""},
		{"-1h30m", ms - 90*60_000, ""},
		{"-2d", ms - 2*86400_000, ""},
		{"-0s", ms, ""},
		{"-1", 0, "must not be negative"},
		{"-1x", 0, "duration before now"},
		{"-100000d", 0, "before 1970"},
		{"-2000000d", 0, "duration before now"},
		{"-600000h", 0, "before 1970"},
		{"1969-12-31T23:59:59Z", 0, "before 1970"},
		{"yesterday", 0, "RFC 3339"},
		{"", 0, "RFC 3339"},
	}
	for _, c := range cases {
		got, err := parseTime(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("parseTime(%q) = %d, %v; want an error with %q", c.in, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("parseTime(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestParseOffset(t *testing.T) {
	cases := []struct {
		in          string
		start, end  int64
		want        int64
		errContains string
	}{
		{"0", 10, 100, 0, ""},
		{"42", 10, 100, 42, ""},
		{"earliest", 10, 100, 10, ""},
		{"latest", 10, 100, 100, ""},
		{"-1", 10, 100, 99, ""},
		{"-90", 10, 100, 10, ""},
		{"-1000", 10, 100, 10, ""},
		{"-5", 0, 0, 0, ""},
		{"-9223372036854775808", 0, 0, 0, "out of range"},
		{"first", 0, 0, 0, "earliest or latest"},
		{"1.5", 0, 0, 0, "earliest or latest"},
		{"", 0, 0, 0, "earliest or latest"},
		{"beginning", 10, 100, 10, ""},
		{"end", 10, 100, 100, ""},
		{"begining", 0, 0, 0, "(did you mean beginning?)"},
		{"lastest", 0, 0, 0, "(did you mean latest?)"},
	}
	for _, c := range cases {
		o, err := parseOffset(c.in)
		if c.errContains != "" {
			if err == nil || !strings.Contains(err.Error(), c.errContains) {
				t.Errorf("parseOffset(%q): err %v, want %q", c.in, err, c.errContains)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseOffset(%q): %v", c.in, err)
			continue
		}
		if got := o.resolve(c.start, c.end); got != c.want {
			t.Errorf("parseOffset(%q).resolve(%d, %d) = %d, want %d", c.in, c.start, c.end, got, c.want)
		}
		if canonical := map[string]string{"beginning": "earliest", "end": "latest"}[c.in]; o.String() != c.in && o.String() != canonical {
			t.Errorf("parseOffset(%q).String() = %q", c.in, o.String())
		}
	}
}

func TestParseIsolation(t *testing.T) {
	for _, s := range isolationNames {
		if _, err := parseIsolation(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"committed", "READ_COMMITTED", "read-committed", ""} {
		if _, err := parseIsolation(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

// TestCompletionChoicesParse: every value offered for a flag is one its
// parser accepts.
func TestCompletionChoicesParse(t *testing.T) {
	parsers := map[string]func(string) error{
		"isolation":      func(s string) error { _, err := parseIsolation(s); return err },
		"key-encoding":   func(s string) error { _, err := ndjson.ParseEncoding(s); return err },
		"value-encoding": func(s string) error { _, err := ndjson.ParseEncoding(s); return err },
		"offset":         func(s string) error { _, err := parseOffset(s); return err },
		"from-offset":    func(s string) error { _, err := parseOffset(s); return err },
		"to-offset":      func(s string) error { _, err := parseOffset(s); return err },
		"from":           func(s string) error { _, err := parseOffset(s); return err },
		"time":           func(s string) error { _, err := parseOffsetsTime(s); return err },
		"compression": func(s string) error {
			if _, ok := format.ParseCompression(s); !ok {
				return errString("unknown codec " + s)
			}
			return nil
		},
	}
	for f, vals := range flagChoices {
		name := f.Names()[0]
		p, ok := parsers[name]
		if !ok {
			continue // checked end to end (produce, replicate) in testdata/script
		}
		for _, v := range vals {
			if err := p(v); err != nil {
				t.Errorf("--%s %s is offered but rejected: %v", name, v, err)
			}
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestParseIsolationSuggests(t *testing.T) {
	_, err := parseIsolation("read_comitted")
	if err == nil || !strings.Contains(err.Error(), "(did you mean read_committed?)") {
		t.Fatalf("read_comitted: %v", err)
	}
	if _, err := parseIsolation("read_committed"); err != nil {
		t.Fatal(err)
	}
}

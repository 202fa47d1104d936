package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestNormalizeArgs(t *testing.T) {
	t.Chdir(t.TempDir()) // no file named "help" here
	app := newApp(nil, io.Discard, io.Discard)
	cases := []struct {
		name string
		in   string
		want string
	}{
		{"flag after path", "verify DIR --json", "verify --json DIR"},
		{"short alias with value after path", "verify DIR -j 2", "verify -j 2 DIR"},
		{"value flag after path", "find DIR --offset 2", "find --offset 2 DIR"},
		{"value that looks like a flag", "find DIR --offset -2", "find --offset -2 DIR"},
		{"value that is a dash", "produce --key-separator - --log d", "produce --key-separator - --log d"},
		{"value with equals", "dump --files=a,b x --json", "dump --files=a,b --json x"},
		{"bool with equals", "dump x --json=false", "dump --json=false x"},
		{"interleaved", "dump a --deep-iteration b --max-bytes 10 c", "dump --deep-iteration --max-bytes 10 a b c"},
		{"repeated flags keep their order", "replicate --stop 2@3 --dir d --stop 3@5", "replicate --stop 2@3 --dir d --stop 3@5"},
		{"double dash ends flags", "dump a -- -weird --json", "dump -- a -weird --json"},
		{"flags before double dash move", "dump a --json -- -weird", "dump --json -- a -weird"},
		{"stdin dash is positional", "verify - --json", "verify --json -"},
		{"unknown flag stays a flag", "verify DIR --jsn", "verify --jsn DIR"},
		{"help flag after a file", "dump FILE -h", "dump --help"},
		{"help flag after a value flag", "dump --files a --help x", "dump --help"},
		{"dash h as a value is not help", "produce --key-separator -h --log d", "produce --key-separator -h --log d"},
		{"help word without a file named help", "dump help", "help dump"},
		{"help word with other arguments is a file", "dump help x", "dump help x"},
		{"help word after double dash is a file", "dump -- help", "dump -- help"},
		{"global flag", "--version", "--version"},
		{"unknown command untouched", "nosuch x --json", "nosuch x --json"},
		{"flag missing its value stays last", "verify DIR --jobs", "verify --jobs"},
		{"no arguments", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := normalizeArgs(app, append([]string{"klog"}, strings.Fields(c.in)...))[1:]
			if strings.Join(got, " ") != c.want {
				t.Errorf("normalizeArgs(%q) = %q, want %q", c.in, strings.Join(got, " "), c.want)
			}
		})
	}
}

func TestNormalizeHelpWordWhenFileExists(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("help", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	app := newApp(nil, io.Discard, io.Discard)
	got := normalizeArgs(app, []string{"klog", "dump", "help"})
	if want := []string{"klog", "dump", "help"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestNormalizeEveryFlag moves every flag of every command from after a
// positional argument to before it, with its value when it takes one.
func TestNormalizeEveryFlag(t *testing.T) {
	t.Chdir(t.TempDir())
	app := newApp(nil, io.Discard, io.Discard)
	for _, cmd := range app.Commands {
		for _, f := range cmd.Flags {
			if f == topicFlag {
				continue // rewritten into paths: TestKcatAddressing
			}
			for _, n := range f.Names() {
				tok := dashed(n)
				in := []string{"klog", cmd.Name, "POS", tok}
				want := []string{"klog", cmd.Name, tok}
				if o, ok := f.(*optionalStringFlag); ok {
					// "-v1" looks like an option: the flag has no value
					// (jopt-simple), which is its default.
					in = append(in, "-v1")
					want = []string{"klog", cmd.Name, tok + "=" + o.Value, "-v1"}
				} else if flagTakesValue(f) {
					in = append(in, "-v1")
					want = append(want, "-v1")
				}
				in = append(in, "LAST")
				want = append(want, "POS", "LAST")
				if n == "help" || n == "h" {
					want = []string{"klog", cmd.Name, "--help"}
				}
				if got := normalizeArgs(app, in); !slices.Equal(got, want) {
					t.Errorf("%s %s: got %q, want %q", cmd.Name, tok, got, want)
				}
			}
		}
	}
}

func TestFlagsAnywhereEndToEnd(t *testing.T) {
	part := segments(t, "kafka-written", "unifiedlog-producer", "topic-0")
	log := segments(t, "kafka-written", "v2-none", "00000000000000000000.log")
	cases := []struct {
		args      []string
		code      int
		stdoutHas string
	}{
		{[]string{"verify", part, "--json"}, ExitOK, `"fileKind":"log"`},
		{[]string{"stats", part, "--json"}, ExitOK, `"type":"stats"`},
		{[]string{"segments", part, "--json"}, ExitOK, `"type":"segment"`},
		{[]string{"find", part, "--offset", "2"}, ExitOK, "offset"},
		{[]string{"dump", log, "--deep-iteration"}, ExitOK, "| offset: 0"},
		{[]string{"dump", log, "-h"}, ExitOK, "klog dump"},
		{[]string{"offsets", part, "--time", "earliest"}, ExitOK, "topic:0:"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args[:1], " ")+" "+strings.Join(c.args[2:], " "), func(t *testing.T) {
			code, out, errs := klog(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.code, errs)
			}
			if !strings.Contains(out, c.stdoutHas) {
				t.Errorf("stdout lacks %q:\n%s", c.stdoutHas, clip(out))
			}
		})
	}
}

func TestDoubleDashFileNamedLikeAFlag(t *testing.T) {
	src := segments(t, "kafka-written", "v2-none", "00000000000000000000.log")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile(filepath.Join(dir, "-odd.log"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := klog(t, "verify", "--", "-odd.log")
	if code != ExitOK || !strings.Contains(out+errs, "-odd.log") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
}

// TestNormalizeOptionalValue: kafka-dump-log's --key-decoder-class and
// --value-decoder-class follow jopt-simple's optional argument
// (OptionalArgumentOptionSpec.detectOptionArgument): the next token is the
// value unless it looks like an option ("-x", "--x", "--"; "-" alone does
// not), and without one the option is present with its default.
func TestNormalizeOptionalValue(t *testing.T) {
	const def = "--key-decoder-class=org.apache.kafka.tools.api.StringDecoder"
	app := newApp(nil, io.Discard, io.Discard)
	for _, tc := range []struct{ in, want []string }{
		{[]string{"--key-decoder-class", "a.B", "f"}, []string{"--key-decoder-class=a.B", "f"}},
		{[]string{"f", "--key-decoder-class"}, []string{def, "f"}},
		{[]string{"--key-decoder-class", "--files", "f"}, []string{def, "--files", "f"}},
		{[]string{"--key-decoder-class", "--", "f"}, []string{def, "--", "f"}},
		{[]string{"--key-decoder-class", "-", "f"}, []string{"--key-decoder-class=-", "f"}},
		{[]string{"--key-decoder-class=", "f"}, []string{"--key-decoder-class=", "f"}},
		{[]string{"--key-decoder-class", "f"}, []string{"--key-decoder-class=f"}},
	} {
		got := normalizeArgs(app, append([]string{"klog", "dump"}, tc.in...))
		if want := append([]string{"klog", "dump"}, tc.want...); !slices.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", tc.in, got, want)
		}
	}
}

package main

import (
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestMistakesAreOneLine: for every command, an unknown flag, a misspelt
// flag and a flag missing its value give one line on stderr, nothing on
// stdout, exit 2. The line names a subcommand with its parent ("tiered ls:"),
// as klog ls is another command.
func TestMistakesAreOneLine(t *testing.T) {
	type command struct {
		path []string
		cmd  *cli.Command
	}
	var cmds []command
	for _, cmd := range newApp(nil, io.Discard, io.Discard).Commands {
		cmds = append(cmds, command{[]string{cmd.Name}, cmd})
		for _, sub := range cmd.Subcommands {
			cmds = append(cmds, command{[]string{cmd.Name, sub.Name}, sub})
		}
	}
	for _, c := range cmds {
		cmd, name := c.cmd, strings.Join(c.path, " ")
		with := func(args ...string) []string { return append(slices.Clone(c.path), args...) }
		cases := [][]string{with("x", "--no-such-flag")}
		for _, f := range cmd.Flags {
			n := f.Names()[0]
			if len(n) < 4 || n == "help" {
				continue
			}
			// Drop a letter in the middle: --jsn for --json.
			cases = append(cases, with("--"+n[:len(n)/2]+n[len(n)/2+1:], "x"))
			if _, optional := f.(*optionalStringFlag); flagTakesValue(f) && !optional {
				cases = append(cases, with("x", "--"+n))
			}
		}
		for _, args := range cases {
			code, out, errs := klog(t, args...)
			if code != ExitTrouble || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "klog: "+name+": ") {
				t.Errorf("klog %s: exit %d, stdout %q, stderr %q; want exit 2 and one line", strings.Join(args, " "), code, clip(out), errs)
			}
		}
	}
}

// TestDidYouMean: the suggestion names the flag or command meant.
func TestDidYouMean(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"dump", "--jsn", "x"}, "unknown flag --jsn (did you mean --json?)"},
		{[]string{"verify", "--fail-fst", "x"}, "(did you mean --fail-fast?)"},
		{[]string{"fetch", "--isolaton", "read_committed"}, "(did you mean --isolation?)"},
		{[]string{"verfy", "x"}, "did you mean 'verify'?"},
		{[]string{"sgments", "x"}, "did you mean 'segments'?"},
		{[]string{"help", "dmp"}, "did you mean 'dump'?"},
	}
	for _, c := range cases {
		code, out, errs := klog(t, c.args...)
		if code != ExitTrouble || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("klog %s: exit %d, stdout %q, stderr %q; want %q", strings.Join(c.args, " "), code, clip(out), errs, c.want)
		}
	}
	// Nothing close: no suggestion.
	_, _, errs := klog(t, "dump", "--zzzzzzzz", "x")
	if strings.Contains(errs, "did you mean") {
		t.Errorf("a suggestion for a flag like no other: %q", errs)
	}
}

// TestHelpForEveryCommand: klog help CMD, klog CMD -h, klog CMD --help and
// klog CMD help print CMD's help on stdout, exit 0, defaults once.
func TestHelpForEveryCommand(t *testing.T) {
	t.Chdir(t.TempDir())
	twice := regexp.MustCompile(`\(default: [^)]*\).*\(default: `)
	for _, cmd := range newApp(nil, io.Discard, io.Discard).Commands {
		for _, args := range [][]string{{"help", cmd.Name}, {cmd.Name, "-h"}, {cmd.Name, "x", "--help"}, {cmd.Name, "help"}} {
			code, out, errs := klog(t, args...)
			if code != ExitOK || errs != "" || !strings.Contains(out, "klog "+cmd.Name) {
				t.Errorf("klog %s: exit %d, stderr %q, stdout %q", strings.Join(args, " "), code, errs, clip(out))
			}
			for _, l := range strings.Split(out, "\n") {
				if twice.MatchString(l) {
					t.Errorf("klog %s: a default printed twice: %q", strings.Join(args, " "), l)
				}
			}
		}
	}
	code, out, errs := klog(t)
	if code != ExitTrouble || out != "" || !strings.Contains(errs, "COMMANDS:") {
		t.Errorf("klog alone: exit %d, stdout %q, stderr %q; want the usage on stderr, exit 2", code, clip(out), clip(errs))
	}
}

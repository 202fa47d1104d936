package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/klog-dev/klog/partition"
	"github.com/urfave/cli/v2"
)

// urfave/cli v2 hands flags to Go's flag package, which stops at the first
// positional argument: `klog verify DIR --json` would read "--json" as a
// second PATH. normalizeArgs moves every flag of the chosen command in front
// of its positional arguments before the app parses anything, so operators
// can type flags anywhere, as with kcat, rpk or kubectl.
//
// Which tokens are flag values comes from each command's own cli.Flag
// definitions: a flag takes a value unless it is a *cli.BoolFlag (or says
// otherwise through TakesValue), so commands added later are covered with no
// change here. The rules:
//
//   - "--" ends the flags; everything after it is positional, even "-x".
//   - The token after a flag that takes a value is that value, whatever it
//     looks like ("--offset -5", "--key-separator -").
//   - "--name=value" is one token; "-" alone is a positional (stdin).
//   - Repeated flags keep their order (slice flags collect them in order).
//   - Unknown flags stay flags, so parsing reports them with a suggestion.
//   - -h/--help anywhere shows CMD's help and ignores the rest.
//   - `klog CMD help` shows CMD's help, unless a file named "help" exists,
//     which is then CMD's argument like any other.
func normalizeArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := append(make([]string, 0, len(args)+1), args[0])
	i := 1
	// Global flags before the command.
	for i < len(args) && isFlagToken(args[i]) {
		if args[i] == "--" {
			return append(out, args[i:]...)
		}
		out = append(out, args[i])
		if f := lookupFlag(app.Flags, args[i]); f != nil && flagTakesValue(f) && !strings.Contains(args[i], "=") && i+1 < len(args) {
			out = append(out, args[i+1])
			i++
		}
		i++
	}
	if i == len(args) {
		return out
	}
	cmd := app.Command(args[i])
	if cmd == nil || cmd.SkipFlagParsing {
		return append(out, args[i:]...)
	}
	return append(out, normalizeCommand(cmd, args[i], args[i+1:])...)
}

// normalizeCommand returns name followed by args with the flags first.
func normalizeCommand(cmd *cli.Command, name string, args []string) []string {
	var flags, pos []string
	dashdash, help := false, false
	dangling := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			dashdash = true
			pos = append(pos, args[i+1:]...)
			break
		}
		if !isFlagToken(a) {
			if len(cmd.Subcommands) > 0 && len(pos) == 0 {
				if sub := cmd.Command(a); sub != nil {
					// A subcommand owns the rest of the line.
					return append(append([]string{name}, flags...), normalizeCommand(sub, a, args[i+1:])...)
				}
			}
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		if strings.Contains(a, "=") {
			continue
		}
		f := lookupFlag(cmd.Flags, a)
		if o, ok := f.(*optionalStringFlag); ok {
			// jopt-simple's optional argument: the next token unless it
			// looks like an option ("-x", "--x", "--"), else none.
			if i+1 < len(args) && !isFlagToken(args[i+1]) {
				flags[len(flags)-1] = a + "=" + args[i+1]
				i++
			} else {
				flags[len(flags)-1] = a + "=" + o.Value
			}
			continue
		}
		if cli.HelpFlag != nil && hasName(cli.HelpFlag, flagName(a)) {
			f, help = cli.HelpFlag, true
		}
		if f != nil && flagTakesValue(f) {
			if i+1 == len(args) {
				// No value: leave it last so that parsing says so rather
				// than take an argument for its value.
				flags = flags[:len(flags)-1]
				dangling = a
				break
			}
			flags = append(flags, args[i+1])
			i++
		}
	}
	if help {
		// urfave/cli would take the first argument for a help topic.
		return []string{name, "--help"}
	}
	if addressed(cmd) {
		flags, pos = rewriteAddressing(cmd, flags, pos) // address.go
	}
	if len(pos) == 1 && pos[0] == "help" && !dashdash && len(cmd.Subcommands) == 0 {
		if _, err := os.Lstat("help"); err != nil {
			return append([]string{"help", name}, flags...)
		}
	}
	out := append([]string{name}, flags...)
	if dangling != "" {
		// Parsing then reports the missing value.
		return append(out, dangling)
	}
	if dashdash || anyFlagLike(pos) {
		out = append(out, "--")
	}
	return append(out, pos...)
}

// isFlagToken reports whether a looks like a flag: "-x", "--x", "--".
// "-" alone is stdin, a positional.
func isFlagToken(a string) bool { return len(a) > 1 && a[0] == '-' }

func anyFlagLike(args []string) bool {
	for _, a := range args {
		if isFlagToken(a) {
			return true
		}
	}
	return false
}

// flagName strips dashes and any "=value" from a flag token.
func flagName(tok string) string {
	n := strings.TrimLeft(tok, "-")
	if i := strings.IndexByte(n, '='); i >= 0 {
		n = n[:i]
	}
	return n
}

func lookupFlag(flags []cli.Flag, tok string) cli.Flag {
	name := flagName(tok)
	for _, f := range flags {
		if hasName(f, name) {
			return f
		}
	}
	return nil
}

func hasName(f cli.Flag, name string) bool {
	for _, n := range f.Names() {
		if n == name {
			return true
		}
	}
	return false
}

// optionalStringFlag is a string flag whose value may be left out, as
// jopt-simple's withOptionalArg (kafka-dump-log's --key-decoder-class):
// normalizeCommand gives it the next token when that does not look like an
// option, and its default otherwise, so that it is set either way.
type optionalStringFlag struct{ cli.StringFlag }

// flagTakesValue: every flag takes a value except boolean ones.
func flagTakesValue(f cli.Flag) bool {
	if _, ok := f.(*cli.BoolFlag); ok {
		return false
	}
	if d, ok := f.(cli.DocGenerationFlag); ok {
		return d.TakesValue()
	}
	return true
}

// partitionDirArg is a writing or fetching command's partition directory:
// the one DIR argument, as every reading command takes it, or --log DIR
// (both may be given if they name the same directory). hint ends the usage
// line; dashWhy says why DIR may not be "-" (stdin everywhere else, never a
// directory named "-").
func partitionDirArg(c *cli.Context, cmd, logFlag, hint, dashWhy string) (string, error) {
	how := "give the partition directory once: klog " + cmd + " DIR (or --" + logFlag + " DIR)" + hint
	args := c.Args().Slice()
	dir := c.String(logFlag)
	switch {
	case len(args) > 1:
		return "", usageError("%s: %d arguments %q: %s", cmd, len(args), args, how)
	case len(args) == 1 && c.IsSet(logFlag) && filepath.Clean(args[0]) != filepath.Clean(dir):
		return "", usageError("%s: --%s %q and DIR %q differ: %s", cmd, logFlag, dir, args[0], how)
	case len(args) == 1:
		dir = args[0]
	}
	if dir == "" {
		return "", usageError("%s: no DIR given: %s", cmd, how)
	}
	if dir == "-" {
		return "", usageError("%s: DIR is -: %s", cmd, dashWhy)
	}
	return dir, logDirGiven(cmd, dir)
}

// logDirGiven is a usage error when dir is a log directory (no partition
// directory itself, holding some): "holds no log segment" did not say that
// the command takes one of its partitions.
func logDirGiven(cmd, dir string) error {
	if partition.IsPartitionDir(dir) {
		return nil
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil // the command says what is wrong with it
	}
	n, first := 0, ""
	for _, de := range des {
		if de.IsDir() && partition.IsPartitionDir(filepath.Join(dir, de.Name())) {
			if n == 0 {
				first = filepath.Join(dir, de.Name())
			}
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return usageError("%s: %s is a log directory (%d partition directories): give one of them (%s), or -t TOPIC -p N", cmd, dir, n, first)
}

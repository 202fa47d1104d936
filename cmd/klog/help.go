package main

import (
	"sort"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"
	"github.com/xrash/smetrics"
)

// Mistakes get one line on stderr and exit status 2, never the whole help
// on stdout: `klog dump --jsn x | jq` must not feed help text to jq.

// rootAction runs when no command matched: `klog` alone prints the usage
// on stderr and exits 2; `klog nosuch` names the closest command.
func rootAction(c *cli.Context) error {
	if c.Args().Present() {
		return unknownCommand(c.App, c.Args().First())
	}
	w := c.App.Writer
	c.App.Writer = c.App.ErrWriter
	err := cli.ShowAppHelp(c)
	c.App.Writer = w
	if err != nil {
		return err
	}
	return troubleError("")
}

func unknownCommand(app *cli.App, name string) error {
	var names []string
	for _, c := range app.Commands {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	msg := "unknown command " + quote(name)
	if s := suggest(name, names); s != "" {
		msg += " (did you mean " + quote(s) + "?)"
	}
	return usageError("%s; run 'klog help' for the list", msg)
}

// usageErrorHandler turns urfave/cli's flag errors into one line:
// "dump: unknown flag --jsn (did you mean --json?)". A subcommand's is named
// with its parents ("tiered ls: ..."), as klog ls is another command.
func usageErrorHandler(c *cli.Context, err error, isSubcommand bool) error {
	prefix := ""
	var flags []cli.Flag
	if isSubcommand && c.Command != nil {
		prefix = commandPath(c) + ": "
		flags = c.Command.Flags
	} else {
		flags = c.App.Flags
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "flag provided but not defined: "):
		tok := strings.TrimPrefix(msg, "flag provided but not defined: ")
		name := strings.TrimLeft(tok, "-")
		var names []string
		for _, f := range flags {
			names = append(names, f.Names()...)
		}
		msg = "unknown flag " + dashed(name)
		if s := suggest(name, names); s != "" {
			msg += " (did you mean " + dashed(s) + "?)"
		}
	case strings.HasPrefix(msg, "flag needs an argument: "):
		tok := strings.TrimPrefix(msg, "flag needs an argument: ")
		msg = "flag " + dashed(strings.TrimLeft(tok, "-")) + " needs a value"
	case strings.HasPrefix(msg, "invalid value "):
		// Go's flag package: invalid value "x" for flag -offset: parse error
		if i := strings.Index(msg, " for flag -"); i >= 0 {
			rest := msg[i+len(" for flag -"):]
			if j := strings.IndexByte(rest, ':'); j >= 0 {
				msg = msg[:i] + " for flag " + dashed(rest[:j]) + rest[j:]
			}
		}
	}
	return usageError("%s%s", prefix, msg)
}

// commandPath names c's command with the commands above it: "tiered ls".
func commandPath(c *cli.Context) string {
	var names []string
	var last *cli.Command
	for _, ctx := range c.Lineage() {
		// The app's own contexts hold a root command named as the app.
		if cmd := ctx.Command; cmd != nil && cmd != last && cmd.Name != "" && cmd.Name != c.App.Name {
			names = append([]string{cmd.Name}, names...)
			last = cmd
		}
	}
	if len(names) == 0 && c.Command != nil {
		return c.Command.Name
	}
	return strings.Join(names, " ")
}

// suggest returns the candidate closest to s, if it is close enough
// (Jaro-Winkler, as urfave/cli's own suggestions).
func suggest(s string, candidates []string) string {
	best, bestScore := "", 0.0
	for _, c := range candidates {
		if sc := smetrics.JaroWinkler(s, c, 0.7, 4); sc > bestScore {
			best, bestScore = c, sc
		}
	}
	if bestScore < 0.75 {
		return ""
	}
	return best
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func quote(s string) string { return "'" + s + "'" }

// requiredFlags remembers, per command, the flags declared Required. The
// check moves from urfave/cli (which prints the whole help on stdout when
// one is missing) to a Before hook that prints one line.
var requiredFlags = map[*cli.Command][]string{}

var prepareOnce sync.Once

// prepareCommands adjusts every command's definition once, so that rules
// hold for commands added later without touching their files:
//   - mistakes are reported by usageErrorHandler;
//   - `klog CMD help` is not a subcommand (normalizeArgs handles it);
//   - required flags are checked in one line;
//   - a default already spelled out in the usage ("(default: ...)") is not
//     printed a second time by urfave/cli, and switches that are off by
//     default do not say "(default: false)".
func prepareCommands(cmds []*cli.Command) {
	prepareOnce.Do(func() {
		cli.VersionPrinter = printVersion
		for _, cmd := range cmds {
			prepareCommand(cmd)
		}
	})
}

func prepareCommand(cmd *cli.Command) {
	cmd.HideHelpCommand = true
	cmd.OnUsageError = usageErrorHandler
	for _, f := range cmd.Flags {
		if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
			requiredFlags[cmd] = append(requiredFlags[cmd], f.Names()[0])
			setNotRequired(f)
		}
		moveDefault(f)
		if b, ok := f.(*cli.BoolFlag); ok && !b.Value && b.DefaultText == "" {
			b.DisableDefaultText = true // "(default: false)" on every switch is noise
		}
	}
	{
		before := cmd.Before
		cmd.Before = func(c *cli.Context) error {
			if err := checkEnums(c); err != nil { // enums.go
				return err
			}
			if err := addressingError(c); addressed(cmd) && err != nil { // address.go
				return err
			}
			if before != nil {
				return before(c)
			}
			return nil
		}
	}
	if req := requiredFlags[cmd]; len(req) > 0 {
		before := cmd.Before
		cmd.Before = func(c *cli.Context) error {
			var missing []string
			for _, n := range req {
				if !c.IsSet(n) {
					missing = append(missing, "--"+n)
				}
			}
			if len(missing) > 0 {
				sort.Strings(missing)
				if len(missing) == 1 && c.Args().Len() == 1 {
					// "klog serve DIR": say where the argument goes.
					return usageError("%s: %s is required (the argument %q is not taken: %s %s %s)", cmd.Name, missing[0],
						c.Args().First(), c.App.Name+" "+commandPath(c), missing[0], c.Args().First())
				}
				return usageError("%s: %s is required", cmd.Name, strings.Join(missing, ", "))
			}
			if before != nil {
				return before(c)
			}
			return nil
		}
	}
	checkNonNegative(cmd)
	for _, sub := range cmd.Subcommands {
		prepareCommand(sub)
	}
}

// nonNegative names the flags whose negative values mean nothing: sizes,
// limits and durations. A negative one is a usage error, never taken for
// "no limit" or "the default" (tail --timeout -1s ran forever).
var nonNegative = map[string]bool{
	"max-batch-bytes": true, "timeout": true, "max-wait": true, "idle-timeout": true, "max-connections": true,
	"replica-lag-time-max": true, "request-timeout": true, "segment-bytes": true, "index-interval-bytes": true,
	"batch-records": true, "batch-bytes": true,
}

// checkNonNegative makes cmd refuse a negative value of its nonNegative
// flags before it runs.
func checkNonNegative(cmd *cli.Command) {
	var flags []cli.Flag
	for _, f := range cmd.Flags {
		if nonNegative[f.Names()[0]] {
			flags = append(flags, f)
		}
	}
	if len(flags) == 0 {
		return
	}
	before := cmd.Before
	cmd.Before = func(c *cli.Context) error {
		for _, f := range flags {
			n := f.Names()[0]
			var neg bool
			switch f.(type) {
			case *cli.IntFlag:
				neg = c.Int(n) < 0
			case *cli.Int64Flag:
				neg = c.Int64(n) < 0
			case *cli.DurationFlag:
				neg = c.Duration(n) < 0
			}
			if neg {
				return usageError("%s: --%s must not be negative, got %v", cmd.Name, n, c.Value(n))
			}
		}
		if before != nil {
			return before(c)
		}
		return nil
	}
}

func setNotRequired(f cli.Flag) {
	switch f := f.(type) {
	case *cli.StringFlag:
		f.Required = false
	case *cli.IntFlag:
		f.Required = false
	case *cli.Int64Flag:
		f.Required = false
	case *cli.BoolFlag:
		f.Required = false
	case *cli.DurationFlag:
		f.Required = false
	case *cli.StringSliceFlag:
		f.Required = false
	case *cli.PathFlag:
		f.Required = false
	case *cli.UintFlag:
		f.Required = false
	case *cli.Float64Flag:
		f.Required = false
	case *cli.GenericFlag:
		f.Required = false
	}
}

// moveDefault turns a usage ending in "(default: X)" into a usage and a
// DefaultText, so that help and the generated manuals print it once.
func moveDefault(f cli.Flag) {
	d, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return
	}
	u := d.GetUsage()
	i := strings.LastIndex(u, " (default: ")
	if i < 0 || !strings.HasSuffix(u, ")") {
		return
	}
	usage, def := u[:i], u[i+len(" (default: "):len(u)-1]
	switch f := f.(type) {
	case *cli.StringFlag:
		f.Usage, f.DefaultText = usage, def
	case *cli.IntFlag:
		f.Usage, f.DefaultText = usage, def
	case *cli.Int64Flag:
		f.Usage, f.DefaultText = usage, def
	case *cli.BoolFlag:
		f.Usage, f.DefaultText = usage, def
	case *cli.DurationFlag:
		f.Usage, f.DefaultText = usage, def
	case *cli.StringSliceFlag:
		f.Usage, f.DefaultText = usage, def
	case *cli.PathFlag:
		f.Usage, f.DefaultText = usage, def
	case *cli.UintFlag:
		f.Usage, f.DefaultText = usage, def
	case *cli.Float64Flag:
		f.Usage, f.DefaultText = usage, def
	case *cli.GenericFlag:
		f.Usage, f.DefaultText = usage, def
	}
}

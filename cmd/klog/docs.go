package main

import (
	"io"
	"path"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// The manuals under docs/ are generated from the CLI definition with
// urfave/cli's ToMarkdown and ToMan (go-md2man), so they cannot drift from
// `klog help`. TestDocs fails when they are stale; regenerate with
//
//	go test ./cmd/klog -run TestDocs -update
//
// docs/klog.md          the reference: every command and flag
// docs/commands/*.md    one page per command, with its description
// docs/man/*.1          man pages, section 1: klog(1) and klog-CMD(1)
// docs/completion/*     the completion scripts the packages install

// docFiles returns the generated files by path under docs/.
func docFiles() (map[string][]byte, error) {
	app := docApp()
	files := map[string][]byte{}
	md, err := app.ToMarkdown()
	if err != nil {
		return nil, err
	}
	files["klog.md"] = []byte(md)
	man, err := app.ToManWithSection(1)
	if err != nil {
		return nil, err
	}
	files["man/klog.1"] = []byte(man)
	var pages []*cli.Command
	for _, cmd := range app.Commands {
		pages = append(pages, cmd)
		for _, sc := range cmd.Subcommands {
			// A subcommand's page is klog-CMD-SUB (klog tiered ls:
			// klog-tiered-ls).
			cp := *sc
			cp.Name = cmd.Name + " " + sc.Name
			pages = append(pages, &cp)
		}
	}
	for _, cmd := range pages {
		sub := commandDocApp(cmd)
		md, err := sub.ToMarkdown()
		if err != nil {
			return nil, err
		}
		// A command's options are not global: say OPTIONS.
		md = strings.Replace(md, "# GLOBAL OPTIONS", "# OPTIONS", 1)
		files[path.Join("commands", sub.Name+".md")] = []byte(md)
		man, err := sub.ToManWithSection(1)
		if err != nil {
			return nil, err
		}
		man = strings.Replace(man, ".SH GLOBAL OPTIONS", ".SH OPTIONS", 1)
		files[path.Join("man", sub.Name+".1")] = []byte(man)
	}
	for shell, s := range completionScripts {
		files[path.Join("completion", completionFileName(shell))] = []byte(s)
	}
	return files, nil
}

// completionFileName is where each shell looks for klog's completion.
func completionFileName(shell string) string {
	switch shell {
	case "zsh":
		return "_klog"
	case "fish":
		return "klog.fish"
	}
	return "klog.bash"
}

// docApp is the app as documented: commands without the --help flag that
// urfave/cli appends once a command has run, in a stable order.
func docApp() *cli.App {
	app := newApp(nil, io.Discard, io.Discard)
	var cmds []*cli.Command
	for _, c := range app.Commands {
		if c.Hidden {
			continue
		}
		cp := *c
		cp.Flags = docFlags(c.Flags)
		cmds = append(cmds, &cp)
	}
	sort.SliceStable(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	app.Commands = cmds
	app.Description = `klog reads, checks and writes Apache Kafka partition logs on disk, with no
broker and no JVM. Flags may come before or after the arguments; -- ends
the flags. Exit status: 0 clean, 1 findings, 2 usage or I/O trouble.
See klog-COMMAND(1) for each command, or run klog help COMMAND.`
	return app
}

// commandDocApp presents one command as an app named klog-CMD, so that
// urfave/cli renders its page with the description.
func commandDocApp(cmd *cli.Command) *cli.App {
	usage := "klog " + cmd.Name + " [OPTIONS]"
	if cmd.ArgsUsage != "" {
		usage += " " + cmd.ArgsUsage
	}
	return &cli.App{
		Name:        "klog-" + strings.ReplaceAll(cmd.Name, " ", "-"),
		Usage:       cmd.Usage,
		UsageText:   usage,
		Description: cmd.Description,
		Flags:       docFlags(cmd.Flags),
		HideHelp:    true,
		HideVersion: true,
	}
}

func docFlags(flags []cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, f := range flags {
		if f == cli.HelpFlag {
			continue
		}
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		out = append(out, f)
	}
	return out
}

package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// Release builds set these with -ldflags "-X main.version=... -X
// main.commit=... -X main.date=..." (see .goreleaser.yaml); otherwise they
// come from the build info the Go toolchain embeds: the module version
// (`go install ...@v1.2.3`), the VCS revision and its commit time.
var (
	commit = ""
	date   = ""
)

// buildVersion is what `klog version` reports.
type buildVersion struct {
	Version  string // module version, or the -X main.version value
	Revision string // VCS revision; "+dirty" when built from a modified tree
	Commit   string // the revision's commit time (build info's vcs.time)
	Time     string // build time, from -X main.date (go build records none)
	Go       string // Go toolchain
	Platform string // GOOS/GOARCH
}

func readBuildVersion() buildVersion {
	v := buildVersion{Version: version, Revision: commit, Time: date, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if mv := bi.Main.Version; mv != "" && mv != "(devel)" && version == defaultVersion {
		v.Version = mv
	}
	var modified bool
	var rev, t string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			t = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if v.Revision == "" && rev != "" {
		v.Revision = rev
		if modified {
			v.Revision += "+dirty"
		}
	}
	v.Commit = t
	return v
}

func (v buildVersion) write(w io.Writer) {
	or := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	rev := or(v.Revision)
	if v.Commit != "" {
		rev += " (committed " + v.Commit + ")"
	}
	built := v.Time
	if built == "" {
		built = "unknown (release builds record it)"
	}
	fmt.Fprintf(w, "klog version %s\nrevision: %s\nbuilt: %s\ngo: %s %s\n", v.Version, rev, built, v.Go, v.Platform)
}

var versionCommand = &cli.Command{
	Name:  "version",
	Usage: "print the version, VCS revision, build time and Go version",
	Description: `The same as klog --version. The revision and time come from the build
information the Go toolchain embeds (or from the release build's -ldflags).`,
	Action: func(c *cli.Context) error {
		if c.Args().Present() {
			return usageError("version: unexpected arguments %q", c.Args().Slice())
		}
		readBuildVersion().write(c.App.Writer)
		return nil
	},
}

func printVersion(c *cli.Context) { readBuildVersion().write(c.App.Writer) }

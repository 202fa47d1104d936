package main

import (
	"bufio"
	"os"
	"path/filepath"

	"github.com/klog-dev/klog/cluster"
	"github.com/klog-dev/klog/kraft"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/verify"
	"github.com/urfave/cli/v2"
)

// writeImageReports adds the image check's reports to the run and writes
// them as verify's file reports (--quiet: those with findings).
func writeImageReports(c *cli.Context, args []string, stopped bool, out *bufio.Writer, sum *verify.Summary) {
	for _, f := range imageReports(c, args, stopped) {
		sum.Add(f)
		if !c.Bool(verifyQuiet.Name) || f.Failed() {
			writeFileReport(out, f, c.Bool(verifyJSONFlag.Name))
		}
	}
}

// imageReports checks the log dirs among args against the KRaft metadata
// image when one of them holds __cluster_metadata-0 (README, klog verify):
// one report per log dir checked, its findings the image check's, its
// lastOffset the image's. Not after --fail-fast stopped the run.
func imageReports(c *cli.Context, args []string, stopped bool) []*verify.FileReport {
	if stopped {
		return nil
	}
	var logDirs []string
	image := false
	for _, a := range args {
		if st, err := os.Stat(a); err == nil && st.IsDir() && !partition.IsPartitionDir(a) {
			logDirs = append(logDirs, a)
			image = image || holdsMetadataLog(a)
		}
	}
	if !image {
		// Discover reads every partition's directory and metadata again:
		// for a log dir of 10,000 partitions, thousands of system calls
		// to learn that there is no image.
		return nil
	}
	dirs, err := cluster.Discover(logDirs)
	if err != nil {
		return nil // verify has reported the directories it could not read
	}
	im := cluster.ImageOf(c.Context, dirs)
	if im == nil {
		return nil
	}
	byDir := map[string]*verify.FileReport{}
	var out []*verify.FileReport
	for _, ld := range dirs {
		f := &verify.FileReport{Path: ld.Path, Kind: verify.KindMetadataImage, OK: true, FirstOffset: -1, LastOffset: im.Provenance.LastContainedOffset,
			ValidBytes: -1, Problems: []verify.Problem{}}
		byDir[ld.Path] = f
		out = append(out, f)
	}
	for _, fd := range cluster.CheckImage(dirs, im) {
		f := byDir[fd.LogDir]
		f.Problems = append(f.Problems, verify.Problem{Path: fd.Path, Kind: fd.Kind, Position: -1, Offset: -1, Message: fd.Message, Info: fd.Info})
		if !fd.Info {
			f.OK = false
		}
	}
	return out
}

// holdsMetadataLog reports whether the log dir holds the KRaft metadata
// log's partition directory, where the image comes from (ImageOf).
func holdsMetadataLog(logDir string) bool {
	st, err := os.Stat(filepath.Join(logDir, kraft.MetadataTopic+"-0"))
	return err == nil && st.IsDir()
}

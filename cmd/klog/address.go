package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// kcat's addressing of a partition: -t TOPIC -p N inside a log dir, and
// TOPIC/N, wherever a command takes partition directories. Both are
// rewritten into the partition directory's path (LOGDIR/TOPIC-N) before the
// command parses its arguments (normalizeCommand), so every command that
// lists the two flags takes them with no code of its own.
var (
	topicFlag = &cli.StringFlag{Name: "topic", Aliases: []string{"t"}, Usage: "with -p, the partition `TOPIC`-N of the log dir given (or of the current directory), as kcat's -t TOPIC -p N; without -p every partition of TOPIC"}
	partFlag  = &cli.StringFlag{Name: "partition", Aliases: []string{"p"}, Usage: "with -t, partition `N` of the topic"}
)

// The commands that take partition directories take -t and -p.
func init() {
	for _, c := range []*cli.Command{dumpCommand, fetchCommand, findCommand, tailCommand, segmentsCommand, statsCommand,
		verifyCommand, recoverCommand, offsetsCommand, produceCommand, retentionCommand, redactCommand} {
		c.Flags = append(c.Flags, topicFlag, partFlag)
	}
}

// addressed reports whether cmd takes -t and -p.
func addressed(cmd *cli.Command) bool { return slices.Contains(cmd.Flags, cli.Flag(topicFlag)) }

// rewriteAddressing takes -t/--topic and -p/--partition out of flags (a
// flag token followed by its value, or NAME=VALUE) and turns pos into
// partition directories: each of pos (a log dir; "." when none is given)
// joined with TOPIC-N, or, without -p, with every TOPIC-N directory it
// holds (in partition order; TOPIC-* when none, which the command then
// reports missing). A positional TOPIC/N whose TOPIC is not a directory is
// LOGDIR/TOPIC-N. A -p without -t, or a -p that is not a partition number,
// is left for the command to refuse (addressingError).
func rewriteAddressing(cmd *cli.Command, flags, pos []string) ([]string, []string) {
	var topic, part string
	var topicAt, partAt []int // indexes of the tokens to drop
	for i := 0; i < len(flags); i++ {
		f := lookupFlag(cmd.Flags, flags[i])
		if f != topicFlag && f != partFlag {
			if f != nil && flagTakesValue(f) && !strings.Contains(flags[i], "=") {
				i++
			}
			continue
		}
		at := []int{i}
		v, inline := "", false
		if _, val, ok := strings.Cut(flags[i], "="); ok {
			v, inline = val, true
		} else if i+1 < len(flags) {
			v = flags[i+1]
			at = append(at, i+1)
		}
		if !inline {
			i++
		}
		if f == topicFlag {
			topic, topicAt = v, at
		} else {
			part, partAt = v, at
		}
	}
	if topic == "" || part != "" && !isPartitionNumber(part) {
		if topic == "" && part == "" {
			pos = slices.Clone(pos)
			for i, p := range pos {
				pos[i] = topicSlashPartition(p)
			}
		}
		return flags, pos
	}
	drop := append(topicAt, partAt...)
	var kept []string
	for i, t := range flags {
		if !slices.Contains(drop, i) {
			kept = append(kept, t)
		}
	}
	if len(pos) == 0 {
		pos = []string{"."}
	}
	var dirs []string
	for _, base := range pos {
		if part != "" {
			dirs = append(dirs, filepath.Join(base, topic+"-"+part))
			continue
		}
		dirs = append(dirs, topicPartitions(base, topic)...)
	}
	return kept, dirs
}

// isPartitionNumber: a partition number as Kafka names its directories.
func isPartitionNumber(s string) bool {
	n, err := strconv.ParseInt(s, 10, 32)
	return err == nil && n >= 0 && strconv.FormatInt(n, 10) == s
}

// topicPartitions lists base's TOPIC-N directories in partition order, or
// base/TOPIC-* when there is none.
func topicPartitions(base, topic string) []string {
	des, err := os.ReadDir(base)
	type dir struct {
		n    int64
		path string
	}
	var ds []dir
	for _, de := range des {
		rest, ok := strings.CutPrefix(de.Name(), topic+"-")
		if !ok || !de.IsDir() || !isPartitionNumber(rest) {
			continue
		}
		n, _ := strconv.ParseInt(rest, 10, 32)
		ds = append(ds, dir{n, filepath.Join(base, de.Name())})
	}
	if err != nil || len(ds) == 0 {
		return []string{filepath.Join(base, topic+"-*")}
	}
	slices.SortFunc(ds, func(a, b dir) int { return int(a.n - b.n) })
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.path
	}
	return out
}

// topicSlashPartition reads kcat's TOPIC/N: a path that does not exist,
// ending in a partition number after a TOPIC that is not a directory
// either, is the partition directory TOPIC-N beside where TOPIC would be.
func topicSlashPartition(p string) string {
	clean := filepath.Clean(p)
	n, topicPath := filepath.Base(clean), filepath.Dir(clean)
	topic := filepath.Base(topicPath)
	if !isPartitionNumber(n) || topic == "." || topic == "/" || topic == ".." {
		return p
	}
	if _, err := os.Lstat(clean); err == nil {
		return p
	}
	if st, err := os.Stat(topicPath); err == nil && st.IsDir() {
		return p
	}
	return filepath.Join(filepath.Dir(topicPath), topic+"-"+n)
}

// addressingError is what is left of -t/-p after rewriteAddressing: a -p
// without -t, or one that is not a partition number.
func addressingError(c *cli.Context) error {
	switch {
	case c.IsSet(partFlag.Name) && !c.IsSet(topicFlag.Name):
		return usageError("%s: -p/--partition %s goes with -t/--topic TOPIC (kcat's -t TOPIC -p N)", commandPath(c), c.String(partFlag.Name))
	case c.IsSet(partFlag.Name):
		return usageError("%s: -p/--partition wants a partition number, got %q", commandPath(c), c.String(partFlag.Name))
	case c.IsSet(topicFlag.Name):
		return usageError("%s: -t/--topic is empty", commandPath(c))
	}
	return nil
}

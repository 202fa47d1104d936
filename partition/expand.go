package partition

import (
	"fmt"
	"os"
)

// ArgKind is what a command-line path names.
type ArgKind int8

// Argument kinds.
const (
	// ArgFile is a file (a segment, an index, a checkpoint, ...).
	ArgFile ArgKind = iota
	// ArgPartition is a partition directory (see IsPartitionDir).
	ArgPartition
	// ArgLogDir is any other directory, read as a log directory.
	ArgLogDir
)

// Arg is one expanded path.
type Arg struct {
	Path string
	Kind ArgKind
	// LogDir lists an ArgLogDir: its partition directories, in topic then
	// partition order, and its checkpoints.
	LogDir *LogDir
}

// Expand resolves the paths a command is given, the one way every command
// does: a file stays a file, a partition directory is itself, any other
// directory is a log directory with its partitions listed. A path that
// does not exist or cannot be listed is an error that names it.
func Expand(paths []string) ([]Arg, error) {
	out := make([]Arg, 0, len(paths))
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		switch {
		case !st.IsDir():
			out = append(out, Arg{Path: p, Kind: ArgFile})
		case IsPartitionDir(p):
			out = append(out, Arg{Path: p, Kind: ArgPartition})
		default:
			ld, err := OpenLogDir(p)
			if err != nil {
				return nil, err
			}
			out = append(out, Arg{Path: p, Kind: ArgLogDir, LogDir: ld})
		}
	}
	return out, nil
}

// PartitionDirs expands directory paths to partition directories: each
// partition directory as it is, each log directory's partitions in order.
// A file is an error.
func PartitionDirs(paths []string) ([]string, error) {
	args, err := Expand(paths)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range args {
		switch a.Kind {
		case ArgFile:
			return nil, &os.PathError{Op: "open", Path: a.Path, Err: fmt.Errorf("not a directory (give a partition directory or a log directory)")}
		case ArgPartition:
			out = append(out, a.Path)
		default:
			out = append(out, a.LogDir.Partitions...)
		}
	}
	return out, nil
}

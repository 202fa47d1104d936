package verify

import (
	"io"
	"maps"
	"slices"
	"strconv"
	"time"
)

// The text klog verify prints: one verdict per file, then a summary line.
// (--json writes each FileReport as a fileReport object instead.)

// AppendText appends the file's verdict: "PATH: ok (N batches, M records,
// B bytes)", "PATH: K problems" with one indented line per problem,
// "PATH: ignored (why)" or "PATH: error: ...".
func (f *FileReport) AppendText(b []byte) []byte {
	b = append(b, f.Path...)
	b = append(b, ": "...)
	n := f.Findings()
	switch {
	case f.Ignored != "":
		b = append(b, "ignored ("+f.Ignored+")"...)
	case f.LinkTarget != "":
		b = append(b, "symbolic link to "+f.LinkTarget+" (read through it; klog never writes through it)"...)
	case f.Err != "":
		b = append(b, "error: "+f.Err...)
	case n == 0 && f.Kind == KindMetadataImage:
		b = append(b, "ok (agrees with the metadata image at offset "...)
		b = strconv.AppendInt(b, f.LastOffset, 10)
		b = append(b, ')')
	case n == 0:
		if f.Partial {
			// Cut short by a signal: what was checked, no verdict.
			b = append(b, "partial (interrupted; no problem in what was checked: "...)
		} else {
			b = append(b, "ok ("...)
		}
		switch f.Kind {
		case "log", "checkpoint":
			b = append(b, Plural(f.Batches, "batch", "batches")+", "+Plural(f.Records, "record", "records")+", "...)
		case "index", "timeindex", "txnindex", "snapshot", "leader-epoch-checkpoint", "offset-checkpoint":
			b = append(b, Plural(f.Records, "entry", "entries")+", "...)
		}
		b = strconv.AppendInt(b, f.Bytes, 10)
		b = append(b, " bytes)"...)
	case n == 1:
		b = append(b, "1 problem"...)
	default:
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, " problems"...)
	}
	b = append(b, '\n')
	for _, p := range f.Problems {
		b = append(b, "  "...)
		if p.Info {
			b = append(b, "info: "...)
		}
		b = append(b, string(p.Kind)+" at position "...)
		b = strconv.AppendInt(b, p.Position, 10)
		if p.Offset >= 0 {
			b = append(b, ", offset "...)
			b = strconv.AppendInt(b, p.Offset, 10)
		}
		b = append(b, ": "+p.Message+"\n"...)
	}
	for _, k := range slices.Sorted(maps.Keys(f.Omitted)) {
		b = append(b, "  … and "...)
		b = strconv.AppendInt(b, f.Omitted[k], 10)
		b = append(b, " more "+string(k)+" problems (the first "+strconv.Itoa(MaxProblemsPerKind)+" of each kind are listed)\n"...)
	}
	return b
}

// WriteText writes AppendText's verdict to w.
func (f *FileReport) WriteText(w io.Writer) error {
	_, err := w.Write(f.AppendText(nil))
	return err
}

// Summary adds up the files of a run for its last line.
type Summary struct {
	Files, Batches, Records, Bytes int64
	// Problems counts findings; IOErrors the files that could not be
	// read; Ignored the files listed as not Kafka files.
	Problems, IOErrors, Ignored int
	// Interrupted: a signal stopped the run; the counts are of the files
	// reported before it.
	Interrupted bool
}

// Add counts f.
func (s *Summary) Add(f *FileReport) {
	if f.Ignored != "" {
		s.Ignored++ // listed, not checked
		return
	}
	if f.LinkTarget != "" {
		return // its files are counted
	}
	if f.Err != "" && f.Bytes == 0 && f.Batches == 0 && f.Records == 0 {
		// Nothing of it was read: unreadable, not verified.
		s.IOErrors++
		return
	}
	s.Files++
	if f.Kind == "log" || f.Kind == "checkpoint" {
		s.Batches += f.Batches
		s.Records += f.Records // other kinds count entries there
	}
	s.Bytes += f.Bytes
	s.Problems += f.Findings()
	if f.Err != "" {
		s.IOErrors++
	}
}

// WriteText writes the summary line of a run that took elapsed, e.g.
// "verified 3 files: 4 batches, 59 records, 2385 bytes (2.3 KiB), 0
// problems in 0.0s"; stopped says --fail-fast ended it.
func (s *Summary) WriteText(w io.Writer, elapsed time.Duration, stopped bool) error {
	var b []byte
	switch {
	case s.Interrupted:
		b = append(b, "interrupted after verifying "...)
	case stopped:
		b = append(b, "stopped at the first finding after "...)
	default:
		b = append(b, "verified "...)
	}
	b = append(b, Plural(s.Files, "file", "files")+": "+Plural(s.Batches, "batch", "batches")+", "+
		Plural(s.Records, "record", "records")+", "+Plural(s.Bytes, "byte", "bytes")...)
	if s.Bytes >= 1024 {
		// The human form only says something from 1 KiB on, as in the tables.
		b = append(b, " ("+humanBytes(s.Bytes)+")"...)
	}
	b = append(b, ", "+Plural(int64(s.Problems), "problem", "problems")...)
	if s.IOErrors > 0 {
		b = append(b, ", "+Plural(int64(s.IOErrors), "unreadable file", "unreadable files")...)
	}
	if s.Ignored > 0 {
		b = append(b, ", "+Plural(int64(s.Ignored), "file", "files")+" ignored (not Kafka files)"...)
	}
	b = append(b, " in "+strconv.FormatFloat(elapsed.Seconds(), 'f', 1, 64)+"s\n"...)
	_, err := w.Write(b)
	return err
}

// Plural is n with the noun for it: "1 batch", "2 batches" (the summary
// lines of verify and of klog ls).
func Plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// humanBytes renders n in IEC units with one decimal: 1.0 GiB, 512 B.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + "KMGTPE"[exp:exp+1] + "iB"
}

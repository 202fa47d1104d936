// Package dump prints Kafka partition files. Its text output reproduces
// kafka-dump-log.sh of Kafka 4.3.1 (tools/.../DumpLogSegments.java) byte for
// byte; its JSON output is NDJSON, one object per line, for scripts.
//
// dump is the only presentation package: it turns what format decodes into
// lines. It never reads flags or the environment and writes only to the
// writers it is given.
package dump

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/payload"
	"github.com/klog-dev/klog/verify"
)

// Options selects what a dump prints; the fields mirror kafka-dump-log's
// options.
type Options struct {
	// OnBytes, if set, is told how many bytes of the files have been read,
	// as they are read (for progress); the calls add up to the files'
	// sizes.
	OnBytes func(n int64)
	// Deep iterates the records of each batch (--deep-iteration).
	Deep bool
	// PrintData prints keys and values (--print-data-log); implies Deep.
	PrintData bool
	// SkipRecordMetadata omits the per-record metadata (--skip-record-metadata).
	SkipRecordMetadata bool
	// MaxBytes reads only the first MaxBytes bytes of each .log/.checkpoint
	// (--max-bytes); negative means not given. When given, Kafka does not
	// report trailing bytes.
	MaxBytes int64
	// JSON selects NDJSON output instead of kafka-dump-log's text.
	JSON bool
	// MaxBatchBytes caps one entry (format.ScanOptions); 0 = default.
	MaxBatchBytes int
	// MaxDecompressedBytes caps one batch's decompressed records; 0 = default.
	MaxDecompressedBytes int
	// VerifyIndexOnly checks index entries without printing them
	// (--verify-index-only).
	VerifyIndexOnly bool
	// IndexSanityOnly runs only the broker's index sanity check
	// (--index-sanity-check); it wins over VerifyIndexOnly.
	IndexSanityOnly bool
	// MaxMessageSize is how many bytes to read at an indexed position
	// (--max-message-size); 0 means DefaultMaxMessageSize.
	MaxMessageSize int
	// KeyEncoding and ValueEncoding render key and value bytes
	// (--key-encoding, --value-encoding); the default is Kafka's text.
	KeyEncoding, ValueEncoding ndjson.Encoding
	// Filter, when set, selects batches and records (klog's own; the
	// output is then no longer kafka-dump-log's).
	Filter *Filter
	// Cwd is the working directory relative paths are opened from and made
	// absolute against in the end-of-run summaries (Java's
	// File.getAbsolutePath); "" means the process's working directory.
	Cwd string
	// Decoder prints keys and values through one of kafka-dump-log's
	// message decoders (--offsets-decoder, ...); it implies PrintData.
	Decoder internaltopic.Kind
	// KeyDecoderClass and ValueDecoderClass are --key-decoder-class and
	// --value-decoder-class: nil when not given (StringDecoder). Given, they
	// imply PrintData; without a Decoder, a class klog does not have ends
	// the dump at the first .log or .checkpoint file with a
	// *DecoderClassError, as Kafka's tool dies there.
	KeyDecoderClass, ValueDecoderClass *string
	// ValueDecoder, when set, turns every value into its payload text
	// (--value-decoder-cmd); it implies PrintData. Its error ends the dump
	// with a *ValueDecoderError.
	ValueDecoder ValueDecoder
	// Stdin is what the path "-" reads, as a segment of unknown base
	// offset (os.Stdin when nil).
	Stdin io.Reader
	// Open, when set, opens the files dump reads (those named, and the
	// .log and .index beside an index) instead of the file system: a
	// remote tier's objects under Kafka's file names (klog tiered dump).
	// Paths are then printed as given. A missing file is an error that
	// errors.Is(err, fs.ErrNotExist).
	Open func(name string) (File, error)
	// View, when active, decodes keys and values with their schemas,
	// keeps the records its Where holds for, prints them through its
	// format string (nothing else is printed then), and ends the dump
	// after its Limit (package payload; klog's own: the output is then
	// no longer kafka-dump-log's). Decoding or a format string implies
	// PrintData, any of them Deep.
	View *payload.View
}

// Filter selects what a dump prints. Bounds are inclusive; -1 leaves one
// open. Use NewFilter for an all-open filter.
type Filter struct {
	FromOffset, ToOffset       int64
	FromTimestamp, ToTimestamp int64
	// ProducerID keeps only that producer's batches (-1: any).
	ProducerID             int64
	ControlOnly, NoControl bool
}

// NewFilter returns a filter that keeps everything.
func NewFilter() *Filter {
	return &Filter{FromOffset: -1, ToOffset: -1, FromTimestamp: -1, ToTimestamp: -1, ProducerID: -1}
}

// skipBatch reports whether no record of b can pass, and whether every later
// batch is past ToOffset too.
func (f *Filter) skipBatch(b *format.Batch) (skip, done bool) {
	if f.ToOffset >= 0 && b.BaseOffset > f.ToOffset && b.IsV2() {
		return true, true
	}
	switch {
	case f.FromOffset >= 0 && b.LastOffset() < f.FromOffset,
		f.FromTimestamp >= 0 && b.MaxTimestamp < f.FromTimestamp && b.Magic > format.MagicV0,
		f.ProducerID >= 0 && b.ProducerID != f.ProducerID,
		f.ControlOnly && !b.IsControl(),
		f.NoControl && b.IsControl():
		return true, false
	}
	return false, false
}

func (f *Filter) keepRecord(r *format.Record) bool {
	return (f.FromOffset < 0 || r.Offset >= f.FromOffset) && (f.ToOffset < 0 || r.Offset <= f.ToOffset) &&
		(f.FromTimestamp < 0 || r.Timestamp >= f.FromTimestamp) && (f.ToTimestamp < 0 || r.Timestamp <= f.ToTimestamp)
}

// Result summarises a run.
type Result struct {
	// Files is how many files were dumped.
	Files int
	// Findings counts invalid batches, invalid trailing bytes and decode
	// problems: anything that makes the exit code 1.
	Findings int
	// Troubles lists what could not be dumped although the dump went on:
	// a file named on the command line that is not a Kafka file or does
	// not exist, a directory that cannot be read. Any makes the exit code 2.
	Troubles []error
}

// IOError is an error reading or opening a file: exit code 2, not a finding.
type IOError struct {
	Path string
	Err  error
}

func (e *IOError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *IOError) Unwrap() error { return e.Err }

// FatalError is a problem Kafka's tool dies on (it throws): the dump stops
// there, after the same output Kafka printed before the exception.
type FatalError struct {
	Path string
	Err  error
}

func (e *FatalError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// Run dumps paths in order, writing data to stdout and Kafka's diagnostics to
// stderr. The error is nil, an *IOError, or a *FatalError; findings are
// counted in Result.
func Run(paths []string, opts Options, stdout, stderr io.Writer) (Result, error) {
	return RunContext(context.Background(), paths, opts, stdout, stderr)
}

// RunContext is Run that stops when ctx ends (checked between files and
// every 256 batches), returning ctx's error after flushing what was
// written.
func RunContext(ctx context.Context, paths []string, opts Options, stdout, stderr io.Writer) (Result, error) {
	if opts.Decoder != internaltopic.None || opts.KeyDecoderClass != nil || opts.ValueDecoderClass != nil || opts.ValueDecoder != nil {
		opts.PrintData = true
	}
	if v := opts.View; v.Decodes() || v.Active() && v.Format != nil {
		opts.PrintData = true
	}
	if opts.PrintData || opts.View.Active() {
		opts.Deep = true
	}
	if opts.Cwd == "" {
		opts.Cwd, _ = os.Getwd()
	}
	d := &dumper{ctx: ctx, opts: opts, errw: stderr}
	switch {
	case opts.View.Active() && opts.View.Format != nil:
		d.r = newFormatRenderer(stdout, opts)
	case opts.JSON:
		d.r = newJSONRenderer(stdout, opts)
	default:
		d.r = newTextRenderer(stdout, opts)
	}
	d.attachDecoder() // decoder.go
	var res Result
	var err error
	for _, p := range paths {
		if err = ctx.Err(); err != nil {
			break
		}
		if p == "-" {
			tmp, cleanup, serr := safeio.SpoolStdin(ctx, opts.Stdin, format.HeaderSizeUpToMagic, format.SegmentStart)
			if errors.Is(serr, format.ErrNotSegment) {
				// Bytes that cannot start a segment: what a file named on
				// the command line that is not a Kafka file gives (exit 2).
				d.r.dumping(p)
				d.unknown(p, fmt.Errorf("not a Kafka file: %w", serr))
				continue
			}
			if serr != nil {
				err = &IOError{Path: "-", Err: serr}
				break
			}
			d.stdinPath = tmp
			defer cleanup()
		}
		if err = d.dumpFile(p, true); err == errLimit {
			err = nil
			res.Files++
			break
		}
		if err != nil {
			var ioe *IOError
			if errors.As(err, &ioe) && ioe.Path != "stdout" && ioe.Path != "-" && ctx.Err() == nil {
				// A file that cannot be read (missing, a read error): said
				// on stderr (and as a JSON file object), and the rest of
				// the run goes on; exit 2 at the end (README, "Exit codes").
				d.r.unreadable(ioe.Path, ioe.Err)
				d.trouble(ioe.Path, ioe.Err)
				err = nil
				continue
			}
			if stopsTheRun(err) {
				break
			}
			if opts.JSON && !isIOError(err) && ctx.Err() == nil {
				// JSON reports the problem and goes on with the next file.
				d.findings++
				err = nil
				continue
			}
			break
		}
		res.Files++
	}
	if err == nil && !opts.JSON {
		d.printSummaries()
	}
	if ferr := d.r.flush(); ferr != nil && err == nil {
		err = &IOError{Path: "stdout", Err: ferr}
	}
	res.Findings = d.findings
	res.Troubles = d.troubles
	return res, err
}

// readerAtCloser is an open file: an *os.File, or a File from
// Options.Open.
type readerAtCloser interface {
	io.ReaderAt
	io.Closer
}

// openSegment opens a .log or .checkpoint for dumpLog.
func (d *dumper) openSegment(p string) (readerAtCloser, int64, error) {
	if d.opts.Open != nil {
		f, err := d.opened(p)
		if err != nil {
			return nil, 0, &IOError{Path: p, Err: err}
		}
		return f, f.Size(), nil
	}
	f, err := os.Open(d.openPath(p))
	if err != nil {
		return nil, 0, &IOError{Path: p, Err: err}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, &IOError{Path: p, Err: err}
	}
	if st.IsDir() {
		f.Close()
		return nil, 0, &IOError{Path: p, Err: errors.New("is a directory")}
	}
	return f, st.Size(), nil
}

// trouble records something that could not be dumped, says so on stderr
// after what was printed so far, and lets the dump go on.
func (d *dumper) trouble(p string, err error) {
	d.troubles = append(d.troubles, &IOError{Path: p, Err: err})
	d.r.flush()
	io.WriteString(d.errw, "klog: dump: "+p+": "+err.Error()+"\n")
}

func isIOError(err error) bool {
	var ioe *IOError
	return errors.As(err, &ioe)
}

type dumper struct {
	ctx      context.Context
	opts     Options
	r        renderer
	errw     io.Writer
	findings int
	// nonConsecutive holds, per absolute path in discovery order, the
	// (previous, offset) pairs of the deep iteration.
	ncPaths []string
	nc      map[string]*treeMap
	rr      format.RecordReader
	rec     format.Record
	// Index mismatches and time index errors, per absolute path.
	idxMisPaths []string
	idxMis      map[string]*treeMap
	tix         timeIndexErrors
	// dec is the --offsets-decoder etc. decoder (decoding.go); nil without one.
	dec *internaltopic.Decoder
	// cd renders contents through the decoder classes or the external
	// value decoder (classdecoder.go); nil for the default StringDecoder.
	cd *contentDecoder
	// stdinPath is the temporary copy of stdin that "-" names.
	stdinPath string
	troubles  []error
	// topic and part are the partition of the log being dumped (from its
	// directory's name; "" and -1 when it does not give them).
	topic string
	part  int32
	// kafkaFiles counts the files dumped (not ignored), so that a directory
	// named on the command line that holds none is trouble.
	kafkaFiles int
}

// javaPath normalises a path as java.io.File does on Unix: repeated slashes
// collapse and a trailing slash is dropped; "." and ".." stay.
func javaPath(p string) string {
	if p == "" {
		return p
	}
	var b strings.Builder
	prevSlash := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '/' {
			if prevSlash {
				continue
			}
			prevSlash = true
		} else {
			prevSlash = false
		}
		b.WriteByte(c)
	}
	s := b.String()
	if len(s) > 1 && strings.HasSuffix(s, "/") {
		s = s[:len(s)-1]
	}
	return s
}

// openPath is p resolved against Options.Cwd.
func (d *dumper) openPath(p string) string {
	if p == "-" && d.stdinPath != "" {
		return d.stdinPath
	}
	if strings.HasPrefix(p, "/") {
		return p
	}
	return filepath.Join(d.opts.Cwd, p)
}

func (d *dumper) absPath(p string) string {
	if d.opts.Open != nil || strings.HasPrefix(p, "/") {
		return p
	}
	if p == "" {
		return d.opts.Cwd
	}
	return strings.TrimSuffix(d.opts.Cwd, "/") + "/" + p
}

// dumpFile dumps one path; explicit is true for a path named on the
// command line (an unknown or missing one is then trouble, exit 2), false
// for one found in a directory (an unknown one is listed and skipped).
func (d *dumper) dumpFile(arg string, explicit bool) error {
	p := javaPath(arg)
	// A directory named on the command line is followed if it is a
	// symlink; one found inside a directory is not (a symlink loop would
	// never end), and is listed as an unknown file, as verify lists it.
	if p != "" && (explicit && isDir(d.openPath(p)) || !explicit && isRealDir(d.openPath(p))) {
		list, err := d.expandDir(p)
		if err != nil {
			// An unreadable directory: say so, go on with the rest.
			d.trouble(p, errors.Unwrap(err))
			return nil
		}
		files, troubles := d.kafkaFiles, len(d.troubles)
		for _, f := range list {
			if err := d.dumpFile(f, false); err != nil {
				return err
			}
		}
		if explicit && d.kafkaFiles == files && len(d.troubles) == troubles {
			// Named on the command line and nothing in it (or under it)
			// is a Kafka file: never a silent success, as for a file.
			d.trouble(p, errNoKafkaFile)
		}
		return nil
	}
	if p == "-" {
		d.r.dumping(p)
		return d.dumpLog(p, p)
	}
	name := filepath.Base(p)
	if p == "" || p == "/" {
		name = p
	}
	d.r.dumping(p)
	if known, err := d.dumpKnown(p, name); known {
		d.kafkaFiles++
		return err
	}
	// Kafka writes this to stderr while stdout is still buffered in the
	// same process; flush first so a terminal shows them in order.
	var why error
	if explicit {
		// Named on the command line: never a silent success.
		why = errors.New("not a Kafka file")
		if _, err := os.Stat(d.openPath(p)); err != nil && d.opts.Open == nil {
			why = errors.Unwrap(err)
		}
	}
	d.unknown(p, why)
	return nil
}

// unknown reports a file that is not a Kafka file as Kafka's tool does
// (Ignoring unknown file), and, when why is set (it was named on the
// command line), as trouble.
func (d *dumper) unknown(p string, why error) {
	d.r.ignored(p, why)
	d.r.flush()
	io.WriteString(d.errw, "Ignoring unknown file "+p+"\n")
	if why != nil {
		d.trouble(p, why)
	}
}

// errNoKafkaFile: a directory named on the command line holds no file dump
// reads (verify says the same of it).
var errNoKafkaFile = errors.New("holds no Kafka file (no segment, index, snapshot or checkpoint)")

// dumpKnown dumps p when its name is one dump reads; known is false for a
// file kafka-dump-log would ignore.
func (d *dumper) dumpKnown(p, name string) (known bool, err error) {
	switch {
	case name == "leader-epoch-checkpoint":
		return true, d.dumpLeaderEpochs(p)
	case offsetCheckpoints[name]:
		return true, d.dumpOffsetCheckpoint(p, name)
	case name == "partition.metadata":
		return true, d.dumpPartitionMetadata(p)
	}
	dot := strings.LastIndexByte(name, '.')
	if dot < 0 {
		return false, nil
	}
	switch name[dot:] {
	case ".log", ".checkpoint":
		return true, d.dumpLog(p, name)
	case ".index":
		return true, d.dumpIndex(p, name)
	case ".timeindex":
		return true, d.dumpTimeIndex(p, name)
	case ".snapshot":
		return true, d.dumpSnapshot(p)
	case ".txnindex":
		return true, d.dumpTxnIndex(p)
	}
	return false, nil
}

// dumpLog prints a .log or KRaft .checkpoint file (DumpLogSegments.dumpLog).
func (d *dumper) dumpLog(p, name string) error {
	if err := d.loadClasses(); err != nil {
		// messageParser() runs for each such file, before dumpLog prints.
		return &FatalError{Path: p, Err: err}
	}
	var header string
	if name == "-" || strings.HasSuffix(name, ".log") {
		start, err := strconv.ParseInt(strings.SplitN(name, ".", 2)[0], 10, 64)
		if err != nil {
			// stdin, or a segment renamed: read it all the same.
			header = "Log starting offset: unknown (the file name does not give it)"
		} else {
			header = "Log starting offset: " + strconv.FormatInt(start, 10)
		}
	} else if name == "bootstrap.checkpoint" {
		header = "KRaft bootstrap snapshot"
	} else {
		end, epoch, ok := partition.ParseKRaftSnapshotName(name)
		if !ok {
			return &FatalError{Path: p, Err: errors.New("not a KRaft snapshot name (<20-digit end offset>-<10-digit epoch>.checkpoint): " + strconv.Quote(name))}
		}
		header = "Snapshot end offset: " + strconv.FormatInt(end, 10) + ", epoch: " + strconv.FormatInt(int64(epoch), 10)
	}
	d.r.logHeader(p, header)
	d.topic, d.part = "", -1
	if t, n, ok := partition.NameOf(filepath.Dir(d.absPath(p))); ok {
		d.topic, d.part = t, n
	}

	f, fileSize, err := d.openSegment(p)
	if err != nil {
		return err
	}
	defer f.Close()
	size := fileSize
	if d.opts.MaxBytes >= 0 && d.opts.MaxBytes < size {
		size = d.opts.MaxBytes
	}
	d.r.fileStart(p, fileSize)
	d.rr.Decompressor.MaxBytes = d.opts.MaxDecompressedBytes
	var src io.ReaderAt = f
	if d.opts.OnBytes != nil {
		pr := safeio.NewProgressReaderAt(f, d.opts.OnBytes)
		defer pr.Done(fileSize)
		src = pr
	}
	sc := format.NewScanner(src, size, format.ScanOptions{MaxBatchBytes: d.opts.MaxBatchBytes})
	filter := d.opts.Filter
	if filter != nil && filter.FromOffset >= 0 {
		// Start where the broker would: the offset index's lookup.
		if pos := d.indexPosition(p, name, filter.FromOffset, size); pos > 0 {
			sc.SetPos(pos)
		}
	}
	abs := d.absPath(p)
	prev := int64(-1)
	var batches, records int64
	for {
		if batches&255 == 255 {
			if err := d.ctx.Err(); err != nil {
				return err
			}
		}
		b, err := sc.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *format.PosError
			if !errors.As(err, &pe) {
				return &IOError{Path: p, Err: err}
			}
			d.findings++
			prob := problemFromError(pe, verify.Classify(pe, verify.StageEntry))
			if t := sc.Tail(); t.Kind == format.TailZeros {
				prob.Kind, prob.Bytes = verify.KindTrailingBytes, i64(t.Bytes)
				prob.Message = strconv.FormatInt(t.Bytes, 10) + " zero bytes after the last batch (a preallocated or unclean segment): " + pe.Error()
			}
			d.r.problem(prob)
			if !d.opts.JSON {
				return &FatalError{Path: p, Err: errors.New(prob.Message)}
			}
			if sc.Done() {
				d.r.fileEnd(p, batches, records, sc.Tail())
				return nil
			}
			continue
		}
		if filter != nil {
			skip, done := filter.skipBatch(b)
			if done {
				d.r.fileEnd(p, batches, records, format.Tail{Pos: b.Pos, Offset: -1})
				return nil
			}
			if skip {
				continue
			}
		}
		batches++
		if !b.Compression().Known() {
			// CompressionType.forId throws while the batch line is being
			// built: Kafka has printed the part before "position:".
			d.findings++
			pe := &format.PosError{Kind: format.ErrUnsupported, Pos: b.Pos, Offset: b.BaseOffset, Field: "attributes",
				Msg: "Unknown compression type id: " + strconv.Itoa(int(b.Compression()))}
			d.r.batchPrefixOnly(b)
			d.r.problem(problemFromError(pe, verify.KindUnsupportedCodec))
			if !d.opts.JSON {
				return &FatalError{Path: p, Err: pe}
			}
			continue
		}
		valid := b.Valid()
		d.r.batch(b)
		if !valid {
			d.findings++
			d.r.problem(verify.Problem{Kind: verify.KindCRCMismatch, Position: b.Pos, Offset: b.BaseOffset,
				Stored: u32(b.CRC), Computed: u32(b.ComputedCRC()),
				Message: "stored crc " + format.CRC(b.CRC).String() + " != computed " + format.CRC(b.ComputedCRC()).String()})
		}
		if b.Magic > format.MagicV2 || b.Magic < 0 {
			d.findings++
			d.r.problem(verify.Problem{Kind: verify.KindBadMagic, Position: b.Pos, Offset: b.BaseOffset,
				Message: "unknown magic " + strconv.Itoa(int(b.Magic)) + " read as v2, as Kafka does"})
		}
		if !d.opts.Deep {
			continue
		}
		if err := d.rr.Reset(b); err != nil {
			return d.recordProblem(p, err)
		}
		for n := 0; ; n++ {
			if n&4095 == 4095 {
				// A batch can hold millions of records: a signal must not
				// wait for its end.
				if err := d.ctx.Err(); err != nil {
					return err
				}
			}
			err := d.rr.Next(&d.rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				if ferr := d.recordProblem(p, err); ferr != nil {
					return ferr
				}
				break
			}
			r := &d.rec
			if filter != nil {
				if !filter.keepRecord(r) {
					continue
				}
			} else if r.Offset != prev+1 {
				d.noteGap(abs, prev, r.Offset)
			}
			prev = r.Offset
			if !d.opts.View.Take(d.topic, d.part, b, r) {
				if d.opts.View.Full() {
					return errLimit
				}
				continue
			}
			records++
			d.decodeRecord(b, r) // decoding.go
			if ferr := d.r.record(b, r); ferr != nil {
				var vde *ValueDecoderError
				if errors.As(ferr, &vde) {
					return ferr
				}
				d.findings++
				pe := &format.PosError{Kind: format.ErrCorrupt, Pos: b.Pos, Offset: r.Offset, Field: "control", Msg: ferr.Error()}
				kind := verify.KindControlDecode
				switch {
				case d.dec != nil && !b.IsControl():
					// A coordinator decoder met a keyless record: Kafka dies.
					pe.Field, pe.Msg, kind = "key", internaltopic.MissingKeyMessage(r.Offset), verify.KindRecordDecode
				case isShortBytes(ferr):
					// A decoder class threw: Kafka dies.
					pe.Field, kind = "value", verify.KindRecordDecode
				}
				d.r.problem(problemFromError(pe, kind))
				if !d.opts.JSON {
					return &FatalError{Path: p, Err: pe}
				}
			}
			d.reportDecodeProblem(b, r) // decoder.go
			d.reportViewProblem(b, r)
			if d.opts.View.Full() {
				return errLimit
			}
		}
	}
	t := sc.Tail()
	if t.Bytes > 0 && d.opts.MaxBytes < 0 {
		d.findings++
		d.r.trailing(name, t, verify.TailProblem(f, t))
	}
	d.r.fileEnd(p, batches, records, t)
	return nil
}

// indexPosition is the position the .index beside a segment gives for
// offset (OffsetIndex.lookup), or 0 when there is no usable index.
func (d *dumper) indexPosition(p, name string, offset, size int64) (pos int64) {
	base, ok := baseOffsetFromName(name)
	if !ok {
		return 0
	}
	data, unmap, err := safeio.Map(d.openPath(filepath.Join(filepath.Dir(p), strings.SplitN(name, ".", 2)[0]+".index")))
	if err != nil {
		return 0
	}
	defer unmap()
	defer func() {
		if r := recover(); r != nil {
			if !safeio.IsFault(r) {
				panic(r)
			}
			pos = 0 // the index shrank while read: scan from the start
		}
	}()
	idx := format.OffsetIndex{BaseOffset: base, Data: data[:len(data)/format.OffsetIndexEntrySize*format.OffsetIndexEntrySize]}
	idx.Data = idx.Data[:idx.Used()*format.OffsetIndexEntrySize]
	pos = idx.Lookup(offset).Pos
	if pos < 0 || pos >= size {
		return 0
	}
	return pos
}

// recordProblem reports a record decoding error: fatal in text mode (Kafka
// throws), a problem object in JSON mode.
func (d *dumper) recordProblem(p string, err error) error {
	d.findings++
	var pe *format.PosError
	if !errors.As(err, &pe) {
		pe = &format.PosError{Kind: format.ErrCorrupt, Offset: -1, Msg: err.Error()}
	}
	d.r.problem(problemFromError(pe, verify.Classify(pe, verify.StageRecords)))
	if !d.opts.JSON {
		return &FatalError{Path: p, Err: err}
	}
	return nil
}

func (d *dumper) noteGap(abs string, prev, off int64) {
	if d.nc == nil {
		d.nc = make(map[string]*treeMap)
	}
	m := d.nc[abs]
	if m == nil {
		m = &treeMap{m: map[int64]int64{}}
		d.nc[abs] = m
		d.ncPaths = append(d.ncPaths, abs)
	}
	m.put(prev, off)
}

// printSummaries writes Kafka's end-of-run stderr reports, in its order:
// index mismatches, time index errors, non-consecutive offsets.
func (d *dumper) printSummaries() {
	var b []byte
	// A TreeMap in reverse key order: descending index offset.
	b = appendTreeMapGroups(b, d.idxMisPaths, d.idxMis, true, "Mismatches in :", "  Index offset: ", ", log offset: ")
	b = appendGroups(b, d.tix.mismatchKeys, d.tix.mismatch, "Found timestamp mismatch in :", "  Index timestamp: ", ", log timestamp: ")
	b = appendGroups(b, d.tix.outOfOrderKeys, d.tix.outOfOrder, "Found out of order timestamp in :", "  Index timestamp: ", ", Previously indexed timestamp: ")
	b = appendGroups(b, d.tix.notFoundKeys, d.tix.notFound, "The following indexed offsets are not found in :", "Indexed offset: ", ", found log offset: ")
	// A TreeMap keyed by the previous offset: ascending.
	b = appendTreeMapGroups(b, d.ncPaths, d.nc, false, "Non-consecutive offsets in ", "  ", " is followed by ")
	if len(b) == 0 {
		return
	}
	d.r.flush()
	d.errw.Write(b)
}

// maxSummaryKeys bounds the distinct keys kept per file for an end-of-run
// summary. Kafka keeps a TreeMap per file (DumpLogSegments: a later pair
// with the same key replaces the earlier one), so memory follows distinct
// keys, not records: an offset-delta bomb of millions of records at one
// offset is one entry. Past the bound, keys are counted, not kept.
const maxSummaryKeys = 1 << 20

// treeMap is one file's summary: key -> the last value put for it.
type treeMap struct {
	m       map[int64]int64
	dropped int64
}

func (t *treeMap) put(k, v int64) {
	if _, ok := t.m[k]; !ok && len(t.m) >= maxSummaryKeys {
		t.dropped++
		return
	}
	t.m[k] = v
}

// appendTreeMapGroups writes a report Kafka keeps as a HashMap of TreeMaps:
// files in HashMap order, then each file's pairs sorted by key (descending
// when desc).
func appendTreeMapGroups(b []byte, keys []string, m map[string]*treeMap, desc bool, header, first, second string) []byte {
	for _, abs := range javaHashMapOrder(keys) {
		t := m[abs]
		ks := make([]int64, 0, len(t.m))
		for k := range t.m {
			ks = append(ks, k)
		}
		sort.Slice(ks, func(i, j int) bool {
			if desc {
				return ks[i] > ks[j]
			}
			return ks[i] < ks[j]
		})
		b = append(b, header...)
		b = append(b, abs...)
		b = append(b, '\n')
		for _, k := range ks {
			b = append(b, first...)
			b = strconv.AppendInt(b, k, 10)
			b = append(b, second...)
			b = strconv.AppendInt(b, t.m[k], 10)
			b = append(b, '\n')
		}
		if t.dropped > 0 {
			b = append(b, "klog: "...)
			b = strconv.AppendInt(b, t.dropped, 10)
			b = append(b, " more entries not kept (over "...)
			b = strconv.AppendInt(b, maxSummaryKeys, 10)
			b = append(b, " per file)\n"...)
		}
	}
	return b
}

// appendGroups writes one TimeIndexDumpErrors report: per file (HashMap
// order) a header and its pairs in discovery order.
func appendGroups(b []byte, keys []string, m map[string][][2]int64, header, first, second string) []byte {
	for _, abs := range javaHashMapOrder(keys) {
		b = append(b, header...)
		b = append(b, abs...)
		b = append(b, '\n')
		for _, pr := range m[abs] {
			b = append(b, first...)
			b = strconv.AppendInt(b, pr[0], 10)
			b = append(b, second...)
			b = strconv.AppendInt(b, pr[1], 10)
			b = append(b, '\n')
		}
	}
	return b
}

// problemFromError is the finding for pe, of the given kind.
func problemFromError(pe *format.PosError, kind verify.Kind) verify.Problem {
	return verify.Problem{Kind: kind, Position: pe.Pos, Offset: pe.Offset, Message: pe.Error()}
}

func u32(v uint32) *uint32 { return &v }
func i64(v int64) *int64   { return &v }

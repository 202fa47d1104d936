package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/extdecode"
	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/payload"
	"github.com/urfave/cli/v2"
)

var (
	dumpFilesFlag   = &cli.StringFlag{Name: "files", Usage: "comma-separated list of files to dump (kafka-dump-log's --files; split on ',' without trimming)"}
	printDataFlag   = &cli.BoolFlag{Name: "print-data-log", Usage: "print keys and values; implies --deep-iteration"}
	deepFlag        = &cli.BoolFlag{Name: "deep-iteration", Usage: "print every record of every batch"}
	skipMetaFlag    = &cli.BoolFlag{Name: "skip-record-metadata", Usage: "omit per-record metadata in deep iteration"}
	maxBytesFlag    = &cli.Int64Flag{Name: "max-bytes", Value: 2147483647, Usage: "read only the first N bytes of each .log/.checkpoint (whole batches only)"}
	jsonFlag        = &cli.BoolFlag{Name: "json", Aliases: []string{"J"}, Usage: "write NDJSON, one object per line, instead of kafka-dump-log's text"}
	keyEncFlag      = &cli.StringFlag{Name: "key-encoding", Value: "text", Usage: "text (Kafka's), hex, base64 or redacted (size and hash only)"}
	valueEncFlag    = &cli.StringFlag{Name: "value-encoding", Value: "text", Usage: "text (Kafka's), hex, base64 or redacted (size and hash only)"}
	fromOffsetFlag  = &cli.StringFlag{Name: "from-offset", Usage: "only records at or after this offset (seeks through the .index): N, -N (the last N), earliest or latest"}
	toOffsetFlag    = &cli.StringFlag{Name: "to-offset", Usage: "only records at or before this offset: N, -N (N before the log end), earliest or latest"}
	fromTSFlag      = &cli.StringFlag{Name: "from-timestamp", Usage: "only records with timestamp >= `T` (epoch ms, RFC 3339, or -1h for an hour ago)"}
	toTSFlag        = &cli.StringFlag{Name: "to-timestamp", Usage: "only records with timestamp <= `T` (epoch ms, RFC 3339, or -1h for an hour ago)"}
	pidFilterFlag   = &cli.Int64Flag{Name: "producer-id", Value: -1, Usage: "only batches of this producer id"}
	controlOnlyFlag = &cli.BoolFlag{Name: "control-only", Usage: "only control batches (transaction markers, KRaft control records)"}
	noControlFlag   = &cli.BoolFlag{Name: "no-control", Usage: "skip control batches"}
	verifyIdxFlag   = &cli.BoolFlag{Name: "verify-index-only", Usage: "check .index/.timeindex entries against the log without printing them"}
	sanityFlag      = &cli.BoolFlag{Name: "index-sanity-check", Usage: "run only the broker's sanity check on .index/.timeindex files"}
	maxMsgFlag      = &cli.IntFlag{Name: "max-message-size", Value: 5242880, Usage: "bytes to read at each indexed position when checking an .index"}
	maxBatchFlag    = &cli.IntFlag{Name: "max-batch-bytes", Value: 0, Usage: "largest batch to read (0: 256 MiB)"}

	// kafka-dump-log's message decoders; each implies --print-data-log. If
	// several are given, the first of this list wins, as in Kafka.
	offsetsDecoderFlag  = &cli.BoolFlag{Name: "offsets-decoder", Usage: "print __consumer_offsets records as JSON (implies --print-data-log)"}
	txnLogDecoderFlag   = &cli.BoolFlag{Name: "transaction-log-decoder", Usage: "print __transaction_state records as JSON (implies --print-data-log)"}
	clusterMetadataFlag = &cli.BoolFlag{Name: "cluster-metadata-decoder", Usage: "print KRaft __cluster_metadata records as JSON (implies --print-data-log)"}
	// --key-decoder-class and --value-decoder-class take an optional value
	// (jopt-simple's withOptionalArg): given without one they mean the
	// default, StringDecoder, and still imply --print-data-log.
	keyDecoderClassFlag = &optionalStringFlag{cli.StringFlag{Name: "key-decoder-class", Value: dump.DefaultDecoderClass,
		Usage: "decode keys with this org.apache.kafka.tools.api Decoder: StringDecoder, IntegerDecoder, LongDecoder, or DefaultDecoder (printed as hex; implies --print-data-log)"}}
	valueDecoderClassFlag = &optionalStringFlag{cli.StringFlag{Name: "value-decoder-class", Value: dump.DefaultDecoderClass,
		Usage: "decode values with this Decoder class, as --key-decoder-class (implies --print-data-log)"}}
	valueDecoderCmdFlag     = &cli.StringFlag{Name: "value-decoder-cmd", Usage: "decode values with `CMD`, run once by the shell: it reads one hex-encoded value per line and answers one line each (implies --print-data-log)"}
	valueDecoderTimeoutFlag = &cli.DurationFlag{Name: "value-decoder-timeout", Value: extdecode.DefaultTimeout, Usage: "how long --value-decoder-cmd may take to answer one value"}
	dumpVersionFlag         = &cli.BoolFlag{Name: "version", Usage: "print the Kafka version whose kafka-dump-log klog reproduces (4.3.1) and exit (klog's own: klog version)"}
	remoteLogFlag           = &cli.BoolFlag{Name: "remote-log-metadata-decoder", Usage: "print __remote_log_metadata records (tiered storage) as Kafka's objects print them; typed objects with --json (implies --print-data-log)"}
	shareStateFlag          = &cli.BoolFlag{Name: "share-group-state-decoder", Usage: "print __share_group_state records as JSON (implies --print-data-log)"}
)

var dumpCommand = &cli.Command{
	Name:      "dump",
	Usage:     "print log segments, indexes and snapshots exactly as kafka-dump-log.sh (Kafka 4.3.1) does, or as NDJSON",
	ArgsUsage: "[FILE...]",
	Description: `Files come from --files a,b and from arguments, in that order.
Text output is byte-identical to kafka-dump-log.sh of Kafka 4.3.1 on stdout and
stderr, except that where Kafka dies with a stack trace klog prints one problem
line ("klog: dump: FILE: ...") naming the position and offset.
A FILE of - reads a segment from stdin; a stream whose first bytes cannot
start a segment is not a Kafka file. A file named here that is not a
Kafka file, or does not exist, is reported and makes the exit status 2; in
a directory such files are listed ("Ignoring unknown file") and skipped.
Exit status: 0 clean; 1 an invalid batch, invalid trailing bytes or an
undecodable record was met; 2 usage or I/O trouble.`,
	Flags: append([]cli.Flag{noProgressFlag, dumpFilesFlag, printDataFlag, deepFlag, skipMetaFlag, maxBytesFlag, verifyIdxFlag, sanityFlag, maxMsgFlag,
		jsonFlag, maxBatchFlag, offsetsDecoderFlag, txnLogDecoderFlag, clusterMetadataFlag, remoteLogFlag, shareStateFlag,
		keyDecoderClassFlag, valueDecoderClassFlag, valueDecoderCmdFlag, valueDecoderTimeoutFlag, keyEncFlag, valueEncFlag,
		fromOffsetFlag, toOffsetFlag, fromTSFlag, toTSFlag, pidFilterFlag, controlOnlyFlag, noControlFlag, groupFlag, dumpVersionFlag},
		recordPayloadFlags...),
	Action: runDump,
}

// dumpFilter reads the filter flags; nil when none is given.
func dumpFilter(c *cli.Context, files []string) (*dump.Filter, error) {
	set := c.IsSet(pidFilterFlag.Name) || c.Bool(controlOnlyFlag.Name) || c.Bool(noControlFlag.Name)
	for _, fl := range []*cli.StringFlag{fromOffsetFlag, toOffsetFlag, fromTSFlag, toTSFlag} {
		set = set || c.IsSet(fl.Name)
	}
	if !set {
		return nil, nil
	}
	f := dump.NewFilter()
	var err error
	if f.FromOffset, err = dumpOffset(c, fromOffsetFlag, files); err != nil {
		return nil, err
	}
	if f.ToOffset, err = dumpOffset(c, toOffsetFlag, files); err != nil {
		return nil, err
	}
	if f.FromTimestamp, err = dumpTime(c, fromTSFlag); err != nil {
		return nil, err
	}
	if f.ToTimestamp, err = dumpTime(c, toTSFlag); err != nil {
		return nil, err
	}
	f.ProducerID = c.Int64(pidFilterFlag.Name)
	f.ControlOnly, f.NoControl = c.Bool(controlOnlyFlag.Name), c.Bool(noControlFlag.Name)
	if f.ControlOnly && f.NoControl {
		return nil, usageError("dump: --control-only and --no-control exclude each other")
	}
	return f, nil
}

// dumpFiles is the files --files and the arguments name, checked with
// the flags that bound their reading.
func dumpFiles(c *cli.Context) ([]string, error) {
	var files []string
	if c.IsSet(dumpFilesFlag.Name) {
		files = append(files, strings.Split(c.String(dumpFilesFlag.Name), ",")...)
	}
	files = append(files, c.Args().Slice()...)
	if len(files) == 0 {
		return nil, usageError("dump: no files given (use --files or FILE arguments)")
	}
	// kafka-dump-log's --max-message-size is an int; a negative one (it
	// fails FileRecords.slice) was taken for a read of nothing.
	return files, int32Flags(c, maxMsgFlag.Name)
}

func runDump(c *cli.Context) error {
	if c.Bool(dumpVersionFlag.Name) {
		// kafka-dump-log.sh --version prints its Kafka's version.
		_, err := io.WriteString(c.App.Writer, kafkaVersion+"\n")
		return err
	}
	files, err := dumpFiles(c)
	if err != nil {
		return err
	}
	opts := dump.Options{
		Deep:               c.Bool(deepFlag.Name),
		PrintData:          c.Bool(printDataFlag.Name),
		SkipRecordMetadata: c.Bool(skipMetaFlag.Name),
		MaxBytes:           -1,
		JSON:               c.Bool(jsonFlag.Name),
		MaxBatchBytes:      c.Int(maxBatchFlag.Name),
		VerifyIndexOnly:    c.Bool(verifyIdxFlag.Name),
		IndexSanityOnly:    c.Bool(sanityFlag.Name),
		MaxMessageSize:     c.Int(maxMsgFlag.Name),
	}
	if opts.KeyEncoding, err = ndjson.ParseEncoding(c.String(keyEncFlag.Name)); err != nil {
		return usageError("dump: --key-encoding: %v", err)
	}
	if opts.ValueEncoding, err = ndjson.ParseEncoding(c.String(valueEncFlag.Name)); err != nil {
		return usageError("dump: --value-encoding: %v", err)
	}
	if opts.Filter, err = dumpFilter(c, files); err != nil {
		return err
	}
	if opts.View, err = dumpView(c, files); err != nil {
		return err
	}
	stop, err := dumpDecoders(c, &opts)
	if err != nil {
		return err
	}
	defer stop()
	if opts.View.Decodes() && (opts.Decoder != internaltopic.None || opts.KeyDecoderClass != nil || opts.ValueDecoderClass != nil || opts.ValueDecoder != nil) {
		return usageError("dump: --key-format/--value-format and kafka-dump-log's decoders (--offsets-decoder, --*-decoder-class, --value-decoder-cmd) exclude each other")
	}
	if c.IsSet(maxBytesFlag.Name) {
		opts.MaxBytes = c.Int64(maxBytesFlag.Name)
		if opts.MaxBytes < 0 {
			return usageError("dump: --max-bytes must not be negative")
		}
		if opts.MaxBytes == 2147483647 {
			// Kafka compares with Integer.MAX_VALUE: the default value
			// given explicitly behaves as not given.
			opts.MaxBytes = -1
		}
	}
	opts.Stdin = c.App.Reader
	// The dump itself is the data: no bar while it goes to the terminal.
	bar := newProgress(c, "dumping", true, func() int64 {
		var logs []string
		for _, f := range files {
			if strings.HasSuffix(f, ".log") || strings.HasSuffix(f, ".checkpoint") {
				logs = append(logs, f)
			}
		}
		return sizeOf(logs)
	})
	opts.OnBytes = bar.addFunc()
	res, err := dump.RunContext(c.Context, files, opts, c.App.Writer, c.App.ErrWriter)
	bar.finish()
	whereFailed(c, opts.View)
	if serr := stop(); err == nil && serr != nil {
		err = &dump.ValueDecoderError{Offset: -1, Err: serr}
	}
	return dumpExit(c, opts, res, err)
}

// dumpView reads the payload flags; schemas are looked for in the log dir
// of the first file's partition.
func dumpView(c *cli.Context, files []string) (*payload.View, error) {
	dir := files[0]
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = filepath.Dir(dir)
	}
	return payloadView(c, []string{dir}, c.Bool(jsonFlag.Name))
}

// kafkaVersion is the Kafka release whose kafka-dump-log output klog
// reproduces.
const kafkaVersion = "4.3.1"

// dumpDecoders reads the message decoder flags (the first of Kafka's order
// wins), --key-decoder-class, --value-decoder-class and --value-decoder-cmd
// into opts and starts the external decoder; stop ends it (and says how it
// ended).
func dumpDecoders(c *cli.Context, opts *dump.Options) (stop func() error, err error) {
	stop = func() error { return nil }
	switch {
	case c.Bool(offsetsDecoderFlag.Name):
		opts.Decoder = internaltopic.Offsets
	case c.Bool(txnLogDecoderFlag.Name):
		opts.Decoder = internaltopic.TransactionLog
	case c.Bool(clusterMetadataFlag.Name):
		opts.Decoder = internaltopic.ClusterMetadata
	case c.Bool(remoteLogFlag.Name):
		opts.Decoder = internaltopic.RemoteLog
	case c.Bool(shareStateFlag.Name):
		opts.Decoder = internaltopic.ShareGroupState
	}
	for _, f := range []*optionalStringFlag{keyDecoderClassFlag, valueDecoderClassFlag} {
		if c.IsSet(f.Name) {
			name := c.String(f.Name)
			if f == keyDecoderClassFlag {
				opts.KeyDecoderClass = &name
			} else {
				opts.ValueDecoderClass = &name
			}
		}
	}
	cmd := c.String(valueDecoderCmdFlag.Name)
	switch {
	case !c.IsSet(valueDecoderCmdFlag.Name):
		return stop, nil
	case cmd == "":
		return stop, usageError("dump: --value-decoder-cmd is empty")
	case opts.ValueDecoderClass != nil:
		return stop, usageError("dump: --value-decoder-cmd and --value-decoder-class exclude each other")
	case opts.Decoder != internaltopic.None:
		return stop, usageError("dump: --value-decoder-cmd and --%s exclude each other", opts.Decoder)
	case c.IsSet(valueEncFlag.Name):
		return stop, usageError("dump: --value-decoder-cmd and --value-encoding exclude each other")
	}
	ext, err := extdecode.Start(c.Context, extdecode.Options{Command: cmd, Timeout: c.Duration(valueDecoderTimeoutFlag.Name), Stderr: c.App.ErrWriter})
	if err != nil {
		return stop, fail("dump", err)
	}
	opts.ValueDecoder = valueDecoderFunc(func(_ int64, v []byte) ([]byte, error) { return ext.Decode(v) })
	var once sync.Once
	var cerr error
	return func() error {
		once.Do(func() { cerr = ext.Close() })
		return cerr
	}, nil
}

// valueDecoderFunc adapts a function to dump.ValueDecoder.
type valueDecoderFunc func(offset int64, value []byte) ([]byte, error)

func (f valueDecoderFunc) DecodeValue(offset int64, value []byte) ([]byte, error) {
	return f(offset, value)
}

// dumpExit maps a dump's result to the exit-code contract; a JSON stream
// stopped by a signal ends with an "interrupted" object.
func dumpExit(c *cli.Context, opts dump.Options, res dump.Result, err error) error {
	var ioe *dump.IOError
	var fe *dump.FatalError
	var dce *dump.DecoderClassError
	switch {
	case interrupted(c.Context) != nil:
		if opts.JSON {
			// NDJSON readers see that the stream stops short.
			io.WriteString(c.App.Writer, `{"type":"interrupted","reason":"`+interrupted(c.Context).Error()+`"}`+"\n")
		}
		return interrupted(c.Context)
	case errors.As(err, &ioe):
		return fail("dump", ioe)
	case errors.As(err, &dce):
		// A class Kafka cannot load: its tool dies; a usage error here.
		return usageError("dump: %v", err)
	case errors.As(err, &fe):
		return findingsError("dump: %w", fe)
	case err != nil:
		return fail("dump", err)
	}
	if len(res.Troubles) > 0 {
		return troubleError("")
	}
	if res.Findings > 0 {
		return findingsError("")
	}
	return nil
}

// recordOptions reads --key-encoding and --value-encoding for the JSON
// record objects of any record-printing command.
func recordOptions(c *cli.Context, data bool) (ndjson.Options, error) {
	opts := ndjson.Options{Data: data}
	var err error
	if opts.KeyEncoding, err = ndjson.ParseEncoding(c.String(keyEncFlag.Name)); err != nil {
		return opts, usageError("%s: --key-encoding: %v", commandPath(c), err)
	}
	if opts.ValueEncoding, err = ndjson.ParseEncoding(c.String(valueEncFlag.Name)); err != nil {
		return opts, usageError("%s: --value-encoding: %v", commandPath(c), err)
	}
	return opts, nil
}

// writeJSONLine writes v as one JSON object of the given type; a write
// error shows again when the output is flushed.
func writeJSONLine(w io.Writer, typ string, v any) error { return ndjson.WriteTyped(w, typ, v) }

// writeJSON writes v, which has its own "type" field, as one JSON line.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// dumpOffset reads an offset filter flag; -1 when not given. earliest,
// latest and -N are read against the partition directory holding the
// files (its log start and log end offsets), so the files must share one.
func dumpOffset(c *cli.Context, flag *cli.StringFlag, files []string) (int64, error) {
	if !c.IsSet(flag.Name) {
		return -1, nil
	}
	o, err := parseOffset(c.String(flag.Name))
	if err != nil {
		return 0, usageError("dump: --%s: %v", flag.Name, err)
	}
	if o.kind == offsetAbsolute {
		return o.n, nil
	}
	// A partition directory named as an argument is its own partition; a
	// file's is the directory holding it.
	partDir := func(f string) string {
		if st, err := os.Stat(f); err == nil && st.IsDir() {
			return filepath.Clean(f)
		}
		return filepath.Dir(f)
	}
	dir := partDir(files[0])
	for _, f := range files[1:] {
		if partDir(f) != dir {
			return 0, usageError("dump: --%s %s needs the files of one partition directory", flag.Name, o)
		}
	}
	off, err := o.resolveIn(dir, c.String(groupFlag.Name))
	switch {
	case errors.Is(err, errStoredNeedsGroup):
		return 0, usageError("dump: --%s: %v", flag.Name, err)
	case err != nil:
		return 0, troubleError("dump: --%s %s: %w", flag.Name, o, err)
	case o.kind == offsetTimeEnd && flag == toOffsetFlag:
		// e@T ends before the first record at T; --to-offset is inclusive.
		off--
	}
	return off, nil
}

// dumpTime reads a timestamp filter flag; -1 when not given.
func dumpTime(c *cli.Context, flag *cli.StringFlag) (int64, error) {
	if !c.IsSet(flag.Name) {
		return -1, nil
	}
	ts, err := parseTime(c.String(flag.Name))
	if err != nil {
		return 0, usageError("dump: --%s: %v", flag.Name, err)
	}
	return ts, nil
}

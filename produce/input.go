package produce

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
)

// InputFormat is how records arrive on a producer's input.
type InputFormat int8

// Input formats.
const (
	// InputLines is kafka-console-producer's: one value per line (an
	// empty line is an empty value, not a null), optionally "key<sep>value".
	InputLines InputFormat = iota
	// InputJSON is one object per line: {"key", "value", "keyEncoding",
	// "valueEncoding", "headers": [{"key", "keyEncoding", "value",
	// "valueEncoding"}], "timestamp"}, the byte convention of klog's JSON
	// output (strings, null, or base64/hex with the encoding beside).
	InputJSON
)

// ParseInputFormat reads lines or json.
func ParseInputFormat(s string) (InputFormat, error) {
	switch s {
	case "", "lines":
		return InputLines, nil
	case "json":
		return InputJSON, nil
	}
	return 0, errors.New("input must be lines or json, got " + strconv.Quote(s))
}

// InputError is an input line that is not a record.
type InputError struct {
	Line int // 1-based
	Err  error
}

func (e *InputError) Error() string {
	return "input line " + strconv.Itoa(e.Line) + ": " + e.Err.Error()
}

func (e *InputError) Unwrap() error { return e.Err }

// Feed is a console producer: it reads records from an input, one per
// line, and appends them in batches of at most MaxRecords records, closing
// a batch early once its keys and values reach MaxBytes (the producer's
// batch.size). Each batch is Template with the records. The zero value
// reads lines and sends each record as its own batch.
type Feed struct {
	Format InputFormat
	// KeySeparator splits an InputLines line into key and value at its
	// first occurrence ("": no key).
	KeySeparator string
	MaxRecords   int // 0: 1
	MaxBytes     int // 0: no bound other than MaxRecords
	Template     Batch
	// Headers are added to every record, after its own (kcat's -H).
	Headers []format.Header
	// EncodeKey and EncodeValue, when set, turn an InputJSON record's key
	// or value, any JSON value there (not null), into the record's bytes
	// (a schema's encoding: package schema's Decoder.Encode).
	EncodeKey, EncodeValue func(js []byte) ([]byte, error)
	// Flushed, when set, is called after the results of each write to
	// the log were given to Run's sent (a console producer flushes its
	// responses then).
	Flushed func()
}

// Run appends every record of r to a and calls sent with each batch's
// result as soon as it is in the log (a producer's response is sent then,
// not at the end). A line that is not a record is an *InputError; the
// batches before it are appended. ctx is checked between lines.
//
// Batches are written together, about 1 MiB at a time, and whenever the
// input has nothing more to read at once (before a read that would wait),
// so that a record a console producer was given is not held back: a batch
// is acknowledged only once it and its index entries are in the files.
// Lines are slices of one read buffer (copied out only when the buffer
// moves under a batch not yet staged): nothing is allocated per line.
func (f *Feed) Run(ctx context.Context, a *Appender, r io.Reader, sent func(Result)) error {
	maxRecs := max(1, f.MaxRecords)
	batch := f.Template
	batch.Records = nil
	pending := 0
	// lines holds the bytes of the batch's first kept InputLines records
	// once the input buffer was about to reuse them (lineReader.keep).
	var lines []byte
	kept := 0
	report, acked := sent, false
	if f.Flushed != nil {
		report = func(r Result) {
			if sent != nil {
				sent(r)
			}
			acked = true
		}
	}
	done := func() {
		if acked {
			acked = false
			f.Flushed()
		}
	}
	// flush writes the staged batches: a producer's are written one by
	// one, as its sequences continue from the model.
	flush := func() error {
		err := a.flush(report)
		done()
		return err
	}
	stage := func() error {
		if len(batch.Records) == 0 {
			return nil
		}
		err := a.stage(&batch, report)
		done()
		if err == nil && batch.Producer != nil {
			err = flush()
		}
		batch.Records, pending, lines, kept = batch.Records[:0], 0, lines[:0], 0
		return err
	}
	end := func(err error) error {
		if serr := stage(); err == nil {
			err = serr
		}
		if ferr := flush(); err == nil {
			err = ferr
		}
		return err
	}
	// Before a read that could wait, the batch being filled is cut and
	// written with what is staged, as a producer's linger.ms ends a batch
	// not full: a line typed or piped in is not held back for the lines
	// that may follow it (a file never waits: its batches are cut only by
	// MaxRecords and MaxBytes).
	fr := &flushingReader{r: r, pending: func() bool { return a.st.open || len(batch.Records) > 0 }, flush: func() error {
		if err := stage(); err != nil {
			return err
		}
		return flush()
	}}
	if rd, ok := r.(interface{ Ready() bool }); ok {
		fr.ready = rd.Ready
	} else if safeio.NeverWaits(r) {
		fr.ready = func() bool { return true }
	}
	// The batch's lines are slices of the reader's buffer until it is
	// about to reuse their bytes: then the ones not yet staged are copied
	// into lines (once a 1 MiB buffer, a batch's worth at most).
	in := &lineReader{r: fr, buf: make([]byte, lineBuffer), keep: func() {
		if f.Format == InputJSON {
			return // parsed into the records' own bytes
		}
		for i := kept; i < len(batch.Records); i++ {
			rec := &batch.Records[i]
			if rec.Key != nil {
				n := len(lines)
				lines = append(lines, rec.Key...)
				rec.Key = lines[n:len(lines):len(lines)]
			}
			n := len(lines)
			lines = append(lines, rec.Value...)
			rec.Value = lines[n:len(lines):len(lines)]
		}
		kept = len(batch.Records)
	}}
	for lineNo := 1; ; lineNo++ {
		if err := ctx.Err(); err != nil {
			// What is staged was appended before the end, as it would
			// have been written at once.
			if ferr := flush(); ferr != nil {
				return ferr
			}
			return err
		}
		line, err := in.line()
		if line == nil && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			if ferr := flush(); ferr != nil {
				return ferr
			}
			return fmt.Errorf("reading input: %w", err)
		}
		// Parsed in place, in the batch's next record (a Record is big
		// enough that copying it twice a line showed in profiles).
		batch.Records = append(batch.Records, format.Record{})
		rec := &batch.Records[len(batch.Records)-1]
		skip, perr := f.parse(rec, trimNewline(line))
		if perr != nil || skip {
			batch.Records = batch.Records[:len(batch.Records)-1]
		}
		if perr != nil {
			return end(&InputError{Line: lineNo, Err: perr})
		}
		if skip {
			continue
		}
		pending += len(rec.Key) + len(rec.Value)
		if len(batch.Records) >= maxRecs || (f.MaxBytes > 0 && pending >= f.MaxBytes) {
			if err := stage(); err != nil {
				flush()
				return err
			}
		}
	}
	return end(nil)
}

// lineBuffer is the size of a Feed's input buffer (it grows for a longer
// line).
const lineBuffer = 1 << 20

// lineReader hands out the lines of r as slices of its own buffer (no copy
// a line): a line stays valid until a later call moves the unread bytes to
// the buffer's front, which it does only after calling keep, so that the
// lines still needed can be copied out first.
type lineReader struct {
	r    io.Reader
	keep func()
	buf  []byte
	// buf[next:w] is read and not yet handed out; buf[next:scan] holds no
	// newline.
	next, scan, w int
	err           error
}

// line returns the next line with its newline, if any; the last line
// without one comes with the reader's error (io.EOF at the end); nil and
// the error once nothing is left.
func (lr *lineReader) line() ([]byte, error) {
	empty := 0
	for {
		if i := bytes.IndexByte(lr.buf[lr.scan:lr.w], '\n'); i >= 0 {
			end := lr.scan + i + 1
			line := lr.buf[lr.next:end:end]
			lr.next, lr.scan = end, end
			return line, nil
		}
		lr.scan = lr.w
		if lr.err != nil {
			if lr.next == lr.w {
				return nil, lr.err
			}
			line := lr.buf[lr.next:lr.w:lr.w]
			lr.next = lr.w
			return line, lr.err
		}
		if len(lr.buf)-lr.w < len(lr.buf)/4 && lr.next > 0 {
			lr.keep()
			n := copy(lr.buf, lr.buf[lr.next:lr.w])
			lr.scan -= lr.next
			lr.next, lr.w = 0, n
		}
		if lr.w == len(lr.buf) {
			// A line longer than the buffer (nothing before it is
			// handed out since the last move: lr.next is 0).
			lr.buf = append(lr.buf, make([]byte, len(lr.buf))...)
		}
		n, err := lr.r.Read(lr.buf[lr.w:])
		lr.w += n
		switch {
		case err != nil:
			lr.err = err
		case n == 0:
			if empty++; empty == 100 {
				lr.err = io.ErrNoProgress
			}
		}
	}
}

// flushingReader writes what is staged before a read of r that could wait
// for input: a regular file or a buffer never waits, a reader with a
// Ready method (safeio's Interruptible) says whether it would, and any
// other read might.
type flushingReader struct {
	r       io.Reader
	ready   func() bool // nil: every read might wait
	pending func() bool
	flush   func() error
}

func (fr *flushingReader) Read(p []byte) (int, error) {
	if fr.pending() {
		if fr.ready == nil || !fr.ready() {
			if err := fr.flush(); err != nil {
				return 0, err
			}
		}
	}
	return fr.r.Read(p)
}

// parse reads one line (without its newline); skip is an empty JSON line.
func (f *Feed) parse(rec *format.Record, line []byte) (skip bool, err error) {
	if f.Format == InputJSON {
		if len(bytes.TrimSpace(line)) == 0 {
			return true, nil
		}
		*rec, err = f.parseJSON(line)
		rec.Headers = append(rec.Headers, f.Headers...)
		return false, err
	}
	rec.Headers = f.Headers
	rec.Value = line
	if f.KeySeparator != "" {
		if i := bytes.Index(line, []byte(f.KeySeparator)); i >= 0 {
			rec.Key, rec.Value = line[:i], line[i+len(f.KeySeparator):]
		}
	}
	return false, nil
}

func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	// Make it non-nil even when empty: an empty line is an empty value,
	// as kafka-console-producer sends it, not a null (a tombstone).
	if b == nil {
		return []byte{}
	}
	return b
}

type jsonHeader struct {
	Key           json.RawMessage `json:"key"`
	KeyEncoding   string          `json:"keyEncoding"`
	Value         json.RawMessage `json:"value"`
	ValueEncoding string          `json:"valueEncoding"`
}

type jsonRecord struct {
	Key           json.RawMessage `json:"key"`
	Value         json.RawMessage `json:"value"`
	KeyEncoding   string          `json:"keyEncoding"`
	ValueEncoding string          `json:"valueEncoding"`
	Headers       []jsonHeader    `json:"headers"`
	Timestamp     *int64          `json:"timestamp"`
}

// ParseJSONRecord reads one InputJSON line. Unknown fields are an error.
func ParseJSONRecord(line []byte) (format.Record, error) {
	var f Feed
	return f.parseJSON(line)
}

// parseJSON reads one InputJSON line, the key and value through the
// encoders when set.
func (f *Feed) parseJSON(line []byte) (format.Record, error) {
	var jr jsonRecord
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&jr); err != nil {
		return format.Record{}, err
	}
	var rec format.Record
	var err error
	if rec.Key, err = encodedBytes(jr.Key, jr.KeyEncoding, f.EncodeKey); err != nil {
		return rec, fmt.Errorf("key: %w", err)
	}
	if rec.Value, err = encodedBytes(jr.Value, jr.ValueEncoding, f.EncodeValue); err != nil {
		return rec, fmt.Errorf("value: %w", err)
	}
	for i, h := range jr.Headers {
		k, err := jsonBytes(h.Key, h.KeyEncoding)
		if err != nil || k == nil {
			if err == nil {
				err = errors.New("must be a string")
			}
			return rec, fmt.Errorf("header %d key: %w", i, err)
		}
		v, err := jsonBytes(h.Value, h.ValueEncoding)
		if err != nil {
			return rec, fmt.Errorf("header %q: %w", k, err)
		}
		rec.Headers = append(rec.Headers, format.Header{Key: k, Value: v})
	}
	if jr.Timestamp != nil {
		if *jr.Timestamp < 0 {
			return rec, errors.New("timestamp must not be negative")
		}
		rec.Timestamp = *jr.Timestamp
	}
	return rec, nil
}

// jsonBytes reads a JSON string (or null) in an encoding: text (the
// string's UTF-8 bytes), base64 or hex.
// encodedBytes is a key or value: through encode when set (null stays
// null), else a string in its encoding.
func encodedBytes(raw json.RawMessage, enc string, encode func([]byte) ([]byte, error)) ([]byte, error) {
	if encode == nil || len(raw) == 0 || string(raw) == "null" {
		return jsonBytes(raw, enc)
	}
	return encode(raw)
}

func jsonBytes(raw json.RawMessage, enc string) ([]byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, errors.New("must be a string or null")
	}
	switch enc {
	case "", "utf8", "text":
		return []byte(s), nil
	case "base64":
		return base64.StdEncoding.DecodeString(s)
	case "hex":
		return hex.DecodeString(s)
	}
	return nil, errors.New("unknown encoding " + strconv.Quote(enc))
}

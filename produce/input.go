package produce

import (
	"bufio"
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
}

// Run appends every record of r to a and calls sent with each batch's
// result as soon as it is appended (a producer's response is sent then, not
// at the end). A line that is not a record is an *InputError; the batches
// before it are appended. ctx is checked between lines.
func (f *Feed) Run(ctx context.Context, a *Appender, r io.Reader, sent func(Result)) error {
	maxRecs := max(1, f.MaxRecords)
	batch := f.Template
	batch.Records = nil
	pending := 0
	flush := func() error {
		if len(batch.Records) == 0 {
			return nil
		}
		res, err := a.Append(&batch)
		if err != nil {
			return err
		}
		if sent != nil {
			sent(res)
		}
		batch.Records, pending = batch.Records[:0], 0
		return nil
	}
	in := bufio.NewReaderSize(r, 1<<20)
	for lineNo := 1; ; lineNo++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := in.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("reading input: %w", err)
		}
		rec, skip, perr := f.parse(trimNewline(line))
		if perr != nil {
			if ferr := flush(); ferr != nil {
				return ferr
			}
			return &InputError{Line: lineNo, Err: perr}
		}
		if skip {
			continue
		}
		batch.Records = append(batch.Records, rec)
		pending += len(rec.Key) + len(rec.Value)
		if len(batch.Records) >= maxRecs || (f.MaxBytes > 0 && pending >= f.MaxBytes) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// parse reads one line (without its newline); skip is an empty JSON line.
func (f *Feed) parse(line []byte) (rec format.Record, skip bool, err error) {
	if f.Format == InputJSON {
		if len(bytes.TrimSpace(line)) == 0 {
			return rec, true, nil
		}
		rec, err = f.parseJSON(line)
		rec.Headers = append(rec.Headers, f.Headers...)
		return rec, false, err
	}
	rec.Headers = f.Headers
	rec.Value = line
	if f.KeySeparator != "" {
		if i := bytes.Index(line, []byte(f.KeySeparator)); i >= 0 {
			rec.Key, rec.Value = line[:i], line[i+len(f.KeySeparator):]
		}
	}
	return rec, false, nil
}

func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	// ReadBytes gave a fresh slice; make it non-nil even when empty: an
	// empty line is an empty value, as kafka-console-producer sends it,
	// not a null (a tombstone).
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

package ndjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// ErrNotObject is returned by Typed for a value that does not encode as a
// JSON object.
var ErrNotObject = errors.New("ndjson: value does not encode as a JSON object")

// Typed appends v (a struct whose JSON tags follow the naming rules) as one
// object with "type":typ as its first field, and a newline. It uses
// encoding/json and is meant for reports and summaries, not for the
// per-record path (see Writer).
func Typed(dst []byte, typ string, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	b := bytes.TrimSpace(buf.Bytes())
	if len(b) < 2 || b[0] != '{' {
		return dst, ErrNotObject
	}
	dst = Begin(dst, typ)
	if len(b) > 2 {
		dst = append(dst, ',')
	}
	dst = append(dst, b[1:]...)
	return append(dst, '\n'), nil
}

// WriteTyped writes Typed's line to w.
func WriteTyped(w io.Writer, typ string, v any) error {
	l, err := Typed(nil, typ, v)
	if err != nil {
		return err
	}
	_, err = w.Write(l)
	return err
}

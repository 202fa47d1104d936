package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Format is how a key or value is read.
type Format int

// The formats of --key-format and --value-format.
const (
	// FormatBytes leaves the bytes as they are.
	FormatBytes Format = iota
	// FormatAuto reads Confluent's framing when the bytes start with it
	// and a source knows the schema, else JSON when the bytes are one
	// JSON value, else bytes, with a note saying why.
	FormatAuto
	// FormatJSON is plain JSON text (no framing).
	FormatJSON
	// FormatAvro, FormatProtobuf and FormatJSONSchema require Confluent's
	// framing and a schema of that type.
	FormatAvro
	FormatProtobuf
	FormatJSONSchema
)

var formatNames = []string{"bytes", "auto", "json", "avro", "protobuf", "json-schema"}

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// FormatNames lists the formats' names, for flags and completion.
func FormatNames() []string { return append([]string(nil), formatNames...) }

// ParseFormat reads a format name.
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames {
		if strings.EqualFold(s, n) {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("unknown format %q (one of %s)", s, strings.Join(formatNames, ", "))
}

func formatOf(t Type) Format {
	switch t {
	case Protobuf:
		return FormatProtobuf
	case JSONSchema:
		return FormatJSONSchema
	}
	return FormatAvro
}

// Value is a key or value as decoded.
type Value struct {
	// Format is what the bytes were read as: FormatBytes when they were
	// left as they are (nothing decoded them, or Err).
	Format Format
	// Null is set for a null key or value.
	Null bool
	// Schema is the schema that decoded the value, nil for bytes and JSON.
	Schema *Schema
	// Message is a Protobuf value's message full name.
	Message string
	// JSON is the decoded value as JSON text (nil for bytes).
	JSON json.RawMessage
	// Native is the decoded value as Go values (maps, slices, strings,
	// bools, int64, float64, json.Number, nil), for filters and format
	// strings; nil for bytes.
	Native any
	// Note says why FormatAuto left the bytes as bytes.
	Note string
	// Err is why the bytes did not decode as the format asked (a finding
	// for the record); JSON is set too when a JSON Schema value parsed but
	// failed validation.
	Err error
}

// Decoder decodes keys and values with schemas from a Source. It caches
// each schema's compiled form (up to maxCached schemas) and is safe for
// concurrent use.
type Decoder struct {
	src Source

	mu     sync.Mutex
	codecs map[int32]compiled
}

type compiled struct {
	sc    *Schema
	avro  *avroCodec
	proto *protoCodec
	js    *jsonSchemaCodec
	err   error
}

// maxCached bounds the compiled schemas a Decoder keeps; past it the cache
// starts again (a registry holds far fewer schemas than this in use).
const maxCached = 4096

// maxRefDepth bounds reference chains (and so cycles).
const maxRefDepth = 32

// NewDecoder returns a decoder over src (nil: no schemas; framed values
// then do not decode).
func NewDecoder(src Source) *Decoder {
	if src == nil {
		src = Sources{}
	}
	return &Decoder{src: src, codecs: map[int32]compiled{}}
}

// Decode reads b (nil: a null key or value) as f.
func (d *Decoder) Decode(b []byte, f Format) Value {
	if b == nil {
		return Value{Format: f, Null: true}
	}
	switch f {
	case FormatBytes:
		return Value{Format: FormatBytes}
	case FormatJSON:
		js, native, err := parseJSON(b)
		if err != nil {
			return Value{Format: FormatBytes, Err: err}
		}
		return Value{Format: FormatJSON, JSON: js, Native: native}
	case FormatAuto:
		return d.auto(b)
	}
	v := d.framed(b)
	if v.Err == nil && v.Schema != nil && formatOf(v.Schema.Type) != f {
		return Value{Format: FormatBytes, Schema: v.Schema,
			Err: fmt.Errorf("schema id %d is %s, not %s", v.Schema.ID, v.Schema.Type, f)}
	}
	return v
}

func (d *Decoder) auto(b []byte) Value {
	fr, err := ParseFrame(b)
	if err == nil && fr.Magic == MagicID {
		c := d.codec(fr.ID)
		if c.err == nil || !errors.Is(c.err, ErrUnknownSchema) {
			return d.framed(b)
		}
		return Value{Format: FormatBytes, Note: fmt.Sprintf("starts like Confluent's framing but %v", c.err)}
	}
	if js, native, err := parseJSON(b); err == nil {
		return Value{Format: FormatJSON, JSON: js, Native: native}
	}
	if err == nil {
		return Value{Format: FormatBytes, Note: "a schema GUID framing; GUIDs are not resolved"}
	}
	return Value{Format: FormatBytes, Note: "not in Confluent's framing and not JSON"}
}

// framed decodes a payload in Confluent's framing by its schema.
func (d *Decoder) framed(b []byte) Value {
	fr, err := ParseFrame(b)
	if err != nil {
		return Value{Format: FormatBytes, Err: err}
	}
	if fr.Magic != MagicID {
		return Value{Format: FormatBytes, Err: errors.New("a schema GUID framing; GUIDs are not resolved")}
	}
	c := d.codec(fr.ID)
	if c.err != nil {
		return Value{Format: FormatBytes, Schema: c.sc, Err: c.err}
	}
	body := b[fr.Size:]
	v := Value{Format: formatOf(c.sc.Type), Schema: c.sc}
	switch {
	case c.avro != nil:
		v.JSON, v.Native, v.Err = c.avro.decode(body)
	case c.proto != nil:
		v.JSON, v.Native, v.Message, v.Err = c.proto.decode(body)
	case c.js != nil:
		v.JSON, v.Native, v.Err = c.js.decode(body)
	}
	if v.Err != nil && v.JSON == nil {
		v.Format = FormatBytes
	}
	return v
}

// codec returns the compiled schema of id, compiling it once.
func (d *Decoder) codec(id int32) compiled {
	d.mu.Lock()
	c, ok := d.codecs[id]
	d.mu.Unlock()
	if ok {
		return c
	}
	c = d.compile(id)
	d.mu.Lock()
	if len(d.codecs) >= maxCached {
		d.codecs = map[int32]compiled{}
	}
	d.codecs[id] = c
	d.mu.Unlock()
	return c
}

func (d *Decoder) compile(id int32) compiled {
	sc, err := d.src.ByID(id)
	if err != nil {
		return compiled{err: err}
	}
	c := compiled{sc: sc}
	c.err = func() error {
		switch sc.Type {
		case Avro:
			refs, err := d.refList(sc, 0, map[string]bool{})
			if err != nil {
				return err
			}
			c.avro, err = compileAvro(sc, refs)
			return err
		case Protobuf:
			refs, err := d.refMap(sc)
			if err != nil {
				return err
			}
			c.proto, err = compileProtobuf(sc, refs)
			return err
		case JSONSchema:
			refs, err := d.refMap(sc)
			if err != nil {
				return err
			}
			c.js, err = compileJSONSchema(sc, refs)
			return err
		}
		return fmt.Errorf("schema id %d: type %s not supported", id, sc.Type)
	}()
	if c.err != nil {
		c.err = fmt.Errorf("schema id %d (%s version %d): %w", id, sc.Subject, sc.Version, c.err)
	}
	return c
}

// refList is sc's references, transitively, each after the ones it
// references (the order Avro parses named types in), without repeats.
func (d *Decoder) refList(sc *Schema, depth int, seen map[string]bool) ([]*Schema, error) {
	if depth > maxRefDepth {
		return nil, fmt.Errorf("references nested deeper than %d (a cycle?)", maxRefDepth)
	}
	var out []*Schema
	for _, r := range sc.References {
		key := fmt.Sprintf("%s\x00%d", r.Subject, r.Version)
		if seen[key] {
			continue
		}
		seen[key] = true
		rs, err := d.src.ByVersion(r.Subject, r.Version)
		if err != nil {
			return nil, fmt.Errorf("reference %q: %w", r.Name, err)
		}
		sub, err := d.refList(rs, depth+1, seen)
		if err != nil {
			return nil, err
		}
		out = append(append(out, sub...), rs)
	}
	return out, nil
}

// refMap is sc's references, transitively, by the name they are imported
// by.
func (d *Decoder) refMap(sc *Schema) (map[string]*Schema, error) {
	out := map[string]*Schema{}
	var walk func(s *Schema, depth int) error
	walk = func(s *Schema, depth int) error {
		if depth > maxRefDepth {
			return fmt.Errorf("references nested deeper than %d (a cycle?)", maxRefDepth)
		}
		for _, r := range s.References {
			if _, ok := out[r.Name]; ok {
				continue
			}
			rs, err := d.src.ByVersion(r.Subject, r.Version)
			if err != nil {
				return fmt.Errorf("reference %q: %w", r.Name, err)
			}
			out[r.Name] = rs
			if err := walk(rs, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(sc, 0)
}

// Encode is the reverse of Decode for a framed format: js (the JSON that
// Decode gives for such a value) encoded with schema id, after Confluent's
// framing; message picks a Protobuf message by name ("" is the file's
// first). A JSON Schema value must validate.
func (d *Decoder) Encode(id int32, message string, js []byte) ([]byte, error) {
	c := d.codec(id)
	if c.err != nil {
		return nil, c.err
	}
	dst := AppendFrame(nil, id)
	switch {
	case c.avro != nil:
		return c.avro.encode(dst, js)
	case c.proto != nil:
		return c.proto.encode(dst, message, js)
	case c.js != nil:
		v, _, err := c.js.decode(js)
		if err != nil {
			return nil, err
		}
		return append(dst, v...), nil
	}
	return nil, fmt.Errorf("schema id %d: nothing to encode with", id)
}

// Lookup finds the schema a producer names: a subject's version (-1 the
// latest), as Source.ByVersion.
func (d *Decoder) Lookup(subject string, version int) (*Schema, error) {
	return d.src.ByVersion(subject, version)
}

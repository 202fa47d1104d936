package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// JSON Schema values are JSON text after the framing. They are parsed and
// validated against the schema (draft 7 unless the schema says, as
// Confluent's serializers default); a value that does not validate is a
// finding, shown all the same. References are the schema's other
// resources, each reference's name the URL a $ref uses; nothing is ever
// loaded from a file or the network.

type jsonSchemaCodec struct{ s *jsonschema.Schema }

// jsonSchemaBase is where the registered schema and its references live
// for the compiler; a relative reference name resolves against it.
const jsonSchemaBase = "klog-registry:///schemas/"

type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("%s: not among the schema's references (klog loads nothing else)", u)
}

func compileJSONSchema(sc *Schema, refs map[string]*Schema) (*jsonSchemaCodec, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.UseLoader(noLoader{})
	base, _ := url.Parse(jsonSchemaBase)
	add := func(name string, text string) (string, error) {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(text)))
		if err != nil {
			return "", err
		}
		u, err := base.Parse(name)
		if err != nil {
			return "", err
		}
		return u.String(), c.AddResource(u.String(), doc)
	}
	for name, r := range refs {
		// A reference that does not parse is left out: a $ref to it then
		// fails to compile, naming it.
		_, _ = add(name, r.Text)
	}
	main, err := add(fmt.Sprintf("id-%d.json", sc.ID), sc.Text)
	if err != nil {
		return nil, fmt.Errorf("json schema: %w", err)
	}
	s, err := c.Compile(main)
	if err != nil {
		return nil, fmt.Errorf("json schema: %w", err)
	}
	return &jsonSchemaCodec{s: s}, nil
}

// decode parses and validates; a value that parses but does not validate
// comes back with the validation error.
func (c *jsonSchemaCodec) decode(b []byte) (json.RawMessage, any, error) {
	js, native, err := parseJSON(b)
	if err != nil {
		return nil, nil, err
	}
	inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err := c.s.Validate(inst); err != nil {
		return js, native, &invalidError{err}
	}
	return js, native, nil
}

// invalidError is a validation failure said on one line: the validator's
// text puts each failed keyword on a line of its own, and a record's note
// or finding is one line.
type invalidError struct{ err error }

func (e *invalidError) Error() string {
	lines := strings.Split(strings.TrimSpace(e.err.Error()), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return "json schema: the value does not validate: " + strings.Join(lines, "; ")
}

func (e *invalidError) Unwrap() error { return e.err }

// parseJSON checks b is one JSON value and returns it compacted, with its
// generic value.
func parseJSON(b []byte) (json.RawMessage, any, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, nil, fmt.Errorf("json: %w", err)
	}
	d := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	d.UseNumber()
	var native any
	if err := d.Decode(&native); err != nil {
		return nil, nil, fmt.Errorf("json: %w", err)
	}
	return buf.Bytes(), native, nil
}

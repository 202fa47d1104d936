package schema

import (
	"errors"
	"fmt"
	"strings"
)

// Type is a schema's language, spelled as the registry's schemaType.
type Type string

// The registry's schema types; a schema without one is Avro.
const (
	Avro       Type = "AVRO"
	Protobuf   Type = "PROTOBUF"
	JSONSchema Type = "JSON"
)

// Reference names another schema a schema imports: Name is how the schema
// refers to it (an Avro full name, a .proto import path, a JSON Schema $ref
// URL), Subject and Version where the registry keeps it.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// Schema is one registered schema version.
type Schema struct {
	ID         int32
	Subject    string
	Version    int
	Type       Type
	Text       string
	References []Reference
	// Deleted is set for a soft-deleted version: still found by id, as
	// the registry keeps serving it to deserializers.
	Deleted bool
}

// ErrUnknownSchema says no source knows a schema id or subject version.
var ErrUnknownSchema = errors.New("unknown schema")

// Source finds schemas: by the id in a payload's framing, and by subject
// and version to resolve references. Version -1 is the latest.
type Source interface {
	ByID(id int32) (*Schema, error)
	ByVersion(subject string, version int) (*Schema, error)
}

// Sources asks each source in turn; the first that knows answers.
type Sources []Source

// ByID implements Source.
func (ss Sources) ByID(id int32) (*Schema, error) {
	return ss.find(func(s Source) (*Schema, error) { return s.ByID(id) }, fmt.Sprintf("id %d", id))
}

// ByVersion implements Source.
func (ss Sources) ByVersion(subject string, version int) (*Schema, error) {
	return ss.find(func(s Source) (*Schema, error) { return s.ByVersion(subject, version) },
		fmt.Sprintf("subject %q version %s", subject, versionName(version)))
}

func (ss Sources) find(f func(Source) (*Schema, error), what string) (*Schema, error) {
	var errs []error
	for _, s := range ss {
		sc, err := f(s)
		if err == nil {
			return sc, nil
		}
		if !errors.Is(err, ErrUnknownSchema) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return nil, fmt.Errorf("%w: %s", ErrUnknownSchema, what)
}

func versionName(v int) string {
	if v < 0 {
		return "latest"
	}
	return fmt.Sprint(v)
}

// parseType reads a registry schemaType ("" is Avro).
func parseType(s string) (Type, error) {
	switch t := Type(strings.ToUpper(s)); t {
	case "", Avro:
		return Avro, nil
	case Protobuf, JSONSchema:
		return t, nil
	}
	return "", fmt.Errorf("unknown schemaType %q", s)
}

package ndjson

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the README's JSON reference from schema.json")

// ordered is a JSON object with its keys in document order.
type ordered struct {
	keys []string
	vals map[string]json.RawMessage
}

func (o *ordered) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	if _, err := d.Token(); err != nil {
		return err
	}
	o.vals = map[string]json.RawMessage{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return err
		}
		k := t.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return err
		}
		o.keys = append(o.keys, k)
		o.vals[k] = v
	}
	return nil
}

type typeDef struct {
	Description string             `json:"description"`
	Commands    []string           `json:"x-commands"`
	Properties  ordered            `json:"properties"`
	Required    []string           `json:"required"`
	PropDocs    map[string]propDoc `json:"-"`
}

type propDoc struct {
	Description string `json:"description"`
}

// reference renders the schema as the README's JSON reference: one entry
// per type with its commands, description, required and optional fields.
func reference(t *testing.T) string {
	t.Helper()
	var s struct {
		Properties struct {
			Type struct {
				Enum []string `json:"enum"`
			} `json:"type"`
		} `json:"properties"`
		Defs map[string]typeDef `json:"$defs"`
	}
	if err := json.Unmarshal(Schema, &s); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("| type | printed by | fields (required; *optional*) |\n|---|---|---|\n")
	for _, name := range s.Properties.Type.Enum {
		d, ok := s.Defs[name]
		if !ok {
			t.Fatalf("type %q has no definition", name)
		}
		req := map[string]bool{}
		for _, r := range d.Required {
			req[r] = true
		}
		var fields []string
		for _, k := range d.Properties.keys {
			if k == "type" {
				continue
			}
			var p propDoc
			json.Unmarshal(d.Properties.vals[k], &p)
			f := "`" + k + "`"
			if p.Description != "" {
				f += " (" + p.Description + ")"
			}
			if !req[k] {
				f = "*" + f + "*"
			}
			fields = append(fields, f)
		}
		b.WriteString("| `" + name + "` | " + strings.Join(d.Commands, ", ") + " | " + strings.TrimSuffix(d.Description, ".") + ": " +
			strings.ReplaceAll(strings.Join(fields, ", "), "|", "\\|") + " |\n")
	}
	return b.String()
}

const (
	beginMark = "<!-- BEGIN JSON REFERENCE: generated from ndjson/schema.json by `go test ./ndjson -update`; do not edit -->\n"
	endMark   = "<!-- END JSON REFERENCE -->\n"
)

// TestREADMEReference checks that the README's JSON reference is the one
// the schema gives.
func TestREADMEReference(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i, j := strings.Index(s, beginMark), strings.Index(s, endMark)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the JSON reference markers")
	}
	want := reference(t)
	got := s[i+len(beginMark) : j]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile("../README.md", []byte(s[:i+len(beginMark)]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's JSON reference is not the schema's; run go test ./ndjson -update")
}

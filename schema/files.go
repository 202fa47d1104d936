package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/internal/safeio"
)

// Schema files: what a registry's REST API returns, saved, or schemas as
// written by hand.
//
//   - A .json file holding an object with a "schema" string (the form of
//     GET /subjects/S/versions/V and GET /schemas/ids/N: "subject",
//     "version", "id", "schemaType", "schema", "references"), or an array of
//     such objects (GET /schemas), registers those schemas as they say.
//   - Any other .avsc (Avro), .proto (Protobuf) or .json (JSON Schema) file
//     is one schema. A file whose name starts with a number (42.avsc,
//     42-orders.proto) registers that schema id; its subject is its path
//     under the directory given, version 1. One whose name does not has no
//     id (ID -1): it is found by subject and as a reference, but no record
//     can be framed with it (produce refuses it). Every other schema file of the
//     same type under the same directory is its reference, named by that
//     path, so .proto imports and JSON Schema $refs between the files
//     resolve, and Avro named types of one file are known in the others.
//
// A directory is read recursively; no file over maxSchemaFileBytes is read.

const maxSchemaFileBytes = 16 << 20

// Files is a Source over schema files.
type Files struct {
	byID  map[int32]*Schema
	bySV  map[subjectVersion]*Schema
	order []*Schema
}

var leadingID = regexp.MustCompile(`^([0-9]{1,10})(?:[-_.]|$)`)

// LoadFiles reads schema files and directories of them.
func LoadFiles(paths ...string) (*Files, error) {
	f := &Files{byID: map[int32]*Schema{}, bySV: map[subjectVersion]*Schema{}}
	for _, p := range paths {
		if err := f.load(p); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (f *Files) load(root string) error {
	st, err := os.Stat(root)
	if err != nil {
		return err
	}
	base := filepath.Dir(root)
	var files []string
	if st.IsDir() {
		base = root
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() && schemaFileType(p) != "" {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return err
		}
	} else {
		files = []string{root}
	}
	sort.Strings(files)
	var raw []*Schema
	for _, p := range files {
		b, err := safeio.ReadFile(p, maxSchemaFileBytes)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		rel = filepath.ToSlash(rel)
		if strings.HasSuffix(p, ".json") {
			if list, ok, err := restForm(b); ok {
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
				for _, sc := range list {
					if err := f.add(sc); err != nil {
						return fmt.Errorf("%s: %w", p, err)
					}
				}
				continue
			}
		}
		sc := &Schema{ID: -1, Subject: rel, Version: 1, Type: schemaFileType(p), Text: string(b)}
		if m := leadingID.FindStringSubmatch(filepath.Base(p)); m != nil {
			if n, err := strconv.ParseInt(m[1], 10, 32); err == nil {
				sc.ID = int32(n)
			}
		}
		raw = append(raw, sc)
	}
	for _, sc := range raw {
		for _, o := range raw {
			if o != sc && o.Type == sc.Type {
				sc.References = append(sc.References, Reference{Name: o.Subject, Subject: o.Subject, Version: 1})
			}
		}
		if err := f.add(sc); err != nil {
			return err
		}
	}
	return nil
}

func (f *Files) add(sc *Schema) error {
	if sc.ID >= 0 {
		if o := f.byID[sc.ID]; o != nil && o.Text != sc.Text {
			return fmt.Errorf("schema id %d is given twice with different schemas (%s, %s)", sc.ID, o.Subject, sc.Subject)
		}
		f.byID[sc.ID] = sc
	}
	f.bySV[subjectVersion{sc.Subject, sc.Version}] = sc
	f.order = append(f.order, sc)
	return nil
}

func schemaFileType(p string) Type {
	switch filepath.Ext(p) {
	case ".avsc":
		return Avro
	case ".proto":
		return Protobuf
	case ".json":
		return JSONSchema
	}
	return ""
}

// restValue is a schema as the registry's REST API returns it.
type restValue struct {
	Subject    string      `json:"subject"`
	Version    int         `json:"version"`
	ID         *int32      `json:"id"`
	SchemaType string      `json:"schemaType"`
	Schema     *string     `json:"schema"`
	References []Reference `json:"references"`
	Deleted    bool        `json:"deleted"`
}

func (v restValue) toSchema() (*Schema, error) {
	t, err := parseType(v.SchemaType)
	if err != nil {
		return nil, err
	}
	sc := &Schema{ID: -1, Subject: v.Subject, Version: v.Version, Type: t, Text: *v.Schema,
		References: v.References, Deleted: v.Deleted}
	if v.ID != nil {
		sc.ID = *v.ID
	}
	return sc, nil
}

// restForm reads the registry's REST form; ok is false when b is not one
// (then it is a JSON Schema).
func restForm(b []byte) (list []*Schema, ok bool, err error) {
	t := bytes.TrimSpace(b)
	var vals []restValue
	switch {
	case len(t) > 0 && t[0] == '[':
		if json.Unmarshal(t, &vals) != nil {
			return nil, false, nil
		}
	case len(t) > 0 && t[0] == '{':
		var v restValue
		if json.Unmarshal(t, &v) != nil || v.Schema == nil {
			return nil, false, nil
		}
		vals = []restValue{v}
	default:
		return nil, false, nil
	}
	for _, v := range vals {
		if v.Schema == nil {
			return nil, false, nil
		}
		sc, err := v.toSchema()
		if err != nil {
			return nil, true, err
		}
		list = append(list, sc)
	}
	return list, true, nil
}

// ByID implements Source.
func (f *Files) ByID(id int32) (*Schema, error) {
	if sc := f.byID[id]; sc != nil {
		return sc, nil
	}
	return nil, fmt.Errorf("%w: no schema file gives id %d", ErrUnknownSchema, id)
}

// ByVersion implements Source.
func (f *Files) ByVersion(subject string, version int) (*Schema, error) {
	if version >= 0 {
		if sc := f.bySV[subjectVersion{subject, version}]; sc != nil {
			return sc, nil
		}
	} else {
		var best *Schema
		for _, sc := range f.order {
			if sc.Subject == subject && !sc.Deleted && (best == nil || sc.Version > best.Version) {
				best = sc
			}
		}
		if best != nil {
			return best, nil
		}
	}
	return nil, fmt.Errorf("%w: no schema file gives subject %q version %s", ErrUnknownSchema, subject, versionName(version))
}

// Schemas lists the schemas read, in file order.
func (f *Files) Schemas() []*Schema { return append([]*Schema(nil), f.order...) }

// Package jsoncontract checks klog's JSON output against the contract in
// package ndjson (schema.json) with a JSON Schema validator, for tests.
package jsoncontract

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/klog-dev/klog/ndjson"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(ndjson.Schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("klog.schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("klog.schema.json")
})

var defCompiler = sync.OnceValues(func() (*jsonschema.Compiler, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(ndjson.Schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	return c, c.AddResource("klog.schema.json", doc)
})

var (
	defsMu sync.Mutex
	defs   = map[string]*jsonschema.Schema{}
)

// Def checks that v (JSON) is an instance of the schema's $defs entry name,
// for the parts of an object that the object's own type leaves open (the
// data of a decoded record).
func Def(name string, v []byte) error {
	defsMu.Lock()
	sch, ok := defs[name]
	if !ok {
		c, err := defCompiler()
		if err != nil {
			defsMu.Unlock()
			return fmt.Errorf("schema: %w", err)
		}
		if sch, err = c.Compile("klog.schema.json#/$defs/" + name); err != nil {
			defsMu.Unlock()
			return fmt.Errorf("schema: %w", err)
		}
		defs[name] = sch
	}
	defsMu.Unlock()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(v))
	if err != nil {
		return err
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("%.300s: %w", v, err)
	}
	return nil
}

// Line checks one line: it must parse with encoding/json (RFC 8259) and
// validate against the schema.
func Line(line []byte) error {
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		return fmt.Errorf("not JSON: %w: %.300s", err, line)
	}
	sch, err := compiled()
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		return err
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("%.300s: %w", line, err)
	}
	return nil
}

// Lines checks every non-empty line of out and returns the objects, parsed.
func Lines(out string) ([]map[string]any, error) {
	var objs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		l := bytes.TrimSpace(sc.Bytes())
		if len(l) == 0 {
			continue
		}
		if err := Line(l); err != nil {
			return objs, err
		}
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(l))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			return objs, err
		}
		objs = append(objs, m)
	}
	return objs, sc.Err()
}

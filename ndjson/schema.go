package ndjson

import _ "embed"

// Schema is the JSON Schema (draft 2020-12) of every object klog prints:
// one definition per "type", with its fields. It is the contract scripts
// rely on; the README's JSON reference is generated from it.
//
//go:embed schema.json
var Schema []byte

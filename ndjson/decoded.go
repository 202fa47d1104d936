package ndjson

import (
	"strconv"

	"github.com/klog-dev/klog/schema"
)

// DecodedFields writes what a key or value format found (nothing when none
// was asked, or for a null): <name>Format, the decoded JSON as decodedName,
// the schema as <name>Schema, and <name>Error or <name>Note; name is "key"
// or "value" (decodedKey, decodedValue).
func DecodedFields(b []byte, name, decodedName string, v schema.Value) []byte {
	if v.Null || v.Format == schema.FormatBytes && v.Schema == nil && v.Err == nil && v.Note == "" {
		return b
	}
	b = Str(b, name+"Format", v.Format.String())
	if v.JSON != nil {
		b = append(Field(b, decodedName), v.JSON...)
	}
	if sc := v.Schema; sc != nil {
		b = append(Field(b, name+"Schema"), '{')
		b = strconv.AppendInt(append(b, `"id":`...), int64(sc.ID), 10)
		b = Str(b, "subject", sc.Subject)
		b = Int(b, "version", int64(sc.Version))
		b = Str(b, "type", string(sc.Type))
		if v.Message != "" {
			b = Str(b, "message", v.Message)
		}
		b = append(b, '}')
	}
	if v.Err != nil {
		b = Str(b, name+"Error", v.Err.Error())
	}
	if v.Note != "" {
		b = Str(b, name+"Note", v.Note)
	}
	return b
}

// DecodedKeyValue writes DecodedFields for a record's key and value.
func DecodedKeyValue(b []byte, key, value schema.Value) []byte {
	return DecodedFields(DecodedFields(b, "key", "decodedKey", key), "value", "decodedValue", value)
}

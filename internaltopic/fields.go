package internaltopic

import (
	"github.com/klog-dev/klog/format"
)

// fields reads a decoded message or struct by Kafka field name, for the
// typed records (metadata.go, groups.go, transactions.go): the same values
// the JSON converter prints, so the typed view and kafka-dump-log's text
// can never disagree. A field that is absent at the message's version, or
// a tagged field that was not written, reads as its schema default, as the
// generated Java object's getter returns it.
type fields struct {
	fs   []field
	vals []value
}

func (m fields) find(name string) (*field, *value) {
	for i := range m.fs {
		if m.fs[i].name == name {
			if i < len(m.vals) && m.vals[i].set {
				return &m.fs[i], &m.vals[i]
			}
			return &m.fs[i], nil
		}
	}
	// A typed reader naming a field its schema lacks is a bug in this
	// package, caught by the tests of every record type.
	panic("internaltopic: no field " + name)
}

func (m fields) int(name string) int64 {
	f, v := m.find(name)
	if v == nil {
		return f.def.i
	}
	return v.i
}

func (m fields) int32(name string) int32 { return int32(m.int(name)) }
func (m fields) int16(name string) int16 { return int16(m.int(name)) }
func (m fields) int8(name string) int8   { return int8(m.int(name)) }
func (m fields) bool(name string) bool   { return m.int(name) != 0 }

func (m fields) float(name string) float64 {
	f, v := m.find(name)
	if v == nil {
		return f.def.f
	}
	return v.f
}

// str is a string field; null reads as "" (see nullableStr).
func (m fields) str(name string) string {
	s, _ := m.nullableStr(name)
	return s
}

// nullableStr is a string field and whether it is non-null.
func (m fields) nullableStr(name string) (string, bool) {
	f, v := m.find(name)
	if v == nil {
		return f.def.s, !f.def.null
	}
	if v.null {
		return "", false
	}
	return javaString(v.b), true
}

// optStr is a nullable string as a pointer (nil: null).
func (m fields) optStr(name string) *string {
	s, ok := m.nullableStr(name)
	if !ok {
		return nil
	}
	return &s
}

// bytes is a bytes field, copied (nil: null or absent).
func (m fields) bytes(name string) []byte {
	_, v := m.find(name)
	if v == nil || v.null {
		return nil
	}
	return append([]byte{}, v.b...)
}

func (m fields) uuid(name string) [16]byte {
	var u [16]byte
	if _, v := m.find(name); v != nil {
		copy(u[:], v.b)
	}
	return u
}

// int32s is an []int32 field: nil when null or absent with a null
// default, a non-nil (possibly empty) slice otherwise. The difference is
// what PartitionChangeRecord's "no change" means.
func (m fields) int32s(name string) []int32 {
	f, v := m.find(name)
	if v == nil {
		if f.def.null {
			return nil
		}
		return []int32{}
	}
	if v.null {
		return nil
	}
	out := make([]int32, len(v.elems))
	for i := range v.elems {
		out[i] = int32(v.elems[i].i)
	}
	return out
}

// strs is a []string field (nil when null).
func (m fields) strs(name string) []string {
	f, v := m.find(name)
	if v == nil {
		if f.def.null {
			return nil
		}
		return []string{}
	}
	if v.null {
		return nil
	}
	out := make([]string, len(v.elems))
	for i := range v.elems {
		out[i] = javaString(v.elems[i].b)
	}
	return out
}

// uuids is a []uuid field (nil when null, or absent with a null default).
func (m fields) uuids(name string) [][16]byte {
	f, v := m.find(name)
	if v == nil {
		if f.def.null {
			return nil
		}
		return [][16]byte{}
	}
	if v.null {
		return nil
	}
	out := make([][16]byte, len(v.elems))
	for i := range v.elems {
		copy(out[i][:], v.elems[i].b)
	}
	return out
}

// structs is an array-of-structs field, one fields per element (nil when
// null or absent).
func (m fields) structs(name string) []fields {
	f, v := m.find(name)
	if v == nil || v.null {
		return nil
	}
	out := make([]fields, len(v.elems)) // non-nil: present, possibly empty
	for i := range v.elems {
		out[i] = fields{fs: f.fields, vals: v.elems[i].elems}
	}
	return out
}

// strct is a struct field; ok is false when it is null or absent.
func (m fields) strct(name string) (fields, bool) {
	f, v := m.find(name)
	if v == nil || v.null {
		return fields{}, false
	}
	return fields{fs: f.fields, vals: v.elems}, true
}

// javaString decodes b as Java's String(bytes, UTF_8) does, so that a
// typed value is the text kafka-dump-log prints.
func javaString(b []byte) string {
	for _, c := range b {
		if c >= 0x80 {
			return string(format.AppendJavaUTF8(nil, b))
		}
	}
	return string(b)
}

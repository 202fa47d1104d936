package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hamba/avro/v2"
)

// Avro values are decoded by hamba/avro into its generic Go values and
// rendered as the Avro specification's JSON encoding ("JSON Encoding"), as
// kafka-avro-console-consumer prints them: record fields in schema order, a
// union value other than null as {"branch name": value}, bytes and fixed
// as a string of code points 0 to 255, logical types as their underlying
// type (timestamp-millis a long, date an int); decimals are the one
// exception, a JSON string of the number ("12.34") instead of bytes. The
// same JSON encodes back (produce --input json).

// avroAPI bounds what one payload may make the decoder allocate: a string
// or bytes value, and a slice, at most maxValueBytes (hamba's limits).
var avroAPI = avro.Config{
	MaxByteSliceSize:  maxValueBytes,
	MaxSliceAllocSize: maxValueBytes,
}.Freeze()

// maxValueBytes caps any one decoded string, bytes or array; a record value
// itself is capped by the batch it is in.
const maxValueBytes = 16 << 20

type avroCodec struct{ s avro.Schema }

// compileAvro parses an Avro schema after the schemas it references, all
// in one cache of its own, so that named types of one schema never leak
// into another's. References are parsed in passes until none more parses
// (a reference may need another's named types, in any order); one that
// never parses matters only if the schema needs it, and then the schema's
// own error says which name is missing.
func compileAvro(sc *Schema, refs []*Schema) (*avroCodec, error) {
	cache := &avro.SchemaCache{}
	pending := refs
	for len(pending) > 0 {
		var left []*Schema
		for _, r := range pending {
			if _, err := avro.ParseWithCache(r.Text, "", cache); err != nil {
				left = append(left, r)
			}
		}
		if len(left) == len(pending) {
			break
		}
		pending = left
	}
	s, err := avro.ParseWithCache(sc.Text, "", cache)
	if err != nil {
		return nil, fmt.Errorf("avro schema: %w", err)
	}
	return &avroCodec{s: s}, nil
}

func (c *avroCodec) decode(b []byte) (json.RawMessage, any, error) {
	var v any
	if err := avroAPI.Unmarshal(c.s, b, &v); err != nil {
		return nil, nil, fmt.Errorf("avro: %w", err)
	}
	w := avroWriter{}
	if err := w.value(c.s, v); err != nil {
		return nil, nil, err
	}
	native, err := avroNative(c.s, v)
	if err != nil {
		return nil, nil, err
	}
	return w.buf, native, nil
}

type avroWriter struct{ buf []byte }

func (w *avroWriter) value(s avro.Schema, v any) error {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	switch s := s.(type) {
	case *avro.RecordSchema:
		m, _ := v.(map[string]any)
		w.buf = append(w.buf, '{')
		for i, f := range s.Fields() {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.buf = appendJSONString(w.buf, f.Name())
			w.buf = append(w.buf, ':')
			if err := w.value(f.Type(), m[f.Name()]); err != nil {
				return err
			}
		}
		w.buf = append(w.buf, '}')
	case *avro.UnionSchema:
		branch, inner, err := unionBranch(s, v)
		if err != nil {
			return err
		}
		if branch == nil || branch.Type() == avro.Null {
			w.buf = append(w.buf, "null"...)
			return nil
		}
		w.buf = append(w.buf, '{')
		w.buf = appendJSONString(w.buf, avroTypeName(branch))
		w.buf = append(w.buf, ':')
		if err := w.value(branch, inner); err != nil {
			return err
		}
		w.buf = append(w.buf, '}')
	case *avro.ArraySchema:
		items, _ := v.([]any)
		w.buf = append(w.buf, '[')
		for i, it := range items {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			if err := w.value(s.Items(), it); err != nil {
				return err
			}
		}
		w.buf = append(w.buf, ']')
	case *avro.MapSchema:
		m, _ := v.(map[string]any)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		w.buf = append(w.buf, '{')
		for i, k := range keys {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.buf = appendJSONString(w.buf, k)
			w.buf = append(w.buf, ':')
			if err := w.value(s.Values(), m[k]); err != nil {
				return err
			}
		}
		w.buf = append(w.buf, '}')
	case *avro.EnumSchema:
		str, _ := v.(string)
		w.buf = appendJSONString(w.buf, str)
	case *avro.FixedSchema:
		if r, ok := v.(*big.Rat); ok {
			w.buf = appendJSONString(w.buf, decimalString(r, s.Logical()))
			return nil
		}
		w.buf = appendJSONString(w.buf, latin1(fixedBytes(v)))
	case *avro.PrimitiveSchema:
		return w.primitive(s, v)
	default:
		return fmt.Errorf("avro: schema type %s not rendered", s.Type())
	}
	return nil
}

func (w *avroWriter) primitive(s *avro.PrimitiveSchema, v any) error {
	switch x := avroUnderlying(s, v).(type) {
	case nil:
		w.buf = append(w.buf, "null"...)
	case bool:
		w.buf = strconv.AppendBool(w.buf, x)
	case int64:
		w.buf = strconv.AppendInt(w.buf, x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			w.buf = appendJSONString(w.buf, strconv.FormatFloat(x, 'g', -1, 64))
		} else {
			w.buf = strconv.AppendFloat(w.buf, x, 'g', -1, 64)
		}
	case string:
		w.buf = appendJSONString(w.buf, x)
	case []byte:
		w.buf = appendJSONString(w.buf, latin1(x))
	default:
		return fmt.Errorf("avro: %s value of Go type %T", s.Type(), v)
	}
	return nil
}

// avroUnderlying is a primitive's value as its underlying Avro type:
// int64, float64, bool, string, []byte or nil; a decimal as its string.
func avroUnderlying(s *avro.PrimitiveSchema, v any) any {
	lt := ""
	if l := s.Logical(); l != nil {
		lt = string(l.Type())
	}
	switch x := v.(type) {
	case time.Time:
		switch avro.LogicalType(lt) {
		case avro.Date:
			return int64(math.Floor(float64(x.Unix()) / 86400))
		case avro.TimestampMicros, avro.LocalTimestampMicros:
			return x.UnixMicro()
		}
		return x.UnixMilli()
	case time.Duration:
		if avro.LogicalType(lt) == avro.TimeMicros {
			return x.Microseconds()
		}
		return x.Milliseconds()
	case *big.Rat:
		return decimalString(x, s.Logical())
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case float32:
		return float64(x)
	}
	return v
}

func decimalString(r *big.Rat, l avro.LogicalSchema) string {
	scale := 0
	if d, ok := l.(*avro.DecimalLogicalSchema); ok {
		scale = d.Scale()
	}
	return r.FloatString(scale)
}

// unionBranch finds which branch of u the generic value v took. hamba
// gives a union's value directly when every branch is a type it resolves
// (the primitives and logical types), else as {"full name": value}.
func unionBranch(u *avro.UnionSchema, v any) (avro.Schema, any, error) {
	if v == nil {
		return nil, nil, nil
	}
	if m, ok := v.(map[string]any); ok && len(m) == 1 && !unionResolved(u) {
		for k, inner := range m {
			for _, b := range u.Types() {
				if avroTypeName(b) == k {
					return b, inner, nil
				}
			}
		}
	}
	for _, b := range u.Types() {
		if avroKindMatches(b, v) {
			return b, v, nil
		}
	}
	return nil, nil, fmt.Errorf("avro: union value of Go type %T matches no branch", v)
}

// unionResolved reports whether hamba resolves every branch of u to a Go
// type (then a union value is given directly): null, the primitives and the
// logical types its TypeResolver registers.
func unionResolved(u *avro.UnionSchema) bool {
	for _, b := range u.Types() {
		p, ok := b.(*avro.PrimitiveSchema)
		if !ok {
			return false
		}
		if l := p.Logical(); l != nil {
			switch l.Type() {
			case avro.Date, avro.TimeMillis, avro.TimestampMillis, avro.TimestampMicros, avro.TimeMicros, avro.Decimal, avro.UUID:
			default:
				return false
			}
		}
	}
	return true
}

func avroKindMatches(s avro.Schema, v any) bool {
	switch v.(type) {
	case bool:
		return s.Type() == avro.Boolean
	case int, int32:
		return s.Type() == avro.Int || s.Type() == avro.Long
	case int64:
		return s.Type() == avro.Long || s.Type() == avro.Int
	case float32:
		return s.Type() == avro.Float
	case float64:
		return s.Type() == avro.Double || s.Type() == avro.Float
	case string:
		return s.Type() == avro.String || s.Type() == avro.Enum
	case []byte:
		return s.Type() == avro.Bytes
	case time.Time, time.Duration:
		return s.Type() == avro.Int || s.Type() == avro.Long
	case *big.Rat:
		return s.Type() == avro.Bytes || s.Type() == avro.Fixed
	case map[string]any:
		return s.Type() == avro.Record || s.Type() == avro.Map
	case []any:
		return s.Type() == avro.Array
	}
	return s.Type() == avro.Fixed
}

// avroTypeName is a branch's name in the JSON encoding: a named type's full
// name, else the type (logical types go by their underlying type).
func avroTypeName(s avro.Schema) string {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	return string(s.Type())
}

// avroNative is the value for filters and format strings: unions
// unwrapped, logical types as their underlying numbers, bytes as strings.
func avroNative(s avro.Schema, v any) (any, error) {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	switch s := s.(type) {
	case *avro.RecordSchema:
		m, _ := v.(map[string]any)
		out := make(map[string]any, len(s.Fields()))
		for _, f := range s.Fields() {
			x, err := avroNative(f.Type(), m[f.Name()])
			if err != nil {
				return nil, err
			}
			out[f.Name()] = x
		}
		return out, nil
	case *avro.UnionSchema:
		b, inner, err := unionBranch(s, v)
		if err != nil || b == nil {
			return nil, err
		}
		return avroNative(b, inner)
	case *avro.ArraySchema:
		items, _ := v.([]any)
		out := make([]any, len(items))
		for i, it := range items {
			x, err := avroNative(s.Items(), it)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case *avro.MapSchema:
		m, _ := v.(map[string]any)
		out := make(map[string]any, len(m))
		for k, it := range m {
			x, err := avroNative(s.Values(), it)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	case *avro.FixedSchema:
		if r, ok := v.(*big.Rat); ok {
			return decimalString(r, s.Logical()), nil
		}
		return string(fixedBytes(v)), nil
	case *avro.PrimitiveSchema:
		x := avroUnderlying(s, v)
		if b, ok := x.([]byte); ok {
			return string(b), nil
		}
		return x, nil
	}
	return v, nil
}

func fixedBytes(v any) []byte {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Array || rv.Type().Elem().Kind() != reflect.Uint8 {
		return nil
	}
	b := make([]byte, rv.Len())
	reflect.Copy(reflect.ValueOf(b), rv)
	return b
}

// latin1 is Avro's JSON form of bytes: each byte one code point.
func latin1(b []byte) string {
	r := make([]byte, 0, len(b))
	for _, c := range b {
		r = utf8.AppendRune(r, rune(c))
	}
	return string(r)
}

// appendJSONString appends s as a JSON string (encoding/json's escaping,
// without its HTML escapes).
func appendJSONString(dst []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// encode writes the Avro binary form of a value given in the JSON encoding
// decode prints.
func (c *avroCodec) encode(dst []byte, js []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("avro from JSON: %w", err)
	}
	g, err := avroFromJSON(c.s, v, "")
	if err != nil {
		return nil, err
	}
	b, err := avroAPI.Marshal(c.s, g)
	if err != nil {
		return nil, fmt.Errorf("avro: %w", err)
	}
	return append(dst, b...), nil
}

// avroFromJSON turns a value of the JSON encoding into the generic Go
// value hamba encodes; at names where it is in the value (for errors).
func avroFromJSON(s avro.Schema, v any, at string) (any, error) {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	bad := func() (any, error) {
		return nil, fmt.Errorf("avro from JSON: %s: %T does not fit %s", pathName(at), v, s.Type())
	}
	switch s := s.(type) {
	case *avro.RecordSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		out := make(map[string]any, len(s.Fields()))
		for _, f := range s.Fields() {
			fv, present := m[f.Name()]
			if !present && f.HasDefault() {
				continue // hamba writes the default
			}
			x, err := avroFromJSON(f.Type(), fv, at+"."+f.Name())
			if err != nil {
				return nil, err
			}
			out[f.Name()] = x
		}
		return out, nil
	case *avro.UnionSchema:
		if v == nil {
			return nil, nil
		}
		m, ok := v.(map[string]any)
		if !ok || len(m) != 1 {
			return nil, fmt.Errorf("avro from JSON: %s: a union value is null or {\"type name\": value}", pathName(at))
		}
		for k, inner := range m {
			for _, b := range s.Types() {
				if avroTypeName(b) == k {
					x, err := avroFromJSON(b, inner, at)
					if err != nil {
						return nil, err
					}
					if b.Type() == avro.Null {
						return nil, nil
					}
					return map[string]any{k: x}, nil
				}
			}
			return nil, fmt.Errorf("avro from JSON: %s: the union has no branch %q", pathName(at), k)
		}
	case *avro.ArraySchema:
		items, ok := v.([]any)
		if !ok {
			return bad()
		}
		out := make([]any, len(items))
		for i, it := range items {
			x, err := avroFromJSON(s.Items(), it, fmt.Sprintf("%s[%d]", at, i))
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case *avro.MapSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		out := make(map[string]any, len(m))
		for k, it := range m {
			x, err := avroFromJSON(s.Values(), it, at+"."+k)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	case *avro.EnumSchema:
		if str, ok := v.(string); ok {
			return str, nil
		}
		return bad()
	case *avro.FixedSchema:
		str, ok := v.(string)
		if !ok {
			return bad()
		}
		if s.Logical() != nil && s.Logical().Type() == avro.Decimal {
			r, ok := new(big.Rat).SetString(str)
			if !ok {
				return bad()
			}
			return r, nil
		}
		b, ok := fromLatin1(str)
		if !ok || len(b) != s.Size() {
			return nil, fmt.Errorf("avro from JSON: %s: fixed of %d bytes", pathName(at), s.Size())
		}
		arr := reflect.New(reflect.ArrayOf(s.Size(), reflect.TypeOf(byte(0)))).Elem()
		reflect.Copy(arr, reflect.ValueOf(b))
		return arr.Interface(), nil
	case *avro.PrimitiveSchema:
		return primitiveFromJSON(s, v, at)
	}
	return bad()
}

func primitiveFromJSON(s *avro.PrimitiveSchema, v any, at string) (any, error) {
	bad := fmt.Errorf("avro from JSON: %s: %v does not fit %s", pathName(at), v, s.Type())
	var lt avro.LogicalType
	if l := s.Logical(); l != nil {
		lt = l.Type()
	}
	num, isNum := v.(json.Number)
	switch s.Type() {
	case avro.Null:
		if v == nil {
			return nil, nil
		}
	case avro.Boolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case avro.Int, avro.Long:
		if !isNum {
			break
		}
		n, err := num.Int64()
		if err != nil {
			break
		}
		switch lt {
		case avro.Date:
			return time.Unix(n*86400, 0).UTC(), nil
		case avro.TimestampMillis, avro.LocalTimestampMillis:
			return time.UnixMilli(n).UTC(), nil
		case avro.TimestampMicros, avro.LocalTimestampMicros:
			return time.UnixMicro(n).UTC(), nil
		case avro.TimeMillis:
			return time.Duration(n) * time.Millisecond, nil
		case avro.TimeMicros:
			return time.Duration(n) * time.Microsecond, nil
		}
		if s.Type() == avro.Int {
			if n < math.MinInt32 || n > math.MaxInt32 {
				break
			}
			return int32(n), nil
		}
		return n, nil
	case avro.Float, avro.Double:
		var f float64
		if isNum {
			x, err := num.Float64()
			if err != nil {
				break
			}
			f = x
		} else if str, ok := v.(string); ok {
			x, err := strconv.ParseFloat(str, 64) // NaN, +Inf, -Inf as decode prints them
			if err != nil {
				break
			}
			f = x
		} else {
			break
		}
		if s.Type() == avro.Float {
			return float32(f), nil
		}
		return f, nil
	case avro.String:
		if str, ok := v.(string); ok {
			return str, nil
		}
	case avro.Bytes:
		str, ok := v.(string)
		if !ok {
			break
		}
		if lt == avro.Decimal {
			r, ok := new(big.Rat).SetString(str)
			if !ok {
				break
			}
			return r, nil
		}
		if b, ok := fromLatin1(str); ok {
			return b, nil
		}
	}
	return nil, bad
}

func fromLatin1(s string) ([]byte, bool) {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 255 {
			return nil, false
		}
		b = append(b, byte(r))
	}
	return b, true
}

func pathName(at string) string {
	if at == "" {
		return "the value"
	}
	return strings.TrimPrefix(at, ".")
}

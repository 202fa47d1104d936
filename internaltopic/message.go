package internaltopic

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"strconv"

	"github.com/klog-dev/klog/format"
)

// A schema interpreter: messageReader reads one message of the Kafka
// protocol's binary form (what Kafka's generated Message.read does) into a
// tree of values, and appendMessageJSON writes that tree as the generated
// *JsonConverter.write does, through Jackson's JsonNode.toString.

// javaError is an exception the Java reader would throw; msg is its
// getMessage(), "null" for exceptions without one (a BufferUnderflowException).
type javaError struct{ msg string }

func (e *javaError) Error() string { return e.msg }

var errUnderflow = &javaError{"null"}

// value is one decoded field value.
type value struct {
	set   bool    // the field was read (untagged in this version, or its tag was present)
	null  bool    // null string, bytes, array or struct
	i     int64   // integers; bool as 0/1
	f     float64 // float64
	b     []byte  // string (raw UTF-8 bytes), bytes, uuid (16 bytes); aliases the input
	elems []value // array elements, or a struct's fields by index
	raw   []byte  // when non-nil, written as this JSON text instead
}

// messageReader is a cursor over one message's bytes with Java's
// ByteBufferAccessor semantics. The first error is sticky.
type messageReader struct {
	buf     []byte
	pos     int
	version int16
	msg     *message
	err     error
}

func (r *messageReader) remaining() int { return len(r.buf) - r.pos }

func (r *messageReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *messageReader) failf(parts ...string) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(b, p...)
	}
	r.fail(&javaError{string(b)})
}

func (r *messageReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > r.remaining() {
		r.fail(errUnderflow)
		return nil
	}
	b := r.buf[r.pos : r.pos+n : r.pos+n]
	r.pos += n
	return b
}

func (r *messageReader) int8() int8 {
	b := r.take(1)
	if b == nil {
		return 0
	}
	return int8(b[0])
}

func (r *messageReader) int16() int16 {
	b := r.take(2)
	if b == nil {
		return 0
	}
	return int16(binary.BigEndian.Uint16(b))
}

func (r *messageReader) int32() int32 {
	b := r.take(4)
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

func (r *messageReader) int64() int64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

// uvarint is ByteUtils.readUnsignedVarint: at most 5 bytes, returned as a
// Java int (values of 2^31 and more come out negative).
func (r *messageReader) uvarint() int32 {
	var v uint32
	for i := 0; i < 5; i++ {
		b := r.take(1)
		if b == nil {
			return 0
		}
		v |= uint32(b[0]&0x7f) << (7 * i)
		if b[0] < 0x80 {
			return int32(v)
		}
	}
	r.failf("Varint is too long, the most significant bit in the 5th byte is set, converted value: ", strconv.FormatUint(uint64(v), 16))
	return 0
}

// readArray is Readable.readArray (ByteBufferAccessor): the length is checked
// against the remaining bytes first.
func (r *messageReader) readArray(n int32) []byte {
	if r.err != nil {
		return nil
	}
	if int(n) > r.remaining() {
		r.failf("Error reading byte array of ", strconv.Itoa(int(n)), " byte(s): only ", strconv.Itoa(r.remaining()), " byte(s) available")
		return nil
	}
	if n < 0 {
		r.failf(strconv.Itoa(int(n))) // NegativeArraySizeException
		return nil
	}
	return r.take(int(n))
}

// readMessage reads m at version from buf as the generated Message.read
// does. Which fields are read at a version is decided as the generated code
// decides it (javaHas): a field whose versions cover all of the message's
// valid versions is read at any version, even one outside them, and only
// nested structs check the version ("Can't read version").
func readMessage(m *message, version int16, buf []byte) ([]value, int, error) {
	r := &messageReader{buf: buf, version: version, msg: m}
	vals := r.readStruct(m.fields, m.name, m.valid, m.valid)
	if r.err != nil {
		return nil, r.pos, r.err
	}
	return vals, r.pos, nil
}

// javaHas is the condition Kafka's generator (VersionConditional) emits for
// "the version is in containing" when the code can only run at versions in
// possible: no test at all when possible lies inside containing, a one-sided
// test when it overlaps one end. Versions outside possible therefore pass
// or fail as that emitted test says, not as containing does.
func javaHas(containing, possible versionRange, v int16) bool {
	if containing.lo > containing.hi {
		return false // Versions.NONE: never a member
	}
	switch {
	case possible.lo < containing.lo:
		switch {
		case possible.hi > containing.hi:
			return v >= containing.lo && v <= containing.hi
		case possible.hi >= containing.lo:
			return v >= containing.lo
		}
		return false
	case possible.hi >= containing.lo && possible.lo <= containing.hi:
		if possible.hi > containing.hi {
			return v <= containing.hi
		}
		return true
	}
	return false
}

func (a versionRange) intersect(b versionRange) versionRange {
	r := versionRange{max(a.lo, b.lo), min(a.hi, b.hi)}
	if r.lo > r.hi {
		return noVersions
	}
	return r
}

// subtract is Versions.subtract: a minus b when that is one range
// (ok false when it would be two).
func (a versionRange) subtract(b versionRange) (versionRange, bool) {
	if a.lo > a.hi || b.lo > b.hi {
		return a, true
	}
	switch {
	case b.lo <= a.lo:
		switch {
		case b.hi >= a.hi:
			return noVersions, true
		case b.hi < a.lo:
			return a, true
		}
		return versionRange{b.hi + 1, a.hi}, true
	case b.hi >= a.hi:
		if b.lo-1 < a.hi {
			return versionRange{a.lo, b.lo - 1}, true
		}
		return a, true
	}
	return a, false
}

// readStruct reads one struct: parent is the versions its generated class
// was made for (the message's valid versions, narrowed by enclosing
// fields), versions the struct's own (the field's).
func (r *messageReader) readStruct(fs []field, name string, parent, versions versionRange) []value {
	if !javaHas(parent, versions, r.version) {
		r.failf("Can't read version ", strconv.Itoa(int(r.version)), " of ", name)
		return nil
	}
	cur := parent.intersect(versions)
	vals := make([]value, len(fs))
	for i := range fs {
		f := &fs[i]
		mandatory, _ := f.versions.subtract(f.tagged)
		if !javaHas(mandatory, cur, r.version) {
			continue
		}
		vals[i] = r.readField(f, cur)
		vals[i].set = true
		if r.err != nil {
			return nil
		}
	}
	if !javaHas(r.msg.flexible, cur, r.version) {
		return vals
	}
	curFlexible := r.msg.flexible.intersect(cur)
	n := r.uvarint()
	for j := int32(0); j < n && r.err == nil; j++ {
		tag := r.uvarint()
		size := r.uvarint()
		if r.err != nil {
			break
		}
		// The generated switch has a case for every field tagged in some
		// version; a tag valid only in other versions throws.
		k := -1
		var validTagged versionRange
		for i := range fs {
			validTagged = fs[i].versions.intersect(fs[i].tagged)
			if validTagged != noVersions && int64(fs[i].tag) == int64(tag) {
				k = i
				break
			}
		}
		if k < 0 {
			r.readArray(size) // an unknown tagged field is kept raw and never printed
			continue
		}
		if !javaHas(validTagged, curFlexible, r.version) {
			r.failf("Tag ", strconv.Itoa(int(tag)), " is not valid for version ", strconv.Itoa(int(r.version)))
			break
		}
		vals[k] = r.readField(&fs[k], cur)
		vals[k].set = true
	}
	if r.err != nil {
		return nil
	}
	return vals
}

// length reads a compact (flexible) or classic length prefix; cur is the
// versions the enclosing struct's code was generated for.
func (r *messageReader) length(cur versionRange, classic func() int32) int32 {
	if javaHas(r.msg.flexible, cur, r.version) {
		return r.uvarint() - 1
	}
	return classic()
}

func (r *messageReader) readField(f *field, cur versionRange) value {
	nullable := javaHas(f.nullable, cur.intersect(f.versions), r.version)
	if !f.array {
		return r.readOne(f, f.name, nullable, cur)
	}
	n := r.length(cur, r.int32)
	if r.err != nil {
		return value{}
	}
	if n < 0 {
		if nullable {
			return value{null: true}
		}
		r.failf("non-nullable field ", f.name, " was serialized as null")
		return value{}
	}
	if int(n) > r.remaining() {
		r.failf("Tried to allocate a collection of size ", strconv.Itoa(int(n)), ", but there are only ",
			strconv.Itoa(r.remaining()), " bytes remaining.")
		return value{}
	}
	// n is at most the remaining bytes; clamp the preallocation anyway
	// (a value is ~100 bytes, an int32 element 4).
	elems := make([]value, 0, min(int(n), 256))
	elemName := f.name + " element"
	for i := int32(0); i < n && r.err == nil; i++ {
		elems = append(elems, r.readOne(f, elemName, false, cur))
	}
	return value{elems: elems}
}

// readOne reads a single value of f's type (an array's element when f is an
// array); name is what Kafka's error messages call it.
func (r *messageReader) readOne(f *field, name string, canBeNull bool, cur versionRange) value {
	switch f.typ {
	case typeBool:
		if r.int8() != 0 {
			return value{i: 1}
		}
		return value{}
	case typeInt8:
		return value{i: int64(r.int8())}
	case typeInt16:
		return value{i: int64(r.int16())}
	case typeUint16:
		return value{i: int64(uint16(r.int16()))}
	case typeInt32:
		return value{i: int64(r.int32())}
	case typeUint32:
		return value{i: int64(uint32(r.int32()))}
	case typeInt64:
		return value{i: r.int64()}
	case typeFloat64:
		return value{f: math.Float64frombits(uint64(r.int64()))}
	case typeUUID:
		return value{b: r.take(16)}
	case typeString:
		n := r.length(cur, func() int32 { return int32(r.int16()) })
		switch {
		case r.err != nil:
			return value{}
		case n < 0:
			if canBeNull {
				return value{null: true}
			}
			r.failf("non-nullable field ", name, " was serialized as null")
			return value{}
		case n > 0x7fff:
			r.failf("string field ", name, " had invalid length ", strconv.Itoa(int(n)))
			return value{}
		}
		return value{b: r.readArray(n)}
	case typeBytes:
		n := r.length(cur, r.int32)
		if r.err != nil {
			return value{}
		}
		if n < 0 {
			if canBeNull {
				return value{null: true}
			}
			r.failf("non-nullable field ", name, " was serialized as null")
			return value{}
		}
		return value{b: r.readArray(n)}
	case typeStruct:
		if canBeNull && r.int8() < 0 {
			return value{null: true}
		}
		if r.err != nil {
			return value{}
		}
		return value{elems: r.readStruct(f.fields, f.structName, cur, f.versions)}
	}
	r.failf("unknown field type")
	return value{}
}

// appendMessageJSON writes the values of a message read at version as its
// generated JsonConverter.write(message, version) and Jackson's toString:
// compact, fields in schema order, only the fields the generated code writes
// at version (javaHas), and tagged fields only when they differ from their
// default.
func appendMessageJSON(dst []byte, m *message, version int16, vals []value) []byte {
	return appendStructJSON(dst, m.fields, version, m.valid, vals)
}

// appendStructJSON writes one struct; cur is the versions its converter was
// generated for.
func appendStructJSON(dst []byte, fs []field, version int16, cur versionRange, vals []value) []byte {
	dst = append(dst, '{')
	first := true
	for i := range fs {
		f := &fs[i]
		if !javaHas(f.versions, cur, version) {
			continue
		}
		var v value
		if i < len(vals) {
			v = vals[i]
		}
		if javaHas(f.tagged, cur.intersect(f.versions), version) && (!v.set || isDefault(f, &v)) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, '"')
		dst = append(dst, f.name...)
		dst = append(dst, '"', ':')
		dst = appendValueJSON(dst, f, version, cur.intersect(f.versions), &v, f.array)
	}
	return append(dst, '}')
}

func appendValueJSON(dst []byte, f *field, version int16, cur versionRange, v *value, asArray bool) []byte {
	if v.raw != nil {
		return append(dst, v.raw...)
	}
	if v.null {
		return append(dst, "null"...)
	}
	if asArray {
		dst = append(dst, '[')
		for i := range v.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValueJSON(dst, f, version, cur, &v.elems[i], false)
		}
		return append(dst, ']')
	}
	switch f.typ {
	case typeBool:
		return strconv.AppendBool(dst, v.i != 0)
	case typeInt8, typeInt16, typeUint16, typeInt32, typeUint32, typeInt64:
		return strconv.AppendInt(dst, v.i, 10)
	case typeFloat64:
		return appendJacksonDouble(dst, v.f)
	case typeUUID:
		dst = append(dst, '"')
		dst = appendKafkaUUID(dst, v.b)
		return append(dst, '"')
	case typeString:
		return AppendJacksonString(dst, string(format.AppendJavaUTF8(nil, v.b)))
	case typeBytes:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v.b)
		return append(dst, '"')
	case typeStruct:
		return appendStructJSON(dst, f.fields, version, cur, v.elems)
	}
	return dst
}

// appendKafkaUUID writes Uuid.toString: URL-safe base64 without padding.
func appendKafkaUUID(dst, b []byte) []byte {
	var u [16]byte
	copy(u[:], b)
	return base64.RawURLEncoding.AppendEncode(dst, u[:])
}

// isDefault is the generated converter's "non-default value" check for a
// tagged field (FieldSpec.generateNonDefaultValueCheck), inverted.
func isDefault(f *field, v *value) bool {
	if f.array {
		if f.def.null {
			return v.null
		}
		return !v.null && len(v.elems) == 0
	}
	switch f.typ {
	case typeBool, typeInt8, typeInt16, typeUint16, typeInt32, typeUint32, typeInt64:
		return v.i == f.def.i
	case typeFloat64:
		return v.f == f.def.f
	case typeUUID:
		for _, c := range v.b {
			if c != 0 {
				return false
			}
		}
		return true
	case typeString:
		if f.def.null {
			return v.null
		}
		return !v.null && string(format.AppendJavaUTF8(nil, v.b)) == f.def.s
	case typeBytes:
		if f.def.null {
			return v.null
		}
		return !v.null && len(v.b) == 0
	case typeStruct:
		if f.def.null {
			return v.null
		}
		return !v.null && structIsDefault(f.fields, v.elems)
	}
	return false
}

// structIsDefault reports whether a struct equals a newly constructed one
// (its generated equals compares every field, in any version).
func structIsDefault(fs []field, vals []value) bool {
	for i := range fs {
		if i >= len(vals) || !vals[i].set {
			continue
		}
		f := &fs[i]
		v := &vals[i]
		if !f.array && f.typ == typeStruct && !f.def.null {
			if v.null || !structIsDefault(f.fields, v.elems) {
				return false
			}
			continue
		}
		if !isDefault(f, v) {
			return false
		}
	}
	return true
}

// appendJacksonDouble writes a DoubleNode: Java's Double.toString, or the
// quoted names Jackson uses for NaN and the infinities.
func appendJacksonDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	return appendJavaDouble(dst, f)
}

// appendJavaDouble formats f as Java's Double.toString: the shortest digits
// that round-trip, as plain decimal with at least one fraction digit when
// 1e-3 <= |f| < 1e7, otherwise as d.dddE<exp>.
func appendJavaDouble(dst []byte, f float64) []byte {
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Shortest digits and decimal exponent: f = 0.DIGITS * 10^exp.
	e := strconv.AppendFloat(nil, f, 'e', -1, 64) // d.ddde±XX
	mant, expPart := e, []byte(nil)
	for i, c := range e {
		if c == 'e' {
			mant, expPart = e[:i], e[i+1:]
			break
		}
	}
	exp, _ := strconv.Atoi(string(expPart))
	digits := make([]byte, 0, len(mant))
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	if len(digits) == 1 {
		// Java always shows two significant digits (d.d) and picks the
		// two-digit decimal closest to f when it still rounds to f:
		// Double.MIN_VALUE is 4.9E-324, not 5.0E-324.
		two := strconv.AppendFloat(nil, f, 'e', 1, 64)
		if p, err := strconv.ParseFloat(string(two), 64); err == nil && p == f && two[2] != '0' {
			digits = append(digits[:0], two[0], two[2])
			exp, _ = strconv.Atoi(string(two[4:]))
		}
	}
	if f >= 1e-3 && f < 1e7 {
		// Plain: the point goes after exp+1 digits.
		point := exp + 1
		if point <= 0 {
			dst = append(dst, '0', '.')
			for i := 0; i < -point; i++ {
				dst = append(dst, '0')
			}
			return append(dst, digits...)
		}
		for len(digits) < point {
			digits = append(digits, '0')
		}
		dst = append(dst, digits[:point]...)
		dst = append(dst, '.')
		if len(digits) == point {
			return append(dst, '0')
		}
		return append(dst, digits[point:]...)
	}
	dst = append(dst, digits[0], '.')
	if len(digits) == 1 {
		dst = append(dst, '0')
	} else {
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(exp), 10)
}

// AppendJacksonString quotes s as Jackson's TextNode does: '"' and '\\'
// escaped, control characters as \n \t \r \b \f or \u00XX, everything else
// (including non-ASCII) written raw.
func AppendJacksonString(l []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	l = append(l, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			l = append(l, '\\', c)
		case c == '\n':
			l = append(l, '\\', 'n')
		case c == '\t':
			l = append(l, '\\', 't')
		case c == '\r':
			l = append(l, '\\', 'r')
		case c == '\b':
			l = append(l, '\\', 'b')
		case c == '\f':
			l = append(l, '\\', 'f')
		case c < 0x20:
			l = append(l, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			l = append(l, c)
		}
	}
	return append(l, '"')
}

// Package recordfmt prints records through format strings as kcat's -f and
// rpk's --format take them, so that a user's habits from those tools work on
// a partition directory.
//
//   - [ParseKcat] reads kcat's syntax (kcat's format.c): %t topic, %p
//     partition, %o offset, %T timestamp (epoch ms), %k key, %K key length
//     (-1 for null), %s value, %S value length (-1 for null), %R value length
//     as a 4-byte big-endian int, %h headers as key=value,... (a null value
//     NULL), %% a percent sign; \n \t \r, \xHH and \NNN (decimal, or octal
//     with a leading 0) escapes, any other \c is c. klog adds %e (leader
//     epoch) and %O (the byte position of the record's batch in its file).
//   - [ParseRPK] reads rpk's syntax through franz-go's kgo.RecordFormatter,
//     the formatter rpk itself uses (%t %T %k %K %v %V %h{...} %H %p %o %e
//     %d{...} %a{...} %x %y %[ %| %] %i and modifiers).
//
// With a key or value format (package schema), Key and Value hold the decoded
// value's JSON, as kcat prints Avro with -s avro.
package recordfmt

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Header is one record header.
type Header struct {
	Key   []byte
	Value []byte // nil for null
}

// Record is what a format string can print. Key and Value are nil when
// null.
type Record struct {
	Topic       string
	Partition   int32
	Offset      int64
	Timestamp   int64 // epoch ms, -1 for none
	Key, Value  []byte
	Headers     []Header
	LeaderEpoch int32
	ProducerID  int64
	// ProducerEpoch is -1 for none.
	ProducerEpoch int16
	// Attributes are the batch's: compression codec, timestamp type
	// (1 LogAppendTime, 0 CreateTime, -1 none), transactional, control.
	Codec         int8
	TimestampType int8
	Transactional bool
	Control       bool
	// Position is the byte position of the record's batch in its file.
	Position int64
	// LogStartOffset, LastStableOffset and HighWatermark are the
	// partition's, for rpk's %[ %| %] (-1 when unknown).
	LogStartOffset, LastStableOffset, HighWatermark int64
}

// Formatter appends one formatted record to dst.
type Formatter interface {
	Append(dst []byte, r *Record) []byte
}

type kcatKind uint8

const (
	kLiteral kcatKind = iota
	kTopic
	kPartition
	kOffset
	kTimestamp
	kKey
	kKeyLen
	kValue
	kValueLen
	kValueLenBinary
	kHeaders
	kLeaderEpoch
	kPosition
)

type kcatPart struct {
	kind kcatKind
	lit  []byte
}

// Kcat is a parsed kcat format string.
type Kcat struct {
	parts []kcatPart
	// Null, when not empty, is printed for a null or empty key or value
	// (kcat's -Z prints "NULL" for both); kcat prints nothing for either by
	// default.
	Null string
}

// ErrFormat is a format string that does not parse.
var ErrFormat = errors.New("bad format string")

// ParseKcat parses a kcat -f format string.
func ParseKcat(s string) (*Kcat, error) {
	k := &Kcat{}
	for len(s) > 0 {
		i := strings.IndexByte(s, '%')
		if i < 0 {
			k.lit(s)
			break
		}
		if i > 0 {
			k.lit(s[:i])
		}
		if i+1 >= len(s) {
			return nil, fmt.Errorf("%w: %q ends with a lone %%", ErrFormat, s)
		}
		var kind kcatKind
		switch s[i+1] {
		case 't':
			kind = kTopic
		case 'p':
			kind = kPartition
		case 'o':
			kind = kOffset
		case 'T':
			kind = kTimestamp
		case 'k':
			kind = kKey
		case 'K':
			kind = kKeyLen
		case 's':
			kind = kValue
		case 'S':
			kind = kValueLen
		case 'R':
			kind = kValueLenBinary
		case 'h':
			kind = kHeaders
		case 'e':
			kind = kLeaderEpoch
		case 'O':
			kind = kPosition
		case '%':
			k.parts = append(k.parts, kcatPart{kind: kLiteral, lit: []byte{'%'}})
			s = s[i+2:]
			continue
		default:
			return nil, fmt.Errorf("%w: unsupported formatter %%%c (kcat's: %%t %%p %%o %%T %%k %%K %%s %%S %%R %%h %%%%; klog's: %%e %%O)", ErrFormat, s[i+1])
		}
		k.parts = append(k.parts, kcatPart{kind: kind})
		s = s[i+2:]
	}
	return k, nil
}

// lit adds a literal with kcat's backslash escapes applied.
func (k *Kcat) lit(s string) {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b = append(b, c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b = append(b, '\t')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 'x':
			// kcat reads hex only when a decimal digit follows \x
			// (strtoul after its own digit check): \x41 is A, \xff is
			// "ff", and \x at the end is a NUL.
			i++
			if i >= len(s) {
				b = append(b, 0)
				continue
			}
			if s[i] < '0' || s[i] > '9' {
				b = append(b, s[i])
				continue
			}
			j := i
			for j < len(s) && isHex(s[j]) {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 16, 64)
			b = append(b, byte(v))
			i = j - 1
		default:
			if s[i] >= '0' && s[i] <= '9' {
				j := i
				for j < len(s) && s[j] >= '0' && s[j] <= '9' {
					j++
				}
				base := 10
				if s[i] == '0' {
					base = 8 // strtoul with base 0
				}
				v, _ := strconv.ParseUint(s[i:j], base, 64)
				b = append(b, byte(v))
				i = j - 1
			} else {
				b = append(b, s[i])
			}
		}
	}
	k.parts = append(k.parts, kcatPart{kind: kLiteral, lit: b})
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Append implements Formatter.
func (k *Kcat) Append(dst []byte, r *Record) []byte {
	for _, p := range k.parts {
		switch p.kind {
		case kLiteral:
			dst = append(dst, p.lit...)
		case kTopic:
			dst = append(dst, r.Topic...)
		case kPartition:
			dst = strconv.AppendInt(dst, int64(r.Partition), 10)
		case kOffset:
			dst = strconv.AppendInt(dst, r.Offset, 10)
		case kTimestamp:
			dst = strconv.AppendInt(dst, r.Timestamp, 10)
		case kKey:
			dst = k.bytes(dst, r.Key)
		case kKeyLen:
			dst = strconv.AppendInt(dst, length(r.Key), 10)
		case kValue:
			dst = k.bytes(dst, r.Value)
		case kValueLen:
			dst = strconv.AppendInt(dst, length(r.Value), 10)
		case kValueLenBinary:
			n := uint32(int32(length(r.Value)))
			dst = append(dst, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		case kHeaders:
			for i, h := range r.Headers {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(append(dst, h.Key...), '=')
				if h.Value == nil {
					dst = append(dst, "NULL"...)
				} else {
					dst = append(dst, h.Value...)
				}
			}
		case kLeaderEpoch:
			dst = strconv.AppendInt(dst, int64(r.LeaderEpoch), 10)
		case kPosition:
			dst = strconv.AppendInt(dst, r.Position, 10)
		}
	}
	return dst
}

// bytes writes a key or value; kcat writes Null for an empty one as for a
// null one (it tests the length, not the pointer).
func (k *Kcat) bytes(dst, b []byte) []byte {
	if len(b) == 0 {
		return append(dst, k.Null...)
	}
	return append(dst, b...)
}

func length(b []byte) int64 {
	if b == nil {
		return -1
	}
	return int64(len(b))
}

// RPK is a parsed rpk --format string (franz-go's kgo.RecordFormatter).
type RPK struct {
	f *kgo.RecordFormatter
	// reused per call; RPK is not safe for concurrent use.
	rec  kgo.Record
	part kgo.FetchPartition
	hdrs []kgo.RecordHeader
}

// ParseRPK parses an rpk --format string.
func ParseRPK(s string) (*RPK, error) {
	f, err := kgo.NewRecordFormatter(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return &RPK{f: f}, nil
}

// Append implements Formatter.
func (p *RPK) Append(dst []byte, r *Record) []byte {
	p.hdrs = p.hdrs[:0]
	for _, h := range r.Headers {
		p.hdrs = append(p.hdrs, kgo.RecordHeader{Key: string(h.Key), Value: h.Value})
	}
	ts := time.Time{}
	if r.Timestamp >= 0 {
		ts = time.UnixMilli(r.Timestamp).UTC()
	}
	p.rec = kgo.Record{
		Key: r.Key, Value: r.Value, Headers: p.hdrs, Timestamp: ts, Topic: r.Topic,
		Partition: r.Partition, ProducerEpoch: r.ProducerEpoch, ProducerID: r.ProducerID,
		LeaderEpoch: r.LeaderEpoch, Offset: r.Offset,
		Attrs: kgo.NewRecordAttrs(kgo.RecordAttrsOpts{Codec: kgo.CompressionCodecType(r.Codec),
			TimestampType: r.TimestampType, Transactional: r.Transactional, Control: r.Control}),
	}
	p.part = kgo.FetchPartition{Partition: r.Partition, HighWatermark: r.HighWatermark,
		LastStableOffset: r.LastStableOffset, LogStartOffset: r.LogStartOffset}
	return p.f.AppendPartitionRecord(dst, &p.part, &p.rec)
}

// Parse reads a format string as rpk's when rpk is true, else kcat's.
func Parse(s string, rpk bool) (Formatter, error) {
	if rpk {
		return ParseRPK(s)
	}
	return ParseKcat(s)
}

// Package filter evaluates --where expressions over records. Expressions are
// CEL (the Common Expression Language, github.com/google/cel-go), checked
// once when parsed and required to give a bool. A record offers:
//
//	offset, timestamp (epoch ms, -1 for none), partition, leaderEpoch  int
//	topic                                                             string
//	key, value      the decoded value (--key-format/--value-format: a map,
//	                list, string, number, bool or null), else the bytes as a
//	                string (invalid UTF-8 replaced); null when null
//	keyBytes, valueBytes                                   bytes (null: b"")
//	keySize, valueSize                                     int (-1 for null)
//	headers         map(string, string): the last value of each key
//	                (a null value is "")
//
// for example `value.amount > 100 && headers["source"] == "web"` or
// `timestamp >= 1700000000000 && key.startsWith("order-")`. Evaluation is
// bounded (a cost limit per record) and never panics; an expression that
// fails on a record (a missing field, a type mismatch) does not match it, and
// the error is reported once per Filter (Err).
package filter

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
)

// Record is what an expression sees. Key and Value are the raw bytes (nil
// for null); KeyDecoded and ValueDecoded the decoded values when a format
// decoded them (HasKeyDecoded, HasValueDecoded).
type Record struct {
	Topic                          string
	Partition                      int32
	Offset                         int64
	Timestamp                      int64
	LeaderEpoch                    int32
	Key, Value                     []byte
	Headers                        []Header
	KeyDecoded, ValueDecoded       any
	HasKeyDecoded, HasValueDecoded bool
}

// Header is one record header.
type Header struct {
	Key, Value []byte
}

// Filter is a compiled expression. It is safe for concurrent use.
type Filter struct {
	src  string
	prg  cel.Program
	uses map[string]bool

	mu      sync.Mutex
	evalErr error
}

// costLimit bounds one evaluation (CEL's cost units: roughly one per
// operation and per byte a string function reads).
const costLimit = 10_000_000

var env = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("offset", cel.IntType),
		cel.Variable("timestamp", cel.IntType),
		cel.Variable("partition", cel.IntType),
		cel.Variable("leaderEpoch", cel.IntType),
		cel.Variable("topic", cel.StringType),
		cel.Variable("key", cel.DynType),
		cel.Variable("value", cel.DynType),
		cel.Variable("keyBytes", cel.BytesType),
		cel.Variable("valueBytes", cel.BytesType),
		cel.Variable("keySize", cel.IntType),
		cel.Variable("valueSize", cel.IntType),
		cel.Variable("headers", cel.MapType(cel.StringType, cel.StringType)),
	)
})

// ErrExpression is an expression that does not compile.
var ErrExpression = errors.New("bad --where expression")

// Parse compiles expr.
func Parse(expr string) (*Filter, error) {
	e, err := env()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(expr)
	if iss.Err() != nil {
		// One line, as every usage error: CEL's own text adds the
		// expression and a caret on lines of their own.
		var msgs []string
		for _, ce := range iss.Errors() {
			msgs = append(msgs, fmt.Sprintf("column %d: %s", ce.Location.Column()+1, ce.Message))
		}
		return nil, fmt.Errorf("%w: %s", ErrExpression, strings.Join(msgs, "; "))
	}
	if !ast.OutputType().IsExactType(types.BoolType) && !ast.OutputType().IsExactType(types.DynType) {
		return nil, fmt.Errorf("%w: %q gives %s, not a bool", ErrExpression, expr, ast.OutputType())
	}
	prg, err := e.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.CostLimit(costLimit))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrExpression, err)
	}
	f := &Filter{src: expr, prg: prg, uses: map[string]bool{}}
	for _, name := range []string{"key", "value", "keyBytes", "valueBytes", "headers", "topic"} {
		if strings.Contains(expr, name) {
			f.uses[name] = true
		}
	}
	return f, nil
}

// String is the expression.
func (f *Filter) String() string { return f.src }

// NeedsValue reports whether the expression may read the value (so a caller
// that can skip decoding values knows it must not).
func (f *Filter) NeedsValue() bool { return f.uses["value"] || f.uses["valueBytes"] }

// Match evaluates the expression on r. An evaluation error is no match; the
// first one is kept for Err.
func (f *Filter) Match(r *Record) bool {
	out, _, err := f.prg.Eval(&activation{r: r})
	if err != nil {
		f.mu.Lock()
		if f.evalErr == nil {
			f.evalErr = fmt.Errorf("--where %q at offset %d: %w", f.src, r.Offset, err)
		}
		f.mu.Unlock()
		return false
	}
	b, ok := out.Value().(bool)
	return ok && b
}

// Err is the first evaluation error met (the records it met were not
// matched), or nil; nil for a nil Filter.
func (f *Filter) Err() error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.evalErr
}

// activation resolves the variables of one record lazily: only what the
// expression reads is built.
type activation struct{ r *Record }

func (a *activation) ResolveName(name string) (any, bool) {
	r := a.r
	switch name {
	case "offset":
		return r.Offset, true
	case "timestamp":
		return r.Timestamp, true
	case "partition":
		return int64(r.Partition), true
	case "leaderEpoch":
		return int64(r.LeaderEpoch), true
	case "topic":
		return r.Topic, true
	case "key":
		return view(r.Key, r.KeyDecoded, r.HasKeyDecoded), true
	case "value":
		return view(r.Value, r.ValueDecoded, r.HasValueDecoded), true
	case "keyBytes":
		return bytesOrEmpty(r.Key), true
	case "valueBytes":
		return bytesOrEmpty(r.Value), true
	case "keySize":
		return size(r.Key), true
	case "valueSize":
		return size(r.Value), true
	case "headers":
		m := make(map[string]string, len(r.Headers))
		for _, h := range r.Headers {
			m[text(h.Key)] = text(h.Value)
		}
		return m, true
	}
	return nil, false
}

func (a *activation) Parent() cel.Activation { return nil }

func view(b []byte, decoded any, has bool) any {
	if has {
		return Normalize(decoded)
	}
	if b == nil {
		return types.NullValue
	}
	return text(b)
}

func bytesOrEmpty(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func size(b []byte) int64 {
	if b == nil {
		return -1
	}
	return int64(len(b))
}

// text is b as a CEL string: CEL strings are valid UTF-8.
func text(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// Normalize turns decoded values into the types CEL takes: json.Number to
// int64 (or float64), nested maps and lists too; nil to null.
func Normalize(v any) any {
	switch x := v.(type) {
	case nil:
		return types.NullValue
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Normalize(e)
		}
		return out
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	case string:
		return text([]byte(x))
	}
	return v
}

package filter

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	dec := map[string]any{"amount": json.Number("150"), "customer": "ada", "tags": []any{"x", "vip"},
		"address": map[string]any{"city": "London"}, "ratio": json.Number("0.5"), "note": nil}
	r := &Record{Topic: "orders", Partition: 2, Offset: 41, Timestamp: 1700000000000, LeaderEpoch: 3,
		Key: []byte("order-41"), Value: []byte("raw"), ValueDecoded: dec, HasValueDecoded: true,
		Headers: []Header{{Key: []byte("source"), Value: []byte("web")}, {Key: []byte("n"), Value: nil}}}
	cases := []struct {
		expr string
		want bool
	}{
		{`offset == 41`, true},
		{`offset > 41`, false},
		{`timestamp >= 1700000000000 && partition == 2 && topic == "orders" && leaderEpoch == 3`, true},
		{`key == "order-41"`, true},
		{`key.startsWith("order-")`, true},
		{`keyBytes == b"order-41"`, true},
		{`keySize == 8 && valueSize == 3`, true},
		{`valueBytes == b"raw"`, true},
		{`value.amount > 100`, true},
		{`value.amount > 100 && value.customer == "ada"`, true},
		{`"vip" in value.tags`, true},
		{`value.address.city == "London"`, true},
		{`value.ratio < 1.0`, true},
		{`value.note == null`, true},
		{`headers["source"] == "web"`, true},
		{`headers.n == ""`, true},
		{`"missing" in headers`, false},
		{`value.nosuchfield == 1`, false}, // an error: no match
		{`key.matches("^order-[0-9]+$")`, true},
	}
	for _, c := range cases {
		f, err := Parse(c.expr)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		if got := f.Match(r); got != c.want {
			t.Errorf("%s: %v, want %v (err %v)", c.expr, got, c.want, f.Err())
		}
	}
	f, _ := Parse(`value.nosuchfield == 1`)
	f.Match(r)
	if f.Err() == nil {
		t.Error("an evaluation error is kept for Err")
	}
}

func TestRawAndNull(t *testing.T) {
	t.Parallel()
	f, _ := Parse(`key == null && value == "\uFFFDx"`)
	if !f.Match(&Record{Key: nil, Value: []byte{0xff, 'x'}}) {
		t.Errorf("null key and invalid UTF-8: %v", f.Err())
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{`offset +`, `offset + 1`, `nosuch == 1`, `"a"`} {
		if _, err := Parse(bad); !errors.Is(err, ErrExpression) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v; want ErrExpression on one line", bad, err)
		}
	}
}

// TestCostLimit: an expression that would run away on a record stops and
// does not match.
func TestCostLimit(t *testing.T) {
	t.Parallel()
	f, err := Parse(`[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(g, [1,2,3,4,5,6,7,8,9,10].all(h, valueBytes.size() >= 0)))))))`)
	if err != nil {
		t.Fatal(err)
	}
	if f.Match(&Record{Value: []byte("x")}) || f.Err() == nil {
		t.Errorf("a 10^7-step expression matched or did not stop: %v", f.Err())
	}
}

func BenchmarkMatch(b *testing.B) {
	for _, c := range []struct{ name, expr string }{
		{"offset", `offset > 1000 && offset < 2000`},
		{"key", `key.startsWith("order-1")`},
		{"decoded", `value.amount > 100`},
	} {
		f, err := Parse(c.expr)
		if err != nil {
			b.Fatal(err)
		}
		r := &Record{Offset: 1500, Key: []byte("order-12345"), Value: make([]byte, 1024),
			ValueDecoded: map[string]any{"amount": int64(150)}, HasValueDecoded: true}
		b.Run("expr="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f.Match(r)
			}
		})
	}
}

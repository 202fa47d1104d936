package recordfmt

import (
	"errors"
	"testing"
)

func TestKcatEscapes(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`a\tb\nc\r`, "a\tb\nc\r"},
		{`\x41\x4a`, "AJ"},
		{`\xff`, "ff"},   // kcat reads hex only after a decimal digit
		{`\x0a|`, "\n|"}, // hex digits run on
		{`\65`, "A"},     // decimal
		{`\012`, "\n"},   // octal with a leading 0
		{`\\ \q`, `\ q`}, // any other character stands for itself
		{`end\`, `end\`}, // a trailing backslash is kept
		{`100%%`, "100%"},
	}
	for _, c := range cases {
		k, err := ParseKcat(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if got := string(k.Append(nil, &Record{})); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestKcatTokens(t *testing.T) {
	t.Parallel()
	r := &Record{Topic: "t", Partition: 3, Offset: 42, Timestamp: 1700000000000, Key: []byte("k"), Value: nil,
		Headers:     []Header{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("b")}, {Key: []byte("c"), Value: []byte{}}},
		LeaderEpoch: 7, Position: 118}
	k, err := ParseKcat(`%t [%p] @%o %T k=%k(%K) v=%s(%S) h=%h e=%e pos=%O`)
	if err != nil {
		t.Fatal(err)
	}
	want := "t [3] @42 1700000000000 k=k(1) v=(-1) h=a=1,b=NULL,c= e=7 pos=118"
	if got := string(k.Append(nil, r)); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	k.Null = "NULL"
	if got := string(k.Append(nil, &Record{Topic: "t"})); got != "t [0] @0 0 k=NULL(-1) v=NULL(-1) h= e=0 pos=0" {
		t.Errorf("with Null: %q", got)
	}
	if got := string(mustKcat(t, `%R`).Append(nil, &Record{Value: []byte("abc")})); got != "\x00\x00\x00\x03" {
		t.Errorf("%%R: %q", got)
	}
	if got := string(mustKcat(t, `%R`).Append(nil, &Record{})); got != "\xff\xff\xff\xff" {
		t.Errorf("%%R of null: %q", got)
	}
	for _, bad := range []string{`%q`, `abc%`} {
		if _, err := ParseKcat(bad); !errors.Is(err, ErrFormat) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func mustKcat(t *testing.T, s string) *Kcat {
	t.Helper()
	k, err := ParseKcat(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestRPK(t *testing.T) {
	t.Parallel()
	r := &Record{Topic: "orders", Partition: 1, Offset: 9, Timestamp: 1700000000123, Key: []byte("k"), Value: []byte("v1"),
		Headers: []Header{{Key: []byte("h"), Value: []byte("x")}}, LeaderEpoch: 2, ProducerID: 5, ProducerEpoch: 1,
		Codec: 4, HighWatermark: 10, LogStartOffset: 0, LastStableOffset: 10}
	p, err := ParseRPK(`%t/%p@%o %k=%v %V{hex8} %H %h{%k:%v;} %d{go#RFC3339Nano#} %e %x %y %a{compression} %]\n`)
	if err != nil {
		t.Fatal(err)
	}
	want := "orders/1@9 k=v1 02 1 h:x; 2023-11-14T22:13:20.123Z 2 5 1 zstd 10\n"
	if got := string(p.Append(nil, r)); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if _, err := ParseRPK(`%v{nope}`); !errors.Is(err, ErrFormat) {
		t.Errorf("bad modifier: %v", err)
	}
}

func BenchmarkKcat(b *testing.B) {
	k := mustKcatB(b, `%t %p %o %T %k %s %h\n`)
	r := &Record{Topic: "topic", Offset: 123456, Timestamp: 1700000000000, Key: []byte("key-1"), Value: make([]byte, 1024),
		Headers: []Header{{Key: []byte("a"), Value: []byte("b")}}}
	var buf []byte
	b.SetBytes(int64(len(r.Value)))
	b.ReportAllocs()
	for b.Loop() {
		buf = k.Append(buf[:0], r)
	}
}

func mustKcatB(b *testing.B, s string) *Kcat {
	k, err := ParseKcat(s)
	if err != nil {
		b.Fatal(err)
	}
	return k
}

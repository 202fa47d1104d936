package ndjson

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{"\"\\/", `"\"\\/"`},
		{"\n\r\t\x00\x1f\x7f", `"\n\r\t\u0000\u001f` + "\x7f\""},
		{"héllo\u2028", "\"héllo\u2028\""},
		{"a\xffb", "\"a\ufffdb\""},
		{"\xed\xa0\x80", "\"\ufffd\ufffd\ufffd\""}, // an encoded surrogate is invalid UTF-8
	}
	for _, c := range cases {
		if got := string(String(nil, c.in)); got != c.want {
			t.Errorf("String(%q) = %s, want %s", c.in, got, c.want)
		}
		var back string
		if err := json.Unmarshal(String(nil, c.in), &back); err != nil {
			t.Errorf("String(%q): %v", c.in, err)
		}
	}
}

// decodeField reads back a field written by Bytes.
func decodeField(t *testing.T, line []byte) ([]byte, string) {
	t.Helper()
	var o struct {
		V   *string `json:"v"`
		Enc string  `json:"vEncoding"`
	}
	if err := json.Unmarshal(line, &o); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	if o.V == nil {
		return nil, o.Enc
	}
	switch o.Enc {
	case "base64":
		b, err := base64.StdEncoding.DecodeString(*o.V)
		if err != nil {
			t.Fatal(err)
		}
		return b, o.Enc
	case "hex":
		b, err := hex.DecodeString(*o.V)
		if err != nil {
			t.Fatal(err)
		}
		return b, o.Enc
	}
	return []byte(*o.V), o.Enc
}

func bytesLine(v []byte, e Encoding) []byte {
	return End(Bytes(Begin(nil, "t"), "v", "vEncoding", v, e))
}

func TestBytes(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	cases := []struct {
		v       []byte
		e       Encoding
		wantEnc string
	}{
		{nil, EncodingText, ""},
		{[]byte{}, EncodingText, ""},
		{[]byte("text ✓"), EncodingText, ""},
		{all, EncodingText, "base64"},
		{all[:128], EncodingText, ""}, // ASCII, controls included: a string
		{[]byte{0xed, 0xa0, 0x80}, EncodingText, "base64"},
		{all, EncodingHex, "hex"},
		{[]byte("x"), EncodingBase64, "base64"},
	}
	for _, c := range cases {
		got, enc := decodeField(t, bytesLine(c.v, c.e))
		if enc != c.wantEnc || !bytes.Equal(got, c.v) || (c.v == nil) != (got == nil) {
			t.Errorf("%q in %v: got %q (%q), want %q", c.v, c.e, got, enc, c.wantEnc)
		}
	}
	if l := bytesLine([]byte("secret"), EncodingRedacted); !bytes.Contains(l, []byte(`"sha256:`)) || bytes.Contains(l, []byte("secret")) {
		t.Errorf("redacted: %s", l)
	}
}

// FuzzBytes: any bytes, in any encoding, give one valid JSON object whose
// field decodes back to them (redacted aside).
func FuzzBytes(f *testing.F) {
	for _, s := range []string{"", "a", "\xff", "\xed\xa0\x80", "\"\\\n", "日本"} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, v []byte, e uint8) {
		enc := Encoding(e % 3)
		line := bytesLine(v, enc)
		if !json.Valid(line) {
			t.Fatalf("invalid JSON: %q", line)
		}
		got, _ := decodeField(t, line)
		if !bytes.Equal(got, v) {
			t.Fatalf("got %q, want %q", got, v)
		}
		s := String(nil, string(v))
		if !json.Valid(s) || !utf8.Valid(s) {
			t.Fatalf("String: %q", s)
		}
	})
}

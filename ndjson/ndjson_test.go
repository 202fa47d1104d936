package ndjson

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/klog-dev/klog/format"
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

// fixtureFields returns the distinct keys, values, header keys and header
// values of fixture segments (text, binary and null keys, headers).
func fixtureFields(tb testing.TB) [][]byte {
	tb.Helper()
	var out [][]byte
	seen := map[string]bool{}
	add := func(b []byte) {
		if !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, bytes.Clone(b))
		}
	}
	for _, name := range []string{"v2-headers", "v2-keys-values", "v0-keys-values", "v2-transactions"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "segments", "generated", name, "00000000000000000000.log"))
		if err != nil {
			tb.Fatal(err)
		}
		sc := format.NewScanner(bytes.NewReader(data), int64(len(data)), format.ScanOptions{})
		var rr format.RecordReader
		for b, err := range sc.All() {
			if err != nil {
				tb.Fatal(err)
			}
			for r, err := range rr.Records(b) {
				if err != nil {
					tb.Fatal(err)
				}
				add(r.Key)
				add(r.Value)
				for _, h := range r.Headers {
					add(h.Key)
					add(h.Value)
				}
			}
		}
	}
	return out
}

// FuzzBytes: any bytes, in any encoding, give one valid JSON object whose
// field decodes back to them (redacted aside).
func FuzzBytes(f *testing.F) {
	for _, s := range []string{"", "a", "\xff", "\xed\xa0\x80", "\"\\\n", "日本"} {
		f.Add([]byte(s), uint8(0))
	}
	for i, v := range fixtureFields(f) {
		f.Add(v, uint8(i))
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

// naiveString is String one byte at a time, the reference for FuzzString.
func naiveString(s string) string {
	var b []byte
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, `\n`...)
			case c == '\r':
				b = append(b, `\r`...)
			case c == '\t':
				b = append(b, `\t`...)
			case c < 0x20:
				b = append(b, `\u00`...)
				b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(append(b, '"'))
}

// FuzzString: the word-at-a-time escaper writes what the byte-at-a-time
// reference writes, and reports invalid UTF-8 exactly when it is.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "plain ascii text here!", "ab\"cdefgh\\ijklmnop\x00q", "\xff\xfe12345678", "日本語のテキスト\x1f", "01234567\x80"} {
		f.Add(s)
	}
	for _, v := range fixtureFields(f) {
		f.Add(string(v))
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(String(nil, s)), naiveString(s); got != want {
			t.Fatalf("String(%q) = %s, want %s", s, got, want)
		}
		_, ok := appendValidString(nil, []byte(s))
		if ok != utf8.ValidString(s) {
			t.Fatalf("valid %v for %q", ok, s)
		}
	})
}

func TestTyped(t *testing.T) {
	got, err := Typed(nil, "thing", struct {
		A int    `json:"a"`
		B string `json:"b"`
	}{1, "<x>"})
	if err != nil || string(got) != `{"type":"thing","a":1,"b":"<x>"}`+"\n" {
		t.Errorf("Typed = %s, %v", got, err)
	}
	if got, err := Typed(nil, "empty", struct{}{}); err != nil || string(got) != `{"type":"empty"}`+"\n" {
		t.Errorf("empty: %s, %v", got, err)
	}
	if _, err := Typed(nil, "list", []int{1}); !errors.Is(err, ErrNotObject) {
		t.Errorf("a list: %v, want ErrNotObject", err)
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestWriterError: the first write error sticks and Flush reports it.
func TestWriterError(t *testing.T) {
	w := NewWriter(failWriter{}, Options{})
	for range 3 {
		w.Emit(End(Int(Begin(w.Line(), "t"), "n", 1)))
	}
	if err := w.Flush(); err == nil || err.Error() != "disk full" {
		t.Errorf("Flush = %v, want the write error", err)
	}
	if w.Err() == nil {
		t.Errorf("Err is nil after a failed write")
	}
}

package jsoncontract

import "testing"

func TestLine(t *testing.T) {
	cases := []struct {
		line string
		ok   bool
	}{
		{`{"type":"epoch","path":"p","epoch":1,"startOffset":0}`, true},
		{`{"type":"epoch","path":"p","epoch":1}`, false},                           // a required field missing
		{`{"type":"epoch","path":"p","epoch":1,"startOffset":0,"extra":1}`, false}, // a field the schema lacks
		{`{"type":"epoch","path":"p","epoch":"1","startOffset":0}`, false},         // a wrong type
		{`{"type":"nonesuch"}`, false},
		{`{"path":"p"}`, false},
		{`{"type":"epoch","path":"\x00"}`, false}, // not RFC 8259
		{`{"type":"record","offset":0,"timestamp":1,"keySize":1,"valueSize":-1,"key":"/w==","keyEncoding":"base64","value":null}`, true},
		{`{"type":"record","offset":0,"timestamp":1,"keySize":1,"valueSize":-1,"key":"x","keyEncoding":"utf16"}`, false},
	}
	for _, c := range cases {
		if err := Line([]byte(c.line)); (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok %v", c.line, err, c.ok)
		}
	}
}

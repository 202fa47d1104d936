package produce

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/ndjson"
)

func TestFeed(t *testing.T) {
	cases := []struct {
		name    string
		feed    Feed
		in      string
		batches []int // records per batch
		keys    []string
		err     bool
	}{
		{"zero value: a batch per line", Feed{}, "a\nb\n\nc", []int{1, 1, 1, 1}, nil, false},
		{"records bound", Feed{MaxRecords: 3}, "1\n2\n3\n4\n5\n", []int{3, 2}, nil, false},
		{"bytes bound", Feed{MaxRecords: 100, MaxBytes: 4}, "ab\ncd\nef\n", []int{2, 1}, nil, false},
		{"key separator", Feed{KeySeparator: ":", MaxRecords: 10}, "k1:v1\nno key\r\n", []int{2}, []string{"k1", ""}, false},
		{"json", Feed{Format: InputJSON, MaxRecords: 10}, `{"key":"AQI=","keyEncoding":"base64","value":"ff00","valueEncoding":"hex"}` + "\n\n" +
			`{"value":null,"headers":[{"key":"h","value":"x"}]}`, []int{2}, []string{"\x01\x02", ""}, false},
		{"json error after a batch", Feed{Format: InputJSON, MaxRecords: 10}, `{"value":"a"}` + "\n" + `{"nope":1}`, []int{1}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := Open(filepath.Join(t.TempDir(), "t-0"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			var got []int
			err = c.feed.Run(context.Background(), a, strings.NewReader(c.in), func(r Result) {
				got = append(got, int(r.LastOffset-r.BaseOffset+1))
			})
			var ie *InputError
			if c.err != errors.As(err, &ie) || (!c.err && err != nil) {
				t.Fatalf("err %v, want input error %v", err, c.err)
			}
			if c.err && ie.Line != 2 {
				t.Errorf("error on line %d, want 2", ie.Line)
			}
			if len(got) != len(c.batches) {
				t.Fatalf("batches %v, want %v", got, c.batches)
			}
			for i := range got {
				if got[i] != c.batches[i] {
					t.Errorf("batches %v, want %v", got, c.batches)
				}
			}
			if c.keys == nil {
				return
			}
			a.Close()
			recs := readBack(t, a.dir)
			for i, k := range c.keys {
				if !bytes.Equal(recs[i].Key, []byte(k)) && !(k == "" && recs[i].Key == nil) {
					t.Errorf("record %d key %q, want %q", i, recs[i].Key, k)
				}
			}
		})
	}
}

// readBack reads every record of a partition's first segment.
func readBack(t testing.TB, dir string) []format.Record {
	t.Helper()
	var out []format.Record
	sc := openScanner(t, filepath.Join(dir, "00000000000000000000.log"))
	var rr format.RecordReader
	for b, err := range sc.All() {
		if err != nil {
			t.Fatal(err)
		}
		for r, err := range rr.Records(b) {
			if err != nil {
				t.Fatal(err)
			}
			c := *r
			c.Key, c.Value = bytes.Clone(r.Key), bytes.Clone(r.Value) // nil (null) stays nil, empty stays empty
			out = append(out, c)
		}
	}
	return out
}

func openScanner(t testing.TB, path string) *format.Scanner {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return format.NewScanner(f, st.Size(), format.ScanOptions{})
}

// inputFields keeps the fields of a record object that produce's input
// takes.
func inputFields(obj []byte) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(obj, &m); err != nil {
		return nil, err
	}
	for _, k := range []string{"type", "offset", "timestamp", "keySize", "valueSize", "sequence", "crc", "isValid"} {
		delete(m, k)
	}
	return json.Marshal(m)
}

// FuzzParseJSONRecord: no input makes the JSON input reader panic, and a
// record it reads, written back as klog's record object, reads back the
// same: produce's input and every command's output share one convention.
func FuzzParseJSONRecord(f *testing.F) {
	f.Add([]byte(`{"key":"k","value":"AAEC/w==","valueEncoding":"base64","headers":[{"key":"h","value":"v"}]}`))
	f.Add([]byte(`{"key":null,"value":"ff","valueEncoding":"hex","timestamp":5}`))
	f.Add([]byte(`{"value":"\u0000\ud800"}`))
	// The records of fixtures with keys, null keys and headers, as the
	// record objects klog prints (hex keys and values: any bytes).
	for _, name := range []string{"v2-headers", "v2-keys-values", "v0-keys-values"} {
		for _, r := range readBack(f, filepath.Join("..", "testdata", "segments", "generated", name)) {
			out, err := ndjson.RecordFields(ndjson.Begin(nil, "record"), &format.Batch{Magic: format.MagicV2}, &r,
				&ndjson.Options{Data: true, KeyEncoding: ndjson.EncodingHex, ValueEncoding: ndjson.EncodingHex})
			if err != nil {
				f.Fatal(err)
			}
			line, err := inputFields(ndjson.End(out))
			if err == nil {
				_, err = ParseJSONRecord(line)
			}
			if err != nil {
				f.Fatalf("%s: %v", line, err)
			}
			f.Add(line)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := ParseJSONRecord(line)
		if err != nil {
			return
		}
		for _, enc := range []ndjson.Encoding{ndjson.EncodingText, ndjson.EncodingHex, ndjson.EncodingBase64} {
			r := rec
			r.KeySize, r.ValueSize, r.Sequence = -1, -1, -1
			out, err := ndjson.RecordFields(ndjson.Begin(nil, "record"), &format.Batch{Magic: format.MagicV2}, &r,
				&ndjson.Options{Data: true, KeyEncoding: enc, ValueEncoding: enc})
			if err != nil {
				t.Fatal(err)
			}
			back, err := inputFields(ndjson.End(out))
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			got, err := ParseJSONRecord(back)
			if err != nil {
				t.Fatalf("%s: %v", back, err)
			}
			if !bytes.Equal(got.Key, rec.Key) || (got.Key == nil) != (rec.Key == nil) ||
				!bytes.Equal(got.Value, rec.Value) || (got.Value == nil) != (rec.Value == nil) || len(got.Headers) != len(rec.Headers) {
				t.Fatalf("%s read back as %+v, want %+v", back, got, rec)
			}
			for i := range got.Headers {
				if !bytes.Equal(got.Headers[i].Key, rec.Headers[i].Key) || !bytes.Equal(got.Headers[i].Value, rec.Headers[i].Value) {
					t.Fatalf("header %d: %+v, want %+v", i, got.Headers[i], rec.Headers[i])
				}
			}
		}
	})
}

// chunkReader returns r's bytes in reads of pseudo-random sizes from 1 to
// max, as a pipe does.
type chunkReader struct {
	r   *strings.Reader
	max int
	x   uint32
}

// Ready says a read never waits (as for a pipe whose writer keeps up): the
// batches are cut by their bounds alone.
func (c *chunkReader) Ready() bool { return true }

func (c *chunkReader) Read(p []byte) (int, error) {
	c.x = c.x*1664525 + 1013904223
	n := 1 + int(c.x>>8)%c.max
	return c.r.Read(p[:min(n, len(p))])
}

// TestFeedAcrossBuffers: lines handed out from the input buffer stay right
// when the buffer moves and grows under a batch still being filled: over
// 3 MiB of lines of every length (empty ones, keys, CRLF, one line longer
// than the buffer, no newline at the end) read in pipe-sized pieces, every
// record and every batch boundary is the one the lines say.
func TestFeedAcrossBuffers(t *testing.T) {
	var in strings.Builder
	x := uint32(7)
	for in.Len() < 3<<20 {
		x = x*1664525 + 1013904223
		n := int(x>>8) % 3000
		switch x % 7 {
		case 0:
			in.WriteString("key" + strings.Repeat("k", n%50) + ":")
		case 1:
			n = 0
		}
		in.WriteString(strings.Repeat(string(rune('a'+x%26)), n))
		if x%5 == 0 {
			in.WriteString("\r")
		}
		in.WriteString("\n")
		if in.Len() > 1<<20 && in.Len() < 1<<20+4000 {
			in.WriteString(strings.Repeat("L", lineBuffer+lineBuffer/2) + "\n")
		}
	}
	in.WriteString("last:no newline")
	type rec struct {
		key, value string
		keyNil     bool
	}
	var want []rec
	var wantBatches []int
	count, pending := 0, 0
	for _, line := range strings.Split(in.String(), "\n") {
		line = strings.TrimSuffix(line, "\r")
		r := rec{value: line, keyNil: true}
		if i := strings.Index(line, ":"); i >= 0 {
			r = rec{key: line[:i], value: line[i+1:]}
		}
		want = append(want, r)
		count++
		pending += len(r.key) + len(r.value)
		if count >= 7 || pending >= 20000 {
			wantBatches = append(wantBatches, count)
			count, pending = 0, 0
		}
	}
	if count > 0 {
		wantBatches = append(wantBatches, count)
	}

	a, err := Open(filepath.Join(t.TempDir(), "t-0"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	feed := Feed{KeySeparator: ":", MaxRecords: 7, MaxBytes: 20000}
	var batches []int
	err = feed.Run(context.Background(), a, &chunkReader{r: strings.NewReader(in.String()), max: 70000}, func(r Result) {
		batches = append(batches, int(r.LastOffset-r.BaseOffset+1))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if len(batches) != len(wantBatches) {
		t.Fatalf("%d batches, want %d", len(batches), len(wantBatches))
	}
	for i := range batches {
		if batches[i] != wantBatches[i] {
			t.Fatalf("batch %d has %d records, want %d", i, batches[i], wantBatches[i])
		}
	}
	recs := readBack(t, a.dir)
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i, r := range recs {
		w := want[i]
		if string(r.Key) != w.key || (r.Key == nil) != w.keyNil || string(r.Value) != w.value || r.Value == nil {
			t.Fatalf("record %d: key %.20q (nil %v) value %d bytes %.20q (nil %v), want key %.20q (nil %v) value %d bytes %.20q",
				i, r.Key, r.Key == nil, len(r.Value), r.Value, r.Value == nil, w.key, w.keyNil, len(w.value), w.value)
		}
	}
}

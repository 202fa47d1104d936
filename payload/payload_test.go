package payload

import (
	"fmt"
	"strings"
	"testing"

	"github.com/klog-dev/klog/filter"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/recordfmt"
	"github.com/klog-dev/klog/schema"
)

func TestView(t *testing.T) {
	where, err := filter.Parse(`offset % 2 == 0 && value.n > 1`)
	if err != nil {
		t.Fatal(err)
	}
	kcat, err := recordfmt.ParseKcat(`%o:%s\n`)
	if err != nil {
		t.Fatal(err)
	}
	data := &format.Batch{Magic: format.MagicV2}
	control := &format.Batch{Magic: format.MagicV2, Attributes: 0x20}
	recs := []format.Record{
		{Offset: 0, Value: []byte(`{"n":1}`)},
		{Offset: 1, Value: []byte(`{"n":2}`)},
		{Offset: 2, Value: []byte(`{"n":3}`)},
		{Offset: 3, Value: []byte(`{"n":4}`)},
		{Offset: 4, Value: []byte(`{"n":5}`)},
		{Offset: 5, Value: []byte(`not json`)},
	}
	cases := []struct {
		name  string
		view  *View
		batch *format.Batch
		want  string // the offsets taken, and their formatted lines
		full  bool
	}{
		{"nil keeps all", nil, data, "0 1 2 3 4 5 ", false},
		{"limit", &View{Limit: 2}, data, "0 1 ", true},
		{"where on decoded", &View{Decoder: schema.NewDecoder(nil), ValueFormat: schema.FormatJSON, Where: where}, data, "2 4 ", false},
		{"format", &View{Format: kcat, Limit: 3}, data, `0 0:{"n":1}` + "\n" + `1 1:{"n":2}` + "\n" + `2 2:{"n":3}` + "\n", true},
		{"format drops control records", &View{Format: kcat}, control, "", false},
		{"control records kept without format", &View{Limit: 1}, control, "0 ", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []byte
			for i := range recs {
				if !c.view.Take("t", 0, c.batch, &recs[i]) {
					continue
				}
				got = append(got, []byte(string(rune('0'+recs[i].Offset))+" ")...)
				if c.view != nil && c.view.Format != nil {
					got = c.view.AppendFormat(got)
				}
			}
			if string(got) != c.want || c.view.Full() != c.full {
				t.Errorf("took %q (full %v), want %q (full %v)", got, c.view.Full(), c.want, c.full)
			}
		})
	}
}

// TestViewDecodeFailure: a value that does not decode as its format asks
// is kept, with its error, and DecodeFailed says so.
func TestViewDecodeFailure(t *testing.T) {
	v := &View{Decoder: schema.NewDecoder(nil), ValueFormat: schema.FormatAvro}
	r := format.Record{Offset: 7, Value: []byte("plain")}
	if !v.Take("t", 0, &format.Batch{}, &r) || !v.DecodeFailed() || v.Current().Value.Err == nil {
		t.Fatalf("took a value that does not decode: %+v", v.Current().Value)
	}
	if got := string(AppendNote(nil, v.Current().Value)); got == "" {
		t.Error("no note")
	}
}

// TestAppendNote: the text's note after a key or value: why it did not
// decode, or why auto left it as bytes; nothing for one that decoded, for
// bytes asked as bytes, or for null.
func TestAppendNote(t *testing.T) {
	dec := schema.NewDecoder(nil)
	cases := []struct {
		v    schema.Value
		want string
	}{
		{dec.Decode([]byte("plain"), schema.FormatAvro), " (not decoded: "},
		{dec.Decode([]byte("plain"), schema.FormatAuto), " (left as bytes: not in Confluent's framing and not JSON)"},
		{dec.Decode([]byte(`{"a":1}`), schema.FormatAuto), ""},
		{dec.Decode(nil, schema.FormatAuto), ""},
		{schema.Value{}, ""},
	}
	for _, c := range cases {
		got := string(AppendNote([]byte("x"), c.v))
		if !strings.HasPrefix(got, "x"+c.want) || c.want == "" && got != "x" || !strings.HasSuffix(got, ")") && got != "x" {
			t.Errorf("%+v: %q, want x%q", c.v, got, c.want)
		}
	}
}

// TestViewDecodeFailures: OnDecodeFailure hears of each record Take keeps
// whose key or value does not decode (the key first), and DecodeFailures
// counts them; records left out by Where or the Limit, null values and
// control records are not failures.
func TestViewDecodeFailures(t *testing.T) {
	where, err := filter.Parse(`offset != 3`)
	if err != nil {
		t.Fatal(err)
	}
	recs := []format.Record{
		{Offset: 0, Key: []byte(`"k"`), Value: []byte(`{"n":1}`)},
		{Offset: 1, Key: []byte(`"k"`), Value: []byte(`not json`)},
		{Offset: 2, Key: []byte(`{`), Value: []byte(`not json`)},
		{Offset: 3, Key: []byte(`"k"`), Value: []byte(`not json`)},
		{Offset: 4, Key: []byte(`"k"`)},
		{Offset: 5, Key: []byte(`"k"`), Value: []byte(`not json`)},
	}
	var heard []string
	v := &View{Decoder: schema.NewDecoder(nil), KeyFormat: schema.FormatJSON, ValueFormat: schema.FormatJSON, Where: where, Limit: 5,
		OnDecodeFailure: func(r *Rec, field string, err error) {
			heard = append(heard, fmt.Sprintf("%s-%d@%d %s", r.Topic, r.Partition, r.Record.Offset, field))
		}}
	for i := range recs {
		v.Take("t", 1, &format.Batch{Magic: format.MagicV2}, &recs[i])
	}
	control := format.Record{Offset: 6, Value: []byte{0, 0, 0, 0}}
	v.Take("t", 1, &format.Batch{Magic: format.MagicV2, Attributes: 0x20}, &control)
	if got := strings.Join(heard, ","); got != "t-1@1 value,t-1@2 key,t-1@5 value" || v.DecodeFailures() != 3 {
		t.Errorf("heard %q, counted %d", got, v.DecodeFailures())
	}
	if (*View)(nil).DecodeFailures() != 0 {
		t.Error("a nil View counts failures")
	}
}

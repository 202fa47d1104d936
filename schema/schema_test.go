package schema

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestParseFrame(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   []byte
		id   int32
		err  bool
	}{
		{"id", []byte{0, 0, 0, 1, 2, 'x'}, 258, false},
		{"max id", []byte{0, 0x7f, 0xff, 0xff, 0xff}, 1<<31 - 1, false},
		{"short", []byte{0, 0, 0}, 0, true},
		{"empty", nil, 0, true},
		{"other magic", []byte{7, 0, 0, 0, 1}, 0, true},
		{"guid short", []byte{1, 2, 3}, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := ParseFrame(c.in)
			if (err != nil) != c.err || (err == nil && f.ID != c.id) {
				t.Fatalf("ParseFrame(%x) = %+v, %v", c.in, f, err)
			}
			if err != nil && !errors.Is(err, ErrNotFramed) {
				t.Fatalf("error %v is not ErrNotFramed", err)
			}
		})
	}
}

func TestMessageIndexes(t *testing.T) {
	t.Parallel()
	for _, path := range [][]int{{0}, {1}, {0, 0}, {3, 1, 4}, {70000}} {
		b := AppendIndexes(nil, path)
		got, n, err := ParseIndexes(append(b, 0xee))
		if err != nil || n != len(b) || len(got) != len(path) {
			t.Fatalf("%v: %v %d %v", path, got, n, err)
		}
		for i := range path {
			if got[i] != path[i] {
				t.Fatalf("%v: got %v", path, got)
			}
		}
	}
	if b := AppendIndexes(nil, []int{0}); len(b) != 1 || b[0] != 0 {
		t.Fatalf("[0] is %x, want the short form 00", b)
	}
	for _, bad := range [][]byte{nil, {0x80}, {0x01}, {0x7f}, {0x04, 0x01}, {0x02, 0x01}} {
		if _, _, err := ParseIndexes(bad); err == nil {
			t.Errorf("ParseIndexes(%x) accepted", bad)
		}
	}
}

func schemaKey(subject string, version int) []byte {
	return []byte(`{"keytype":"SCHEMA","subject":"` + subject + `","version":` + itoa(version) + `,"magic":1}`)
}

func itoa(n int) string { return strconv.Itoa(n) }

func schemaValue(subject string, version, id int, text string, deleted bool) []byte {
	d := "false"
	if deleted {
		d = "true"
	}
	return []byte(`{"subject":"` + subject + `","version":` + itoa(version) + `,"id":` + itoa(id) +
		`,"schema":` + quote(text) + `,"deleted":` + d + `}`)
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// TestStoreDeletes follows KafkaStoreMessageHandler: a soft delete keeps
// the id; a tombstone removes the version and the id with its last
// version; DELETE_SUBJECT soft-deletes up to its version; CLEAR_SUBJECT
// removes soft-deleted versions; the latest skips soft-deleted ones.
func TestStoreDeletes(t *testing.T) {
	t.Parallel()
	var s Store
	apply := func(k, v []byte) {
		t.Helper()
		if err := s.Apply(k, v); err != nil {
			t.Fatal(err)
		}
	}
	apply(schemaKey("a", 1), schemaValue("a", 1, 1, `"string"`, false))
	apply(schemaKey("a", 2), schemaValue("a", 2, 2, `"long"`, false))
	apply(schemaKey("b", 1), schemaValue("b", 1, 2, `"long"`, false)) // the same schema, id 2, under b
	apply([]byte(`{"keytype":"CONFIG","magic":0}`), []byte(`{"compatibilityLevel":"NONE"}`))
	apply([]byte(`{"keytype":"NOOP","magic":0}`), nil)

	if sc, err := s.ByVersion("a", -1); err != nil || sc.Version != 2 {
		t.Fatalf("latest of a: %+v %v", sc, err)
	}
	apply(schemaKey("a", 2), schemaValue("a", 2, 2, `"long"`, true)) // soft delete
	if sc, err := s.ByVersion("a", -1); err != nil || sc.Version != 1 {
		t.Fatalf("latest of a after a soft delete: %+v %v", sc, err)
	}
	if _, err := s.ByID(2); err != nil {
		t.Fatalf("a soft-deleted id must stay: %v", err)
	}
	apply(schemaKey("a", 2), nil) // hard delete
	if _, err := s.ByID(2); err != nil {
		t.Fatalf("id 2 is still b's: %v", err)
	}
	apply(schemaKey("b", 1), nil)
	if _, err := s.ByID(2); !errors.Is(err, ErrUnknownSchema) {
		t.Fatalf("id 2 with no version left: %v", err)
	}
	apply([]byte(`{"keytype":"DELETE_SUBJECT","subject":"a","magic":0}`), []byte(`{"subject":"a","version":1}`))
	if sc, err := s.ByID(1); err != nil || !sc.Deleted {
		t.Fatalf("after DELETE_SUBJECT: %+v %v", sc, err)
	}
	if _, err := s.ByVersion("a", -1); !errors.Is(err, ErrUnknownSchema) {
		t.Fatalf("a has no live version: %v", err)
	}
	apply([]byte(`{"keytype":"CLEAR_SUBJECT","subject":"a","magic":0}`), []byte(`{"subject":"a"}`))
	if _, err := s.ByID(1); !errors.Is(err, ErrUnknownSchema) {
		t.Fatalf("after CLEAR_SUBJECT: %v", err)
	}
	if s.Records != 10 || s.Other != 2 {
		t.Fatalf("counted %d records, %d other", s.Records, s.Other)
	}
}

func TestStoreRefusals(t *testing.T) {
	t.Parallel()
	var s Store
	if err := s.Apply(schemaKey("a", 1), schemaValue("a", 1, 1, `"string"`, false)); err != nil {
		t.Fatal(err)
	}
	for name, kv := range map[string][2][]byte{
		"not json":     {[]byte(`{`), nil},
		"unknown key":  {[]byte(`{"keytype":"WHAT"}`), nil},
		"no id":        {schemaKey("c", 1), []byte(`{"subject":"c","version":1,"schema":"\"int\""}`)},
		"bad type":     {schemaKey("c", 1), []byte(`{"subject":"c","version":1,"id":5,"schemaType":"XML","schema":"x"}`)},
		"duplicate id": {schemaKey("c", 1), schemaValue("c", 1, 1, `"int"`, false)},
		"value garble": {schemaKey("c", 1), []byte(`[1,2`)},
	} {
		if err := s.Apply(kv[0], kv[1]); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if sc, err := s.ByID(1); err != nil || sc.Text != `"string"` {
		t.Fatalf("a refused record changed the store: %+v %v", sc, err)
	}
}

func TestReadTopicFixture(t *testing.T) {
	t.Parallel()
	st, findings, err := ReadTopic(filepath.Join(fixtures, "_schemas-0"))
	if err != nil || len(findings) != 0 {
		t.Fatal(err, findings)
	}
	legacy, err := st.ByVersion("legacy-value", 1)
	if err != nil || !legacy.Deleted {
		t.Fatalf("legacy-value is soft-deleted: %+v %v", legacy, err)
	}
	if _, err := st.ByVersion("gone-value", 1); !errors.Is(err, ErrUnknownSchema) {
		t.Fatalf("gone-value is hard-deleted: %v", err)
	}
	if sc, err := st.ByVersion("orders-value", -1); err != nil || sc.Version != 2 || len(sc.References) != 1 {
		t.Fatalf("orders-value latest: %+v %v", sc, err)
	}
	if sc, err := st.ByVersion("common-address", 1); err != nil || sc.Type != Avro {
		t.Fatalf("a record without schemaType is Avro: %+v %v", sc, err)
	}
	if FindTopic(filepath.Join(fixtures, "orders-0")) == "" || FindTopic(fixtures) == "" {
		t.Fatal("FindTopic does not find the fixture's _schemas-0")
	}
}

// TestDecodeFailures: a record that does not decode says why in Err (and
// auto says why it left bytes alone in Note); nothing panics.
func TestDecodeFailures(t *testing.T) {
	t.Parallel()
	dec := fixtureDecoder(t)
	orders := readFixture(t, "orders")
	users := readFixture(t, "users")
	cases := []struct {
		name   string
		b      []byte
		f      Format
		errHas string
		note   bool
	}{
		{"cut short", orders[4].Value, FormatAvro, "avro", false},
		{"unknown id", orders[5].Value, FormatAvro, "id 999", false},
		{"unknown id, auto", orders[5].Value, FormatAuto, "", true},
		{"wrong type", orders[0].Value, FormatProtobuf, "not protobuf", false},
		{"not framed", []byte("plain"), FormatAvro, "not in Confluent's wire format", false},
		{"not json", []byte("{"), FormatJSON, "json", false},
		{"bytes, auto", []byte{0xff, 0xfe}, FormatAuto, "", true},
		{"invalid json schema value", users[2].Value, FormatJSONSchema, "does not validate", false},
	}
	for _, c := range cases {
		v := dec.Decode(c.b, c.f)
		if c.errHas != "" && (v.Err == nil || !strings.Contains(v.Err.Error(), c.errHas)) {
			t.Errorf("%s: err %v, want one with %q", c.name, v.Err, c.errHas)
		}
		if c.note != (v.Note != "") || (c.note && v.Err != nil) {
			t.Errorf("%s: note %q err %v", c.name, v.Note, v.Err)
		}
	}
	if v := dec.Decode(users[2].Value, FormatJSONSchema); v.JSON == nil {
		t.Error("a JSON Schema value that fails validation is still shown")
	} else if strings.Contains(v.Err.Error(), "\n") || !strings.Contains(v.Err.Error(), "minimum") {
		// A note or a finding is one line, and says which keyword failed.
		t.Errorf("validation error %q: want one line naming the keyword", v.Err)
	}
	if v := dec.Decode([]byte(`{"a":1}`), FormatAuto); v.Format != FormatJSON {
		t.Errorf("plain JSON with auto: %v", v.Format)
	}
}

func TestLoadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("common/money.proto", "syntax = \"proto3\";\npackage m;\nmessage Money { int64 units = 1; }\n")
	write("7-pay.proto", "syntax = \"proto3\";\npackage p;\nimport \"common/money.proto\";\nmessage Pay { m.Money amount = 1; string id = 2; }\n")
	write("8.avsc", `{"type":"record","name":"R","namespace":"n","fields":[{"name":"a","type":"A"}]}`)
	write("a.avsc", `{"type":"record","name":"A","namespace":"n","fields":[{"name":"x","type":"int"}]}`)
	write("export.json", `[{"subject":"s","version":3,"id":9,"schemaType":"JSON","schema":"{\"type\":\"object\"}"}]`)
	f, err := LoadFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	dec := NewDecoder(f)
	// Pay{amount: {units: 5}, id: "x"}: field 1 (message, 2 bytes: 08 05), field 2 "x".
	pay := append(AppendIndexes(AppendFrame(nil, 7), []int{0}), 0x0a, 0x02, 0x08, 0x05, 0x12, 0x01, 'x')
	if v := dec.Decode(pay, FormatAuto); v.Err != nil || string(v.JSON) != `{"amount":{"units":"5"},"id":"x"}` || v.Message != "p.Pay" {
		t.Errorf("proto with an import: %s %v %s", v.JSON, v.Err, v.Message)
	}
	if v := dec.Decode(append(AppendFrame(nil, 8), 0x06), FormatAuto); v.Err != nil || string(v.JSON) != `{"a":{"x":3}}` {
		t.Errorf("avro with a named type of another file: %s %v", v.JSON, v.Err)
	}
	if v := dec.Decode(append(AppendFrame(nil, 9), `{"k":1}`...), FormatJSONSchema); v.Err != nil || v.Schema.Subject != "s" {
		t.Errorf("REST form: %+v", v)
	}
	if _, err := LoadFiles(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing path loaded")
	}
}

// TestRegistry serves the REST API from an httptest server: ids and
// subject versions are asked once, basic auth is sent, 404 is an unknown
// schema and other statuses are errors.
func TestRegistry(t *testing.T) {
	t.Parallel()
	asked := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked[r.URL.Path]++
		if u, p, ok := r.BasicAuth(); !ok || u != "me" || p != "pw" {
			http.Error(w, `{"error_code":401}`, http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/schemas/ids/3":
			w.Write([]byte(`{"schema":"{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"A\"}]}","references":[{"name":"A","subject":"a","version":1}]}`))
		case "/subjects/a/versions/1":
			w.Write([]byte(`{"subject":"a","version":1,"id":2,"schema":"{\"type\":\"fixed\",\"name\":\"A\",\"size\":1}"}`))
		case "/schemas/ids/5":
			http.Error(w, "boom", http.StatusInternalServerError)
		default:
			http.Error(w, `{"error_code":40403}`, http.StatusNotFound)
		}
	}))
	defer srv.Close()
	reg, err := NewRegistry(strings.Replace(srv.URL, "http://", "http://me:pw@", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	dec := NewDecoder(reg)
	for i := 0; i < 2; i++ {
		if v := dec.Decode(append(AppendFrame(nil, 3), 'z'), FormatAvro); v.Err != nil || string(v.JSON) != `{"a":"z"}` {
			t.Fatalf("decode through the registry: %s %v", v.JSON, v.Err)
		}
	}
	if asked["/schemas/ids/3"] != 1 || asked["/subjects/a/versions/1"] != 1 {
		t.Errorf("asked %v; each once", asked)
	}
	if _, err := reg.ByID(4); !errors.Is(err, ErrUnknownSchema) {
		t.Errorf("404: %v", err)
	}
	if _, err := reg.ByID(5); err == nil || errors.Is(err, ErrUnknownSchema) {
		t.Errorf("500: %v", err)
	}
	if _, err := NewRegistry("ftp://x", nil); err == nil {
		t.Error("ftp accepted")
	}
}

// FuzzDecode: no input panics or allocates past its bounds, in any format,
// with the fixture's schemas.
func FuzzDecode(f *testing.F) {
	for _, topic := range []string{"orders", "payments", "users", "legacy"} {
		for _, r := range readFixture(f, topic) {
			if r.Value != nil {
				f.Add(r.Value)
			}
		}
	}
	f.Add([]byte{0, 0, 0, 0, 5, 0x7f, 0xff})
	dec := fixtureDecoder(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, fm := range []Format{FormatAuto, FormatAvro, FormatProtobuf, FormatJSONSchema, FormatJSON} {
			dec.Decode(b, fm)
		}
		ParseIndexes(b)
	})
}

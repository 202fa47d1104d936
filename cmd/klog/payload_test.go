package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klog-dev/klog/internal/jsoncontract"
	"github.com/klog-dev/klog/offsetstore"
	"github.com/klog-dev/klog/produce"
)

// confluentDir is a partition of the records confluent-kafka-go's
// serializers wrote (schema/testdata/confluent, PROVENANCE.md there), with
// the _schemas partition beside it.
func confluentDir(t *testing.T, name string) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("../../schema/testdata/confluent", name))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// decodedRecords reads the record objects of JSON output (fetch's nested
// in its "fetch" object) as offset -> the decoded fields, schema-checked.
func decodedRecords(t *testing.T, out string) map[int64]string {
	t.Helper()
	objs, err := jsoncontract.Lines(out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]string{}
	var add func(o map[string]any)
	add = func(o map[string]any) {
		switch o["type"] {
		case "record":
			var parts []string
			for _, f := range []string{"keyFormat", "decodedKey", "keyError", "keyNote", "valueFormat", "decodedValue", "valueError", "valueNote"} {
				if v, ok := o[f]; ok {
					b, _ := json.Marshal(v)
					parts = append(parts, f+"="+string(b))
				}
			}
			off, _ := o["offset"].(json.Number).Int64()
			got[off] = strings.Join(parts, " ")
		case "fetch":
			for _, r := range o["response"].(map[string]any)["records"].([]any) {
				add(r.(map[string]any))
			}
		}
	}
	for _, o := range objs {
		add(o)
	}
	return got
}

// TestPayloadFlagsInEveryCommand: dump (text and JSON), fetch (the
// response, --consumer), tail and find decode the same records to the same
// values with the schemas of the log dir's _schemas partition, keep the same
// records for a --where, print the same format string and stop after -c;
// find's decoding is the one checked against confluent-kafka-go's own
// deserializers (internal/interop).
func TestPayloadFlagsInEveryCommand(t *testing.T) {
	t.Parallel()
	dir := confluentDir(t, "orders-0")
	seg := filepath.Join(dir, "00000000000000000000.log")
	dec := []string{"--key-format", "auto", "--value-format", "auto"}
	commands := map[string][]string{
		"dump":           {"dump", seg},
		"fetch":          {"fetch", dir},
		"fetch consumer": {"fetch", dir, "--consumer"},
		"tail":           {"tail", dir, "--from", "earliest", "--timeout", "30s"},
		"find":           {"find", dir},
		"find --offset":  {"find", dir, "--offset", "0"},
	}
	run := func(t *testing.T, name string, extra ...string) (int, string, string) {
		args := append(slices.Clone(commands[name]), extra...)
		if name == "find" && !slices.Contains(extra, "--where") {
			args = append(args, "--where", "true")
		}
		return klog(t, args...)
	}
	// Offset 4 (cut short) does not decode: a finding in every command,
	// the record printed with its bytes (auto leaves offset 5, framed
	// with the unknown id 999, as bytes with a note).
	code, out, errs := run(t, "find", append(dec, "--json")...)
	if code != ExitFindings {
		t.Fatalf("find: exit %d: %s", code, errs)
	}
	want := decodedRecords(t, out)
	if len(want) < 5 || !strings.Contains(want[0], `"customer":"customer 1"`) || !strings.Contains(want[4], "valueError=") {
		t.Fatalf("find decoded %v", want)
	}
	for name := range commands {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// tail ends after -c records: all of them.
			code, out, errs := run(t, name, append(dec, "--json", "-c", fmt.Sprint(len(want)))...)
			if code != ExitFindings {
				t.Fatalf("exit %d: %s", code, errs)
			}
			// dump says them in its output (a problem object); the
			// others on stderr, one line a record.
			if name != "dump" && (strings.Count(errs, ": record-decode: value does not decode: ") != 1 || !strings.Contains(errs, "offset 4: ")) {
				t.Errorf("stderr does not say offset 4 does not decode:\n%s", errs)
			}
			if got := decodedRecords(t, out); !mapsEqual(got, want) {
				t.Errorf("decoded\n%v\nwant (find's)\n%v", got, want)
			}
			// The same records for a --where on a decoded field.
			code, out, errs = run(t, name, append(dec, "--json", "--where", `has(value.id) && value.id in [2, 3]`, "-c", "2")...)
			// Records --where leaves out are not findings.
			if code != ExitOK {
				t.Fatalf("where: exit %d: %s", code, errs)
			}
			if got := decodedRecords(t, out); len(got) != 2 || got[1] != want[1] || got[2] != want[2] {
				t.Errorf("where kept %v", got)
			}
			// kcat's -f, rpk's --format and -c: the same lines everywhere.
			for _, f := range [][]string{{"-f", `%t/%p@%o %k %S %h\n`}, {"--format", `%t/%p@%o %k %V %h{%k=%v}\n`}} {
				code, out, errs = run(t, name, f[0], f[1], "-c", "3")
				if code != ExitOK {
					t.Fatalf("%s: exit %d: %s", f[0], code, errs)
				}
				wantOut := "orders/0@0 " + "\x00\x00\x00\x00\x02\x0eorder-1 137 what=avro, orders-value v1, key orders-key\n" +
					"orders/0@1 \x00\x00\x00\x00\x02\x0eorder-2 121 what=avro, orders-value v1, key orders-key\n" +
					"orders/0@2 \x00\x00\x00\x00\x02\x0eorder-3 137 what=avro, orders-value v1, key orders-key\n"
				if out != wantOut {
					t.Errorf("%s: got\n%q\nwant\n%q", f[0], out, wantOut)
				}
			}
		})
	}
}

func mapsEqual(a, b map[int64]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestKcatOffsets: kcat's s@T and e@T, rpk's @T and kcat's stored (the
// group's commit, read from the log dir's __consumer_offsets) wherever an
// offset is taken.
func TestKcatOffsets(t *testing.T) {
	t.Parallel()
	dir := copyDir(t, confluentDir(t, "orders-0"))
	st := offsetstore.Open(filepath.Dir(dir), produce.Options{})
	if err := st.CommitOffset("g", "orders", 0, 3); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(dir, "00000000000000000000.log")
	f := []string{"-f", `%o\n`}
	cases := []struct {
		name string
		args []string
		code int
		out  string // stdout; for exit 2, what stderr holds
	}{
		{"fetch s@", []string{"fetch", dir, "--consumer", "-o", "s@1700000002000", "-c", "2"}, ExitOK, "2\n3\n"},
		{"fetch rpk @", []string{"fetch", dir, "-o", "@2023-11-14T22:13:22Z", "-c", "1"}, ExitOK, "2\n"},
		{"fetch after the last time", []string{"fetch", dir, "--consumer", "-o", "s@1900000000000"}, ExitOK, ""},
		{"fetch stored", []string{"fetch", dir, "--consumer", "-o", "stored", "-G", "g", "-c", "1"}, ExitOK, "3\n"},
		{"fetch stored without group", []string{"fetch", dir, "-o", "stored"}, ExitTrouble, "give --group G"},
		{"fetch stored unknown group", []string{"fetch", dir, "--consumer", "-o", "stored", "-G", "nobody"}, ExitTrouble, `group "nobody" has no committed offset for orders-0`},
		{"fetch e@", []string{"fetch", dir, "-o", "e@1700000002000"}, ExitTrouble, "e@T ends a range"},
		{"dump s@ e@", []string{"dump", seg, "--from-offset", "s@1700000002000", "--to-offset", "e@1700000004000"}, ExitOK, "2\n3\n"},
		{"dump stored", []string{"dump", seg, "--from-offset", "stored", "--group", "g", "-c", "2"}, ExitOK, "3\n4\n"},
		{"dump undecodable is a finding", []string{"dump", filepath.Join(confluentDir(t, "orders-0"), "00000000000000000000.log"), "--value-format", "auto", "--from-offset", "4", "-c", "1"}, ExitFindings, "4\n"},
		{"dump -c", []string{"dump", seg, "-c", "1"}, ExitOK, "0\n"},
		{"tail s@", []string{"tail", dir, "-o", "s@1700000006000", "-c", "2", "--timeout", "30s"}, ExitOK, "6\n7\n"},
		{"tail stored", []string{"tail", dir, "--from", "stored", "-G", "g", "-c", "1", "--timeout", "30s"}, ExitOK, "3\n"},
		{"tail s@ of a log dir", []string{"tail", filepath.Dir(dir), "-o", "s@0"}, ExitTrouble, "one partition directory"},
		{"misspelt word", []string{"fetch", dir, "-o", "stord"}, ExitTrouble, "did you mean stored?"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := klog(t, append(c.args, f...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, errs)
			}
			if c.code == ExitTrouble {
				if !strings.Contains(errs, c.out) {
					t.Errorf("stderr %q does not say %q", errs, c.out)
				}
				return
			}
			if out != c.out {
				t.Errorf("got %q, want %q", out, c.out)
			}
		})
	}
}

// TestKcatAddressing: -t TOPIC -p N inside a log dir (or the current
// directory) and TOPIC/N name the partition directory LOGDIR/TOPIC-N for
// every command that takes one; -t alone names every partition of TOPIC.
func TestKcatAddressing(t *testing.T) {
	t.Parallel()
	logDir := confluentDir(t, ".")
	f := []string{"-f", `%t/%p@%o\n`, "-c", "1"}
	cases := []struct {
		name string
		args []string
		code int
		out  string // stdout's first line, or what stderr says
	}{
		{"fetch -t -p", append([]string{"fetch", logDir, "-t", "orders", "-p", "0"}, f...), ExitOK, "orders/0@0"},
		{"fetch --topic= --partition=", append([]string{"fetch", "--topic=users", logDir, "--partition=0"}, f...), ExitOK, "users/0@0"},
		{"dump -t -p", append([]string{"dump", "-t", "orders", "-p", "0", logDir}, f...), ExitOK, "orders/0@0"},
		{"tail TOPIC/N", append([]string{"tail", filepath.Join(logDir, "orders", "0"), "-o", "earliest", "--timeout", "30s"}, f...), ExitOK, "orders/0@0"},
		{"find TOPIC/N", []string{"find", filepath.Join(logDir, "users", "0"), "--where", "true", "-f", `%t/%p@%o\n`, "-c", "1"}, ExitOK, "users/0@0"},
		{"segments -t", []string{"segments", logDir, "-t", "users", "--format", "tsv"}, ExitOK, "# " + filepath.Join(logDir, "users-0") + " (topic users, partition 0): 1 segment"},
		{"verify -t -p missing", []string{"verify", logDir, "-t", "orders", "-p", "9"}, ExitTrouble, "orders-9"},
		{"-p without -t", []string{"fetch", logDir, "-p", "0"}, ExitTrouble, "-p/--partition 0 goes with -t/--topic TOPIC"},
		{"-p not a number", []string{"fetch", logDir, "-t", "orders", "-p", "01"}, ExitTrouble, `wants a partition number, got "01"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := klog(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s\n%s", code, c.code, errs, out)
			}
			if c.code != ExitOK {
				if !strings.Contains(errs+out, c.out) {
					t.Errorf("output %q does not say %q", errs+out, c.out)
				}
				return
			}
			if first, _, _ := strings.Cut(out, "\n"); first != c.out {
				t.Errorf("first line %q, want %q", first, c.out)
			}
		})
	}
}

// TestProduceSchemasFromRegistry: produce --schemas URL encodes --input
// json values with a running registry's schemas (Avro, Protobuf importing
// another subject's file, JSON Schema $ref-ing another subject's), the URL's
// user info sent as basic authentication, and find --schemas URL decodes
// them back to the same values.
func TestProduceSchemasFromRegistry(t *testing.T) {
	t.Parallel()
	type answer struct {
		Subject    string           `json:"subject"`
		Version    int              `json:"version"`
		ID         int32            `json:"id"`
		SchemaType string           `json:"schemaType,omitempty"`
		Schema     string           `json:"schema"`
		References []map[string]any `json:"references,omitempty"`
	}
	ref := func(name, subject string) []map[string]any {
		return []map[string]any{{"name": name, "subject": subject, "version": 1}}
	}
	answers := []answer{
		{"o-value", 1, 11, "", `{"type":"record","name":"O","fields":[{"name":"id","type":"long"},{"name":"tags","type":{"type":"array","items":"string"}}]}`, nil},
		{"money", 1, 12, "PROTOBUF", `syntax = "proto3"; package m; message Money { string currency = 1; int64 units = 2; }`, nil},
		{"p-value", 1, 13, "PROTOBUF", `syntax = "proto3"; package p; import "money.proto"; message First { int32 n = 1; } message P { string id = 1; m.Money amount = 2; }`, ref("money.proto", "money")},
		{"addr", 1, 14, "JSON", `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`, nil},
		{"u-value", 2, 15, "JSON", `{"type":"object","properties":{"name":{"type":"string"},"address":{"$ref":"addr.json"}},"required":["name"]}`, ref("addr.json", "addr")},
	}
	routes := map[string]answer{}
	for _, a := range answers {
		routes[fmt.Sprintf("/schemas/ids/%d", a.ID)] = a
		routes[fmt.Sprintf("/subjects/%s/versions/%d", a.Subject, a.Version)] = a
		routes[fmt.Sprintf("/subjects/%s/versions/latest", a.Subject)] = a
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "klog" || p != "s3cret" {
			http.Error(w, `{"error_code":40101,"message":"Unauthorized"}`, http.StatusUnauthorized)
			return
		}
		a, ok := routes[r.URL.Path]
		if !ok {
			http.Error(w, `{"error_code":40403,"message":"Schema not found"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		json.NewEncoder(w).Encode(a)
	}))
	defer srv.Close()
	reg := strings.Replace(srv.URL, "http://", "http://klog:s3cret@", 1)
	logs := t.TempDir()
	cases := []struct {
		name, subject, message, value string
		format, schema                string // what find says decoded it
	}{
		{"avro", "o-value", "", `{"id":7,"tags":["a","b"]}`, "avro", `{"id":11,"subject":"o-value","version":1,"type":"AVRO"}`},
		{"protobuf", "p-value", "p.P", `{"id":"x","amount":{"currency":"EUR","units":"5"}}`, "protobuf", `{"id":13,"subject":"p-value","version":1,"type":"PROTOBUF","message":"p.P"}`},
		{"json schema", "u-value:2", "", `{"name":"a","address":{"city":"c"}}`, "json-schema", `{"id":15,"subject":"u-value","version":2,"type":"JSON"}`},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(logs, fmt.Sprintf("t-%d", i))
			args := []string{"produce", dir, "--input", "json", "--schemas", reg, "--value-schema", c.subject, "--acks", "0"}
			if c.message != "" {
				args = append(args, "--protobuf-message", c.message)
			}
			if code, _, errs := prodRun(t, `{"key":"k","value":`+c.value+"}\n", args...); code != ExitOK {
				t.Fatalf("produce: exit %d: %s", code, errs)
			}
			code, out, errs := klog(t, "find", dir, "--where", "true", "--value-format", c.format, "--schemas", reg, "--json")
			if code != ExitOK {
				t.Fatalf("find: exit %d: %s", code, errs)
			}
			canon := func(js string) string {
				var v any
				if err := json.Unmarshal([]byte(js), &v); err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(v)
				return string(b)
			}
			want := fmt.Sprintf(`valueFormat=%q decodedValue=%s`, c.format, canon(c.value))
			if got := decodedRecords(t, out); len(got) != 1 || got[0] != want {
				t.Errorf("decoded %v\nwant %s", got, want)
			}
			if !strings.Contains(out, `"valueSchema":`+c.schema) {
				t.Errorf("find says another schema decoded it than %s:\n%s", c.schema, out)
			}
		})
	}
	// Without the credentials the registry's refusal is said, naming the
	// URL without them.
	code, _, errs := prodRun(t, `{"value":{}}`+"\n", "produce", filepath.Join(logs, "t-9"), "--input", "json", "--schemas", srv.URL, "--value-schema", "o-value", "--acks", "0")
	if code != ExitTrouble || !strings.Contains(errs, "401 Unauthorized") || strings.Contains(errs, "s3cret") {
		t.Errorf("no credentials: exit %d: %s", code, errs)
	}
}

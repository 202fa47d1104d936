package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klog-dev/klog/inspect"
	"github.com/klog-dev/klog/internal/jsoncontract"
	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/tiered"
)

// TestTieredJSONSchema runs every klog tiered subcommand's JSON output on
// the tiered fixtures (both layouts, the corrupted variants, a store with a
// stray object and an orphan segment, a store read without its metadata)
// and checks every line against ndjson/schema.json.
func TestTieredJSONSchema(t *testing.T) {
	kw := tieredFixtures
	local := filepath.Join(kw, "local-tiered")
	remote, logDir := filepath.Join(local, "remote"), filepath.Join(local, "broker-logdir")
	aiven := filepath.Join(kw, "aiven")
	keyPair := "key1=" + filepath.Join(aiven, "keys", "private.pem")
	part := "kafka-tiered-storage/orders-0-b3JkZXJzAAAAAAAAAAAAAg/"
	aivenPart := "tiered/orders-b3JkZXJzAAAAAAAAAAAAAg/0/"

	// A copy of the store with objects no metadata names: a stray file
	// and a .log uploaded without its other artifacts.
	extra := filepath.Join(t.TempDir(), "remote")
	if err := os.CopyFS(extra, os.DirFS(remote)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(extra, filepath.FromSlash(part))
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	seg, err := os.ReadFile(filepath.Join(dir, "00000000000000000022-U0VHTUVOVDMAAAAAAAAAAw.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000022-T1JQSEFOAAAAAAAAAAAAAA.log"), seg, 0o644); err != nil {
		t.Fatal(err)
	}

	where := []string{"--remote", remote, "--log-dir", logDir}
	one := append(where[:4:4], "--topic", "orders", "--partition", "0")
	runs := [][]string{
		append([]string{"ls", "--json"}, where...),
		{"ls", "--json", "--remote", remote},
		{"ls", "--json", "--remote", extra, "--log-dir", logDir},
		append([]string{"verify", "--json"}, where...),
		{"verify", "--json", "--remote", extra, "--log-dir", logDir},
		{"verify", "--json", "--no-read", "--remote", remote},
		{"ls", "--json", "--remote", filepath.Join(aiven, "plain", "storage"), "--log-dir", filepath.Join(aiven, "plain", "broker-logdir")},
		{"verify", "--json", "--remote", filepath.Join(aiven, "plain", "storage"), "--log-dir", filepath.Join(aiven, "plain", "broker-logdir")},
		{"verify", "--json", "--remote", filepath.Join(aiven, "zstd-encrypted", "storage"), "--log-dir", filepath.Join(aiven, "zstd-encrypted", "broker-logdir"), "--key-pair", keyPair},
		{"verify", "--json", "--remote", filepath.Join(aiven, "zstd-encrypted", "storage"), "--log-dir", filepath.Join(aiven, "zstd-encrypted", "broker-logdir")},
		append(append([]string{"find", "--json"}, one...), "--offset", "10"),
		append(append([]string{"find", "--json"}, one...), "--offset", "30"),
		append(append([]string{"find", "--json"}, one...), "--timestamp", "1700000015500"),
		append(append([]string{"fetch", "--print-data-log"}, one...), "--max-records", "0"),
		append(append([]string{"fetch"}, one...), "--offset", "20", "--key-encoding", "hex", "--value-encoding", "base64"),
		append(append([]string{"retention", "--json"}, one...), "--now", "1700000018000", "--retention-ms", "5000"),
		append(append([]string{"retention", "--json"}, one...), "--now", "1700000040000", "--retention-ms", "20000", "--local-retention-ms", "1000", "--retention-bytes", "600"),
	}
	for _, v := range []string{"crc-flip", "gap", "missing-remote-files"} {
		runs = append(runs, []string{"verify", "--json", "--remote", filepath.Join(kw, "variants", v, "remote"), "--log-dir", filepath.Join(kw, "variants", v, "broker-logdir")})
	}
	for _, sfx := range []string{"log", "index", "timeindex", "snapshot", "txnindex", "leader_epoch_checkpoint"} {
		runs = append(runs, []string{"dump", "--json", "--deep-iteration", "--print-data-log", "--remote", remote, part + "00000000000000000014-U0VHTUVOVDIAAAAAAAAAAg." + sfx})
	}
	for _, sfx := range []string{"log", "indexes"} {
		runs = append(runs, []string{"dump", "--json", "--deep-iteration", "--print-data-log", "--remote", filepath.Join(aiven, "zstd-encrypted", "storage"), "--key-pair", keyPair,
			aivenPart + "00000000000000000014-U0VHTUVOVDIAAAAAAAAAAg." + sfx})
	}
	seen := map[string]bool{}
	for _, args := range runs {
		code, out, errs := klog(t, append([]string{"tiered"}, args...)...)
		if code == ExitTrouble && !strings.Contains(errs, "key pair") {
			t.Errorf("tiered %s: exit %d: %s", strings.Join(args, " "), code, errs)
			continue
		}
		objs, err := jsoncontract.Lines(out)
		if err != nil {
			t.Errorf("tiered %s: %v", strings.Join(args, " "), err)
		}
		if len(objs) == 0 {
			t.Errorf("tiered %s printed no object", strings.Join(args, " "))
		}
		for _, o := range objs {
			seen[o["type"].(string)] = true
		}
	}
	for _, typ := range []string{"remoteSegment", "remoteFinding", "remotePartition", "remoteSummary", "position", "record",
		"remoteRetentionSegment", "remoteRetentionSummary", "file", "batch", "indexEntry", "timeIndexEntry", "producer", "abortedTxn", "epoch"} {
		if !seen[typ] {
			t.Errorf("no %q object printed", typ)
		}
	}
}

// TestTieredJSONEveryField encodes each klog tiered object with every field
// of its Go type set, as the commands encode it, and checks it against the
// schema: a field added to the output, even one the fixtures leave empty
// (omitempty), fails here until schema.json has it.
func TestTieredJSONEveryField(t *testing.T) {
	var out bytes.Buffer
	rep := fillAll[tiered.PartitionReport](t)
	if err := inspect.WriteTieredJSON(&out, &rep); err != nil {
		t.Fatal(err)
	}
	ret := fillAll[tiered.RetentionReport](t)
	if err := inspect.WriteTieredRetentionJSON(&out, &ret); err != nil {
		t.Fatal(err)
	}
	// As runTieredVerify and runTieredFind write them.
	if err := ndjson.WriteTyped(&out, "remoteSummary", fillAll[tiered.Summary](t)); err != nil {
		t.Fatal(err)
	}
	if err := ndjson.WriteTyped(&out, "position", fillAll[tiered.Position](t)); err != nil {
		t.Fatal(err)
	}
	objs, err := jsoncontract.Lines(out.String())
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, o := range objs {
		types = append(types, o["type"].(string))
	}
	want := "remoteSegment remoteFinding remoteFinding remotePartition remoteRetentionSegment remoteRetentionSummary remoteSummary position"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("objects %s, want %s", got, want)
	}
	// The nested findings have every field too.
	if !strings.Contains(out.String(), `"findings":[{"path":"x","kind":"x"`) || !strings.Contains(out.String(), `"unplacedFindings":[{"path":"x"`) {
		t.Errorf("nested findings not filled: %s", out.String())
	}
}

// fillValues are the string fields whose schema is an enum.
var fillValues = map[string]string{"layout": "kafka", "tier": "remote", "reason": "kept"}

// fillAll returns a T with every exported field set: strings "x" (or
// fillValues' by JSON name), numbers 1, booleans true, pointers allocated,
// slices of one element.
func fillAll[T any](t *testing.T) T {
	var v T
	fill(t, reflect.ValueOf(&v).Elem(), "")
	return v
}

func fill(t *testing.T, v reflect.Value, name string) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), name)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if n == "" {
				n = f.Name
			}
			fill(t, v.Field(i), n)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(t, v.Index(0), name)
	case reflect.String:
		s, ok := fillValues[name]
		if !ok {
			s = "x"
		}
		v.SetString(s)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Bool:
		v.SetBool(true)
	default:
		t.Fatalf("fill: field %s: %s", name, v.Type())
	}
}

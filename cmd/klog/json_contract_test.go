package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/jsoncontract"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// hostileBytes are the payloads every command's --json must carry without
// loss: every byte 0x00..0xff, each control character alone, invalid UTF-8,
// UTF-8-encoded surrogates (lone and paired, as CESU-8 writes them), the
// JSON-significant characters and valid non-ASCII text.
func hostileBytes() [][]byte {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	out := [][]byte{all, {}, []byte(`"\/` + "\u2028\u2029 héllo 日本 😀"), {0xff, 0xfe}, {0xc0, 0x80},
		{0xed, 0xa0, 0x80}, {0xed, 0xbf, 0xbf}, {0xed, 0xa0, 0xbd, 0xed, 0xb2, 0xa9}, {0xf4, 0x90, 0x80, 0x80}, {0xe2, 0x82}}
	for c := 0; c < 0x20; c++ {
		out = append(out, []byte{byte(c), 'x'})
	}
	out = append(out, []byte{0x7f}, []byte{0x80}, []byte{'a', 0xff, 'b'})
	return out
}

// hostilePartition writes a partition whose keys, values, header keys and
// header values are hostileBytes, one transaction committed and one
// aborted, and a high watermark at its end. It returns the log dir, the
// partition dir and the payloads in offset order.
func hostilePartition(t *testing.T) (logDir, dir string, payloads [][]byte) {
	t.Helper()
	logDir = t.TempDir()
	dir = filepath.Join(logDir, "orders-0")
	a, err := produce.Open(dir, produce.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	payloads = hostileBytes()
	b := &produce.Batch{}
	for _, p := range payloads {
		b.Records = append(b.Records, format.Record{Key: p, Value: p,
			Headers: []format.Header{{Key: p, Value: p}, {Key: []byte("n"), Value: nil}}})
	}
	if _, err := a.Append(b); err != nil {
		t.Fatal(err)
	}
	for _, commit := range []bool{true, false} {
		tx := &produce.Batch{Producer: &produce.Producer{ID: 7}, Transactional: true, Compression: format.CompressionGzip,
			Records: []format.Record{{Key: payloads[0], Value: payloads[3]}}}
		if _, err := a.Append(tx); err != nil {
			t.Fatal(err)
		}
		if _, err := a.EndTxn(7, 0, commit, 1); err != nil {
			t.Fatal(err)
		}
	}
	leo := a.LogEndOffset()
	cp := format.AppendOffsetCheckpoint(nil, []format.OffsetEntry{{Topic: "orders", Partition: 0, Offset: leo}})
	if err := os.WriteFile(filepath.Join(logDir, partition.ReplicationCheckpoint), cp, 0o644); err != nil {
		t.Fatal(err)
	}
	return logDir, dir, payloads
}

// decodeBytes reads a byte field back by its encoding field.
func decodeBytes(t *testing.T, obj map[string]any, name, encName string) ([]byte, bool) {
	t.Helper()
	v, ok := obj[name]
	if !ok || v == nil {
		return nil, ok
	}
	s, _ := v.(string)
	switch enc, _ := obj[encName].(string); enc {
	case "":
		return []byte(s), true
	case "base64":
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return b, true
	case "hex":
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return b, true
	default:
		return nil, false // redacted
	}
}

// checkRecords checks that each record object with data carries its
// payload byte for byte (key, value and the first header), and returns how
// many it checked.
func checkRecords(t *testing.T, cmd string, objs []map[string]any, payloads [][]byte) int {
	t.Helper()
	n := 0
	var visit func(o map[string]any)
	visit = func(o map[string]any) {
		for _, v := range o {
			switch v := v.(type) {
			case map[string]any:
				visit(v)
			case []any:
				for _, e := range v {
					if m, ok := e.(map[string]any); ok {
						visit(m)
					}
				}
			}
		}
		if o["type"] != "record" || o["control"] != nil {
			return
		}
		off, _ := o["offset"].(interface{ Int64() (int64, error) })
		if off == nil {
			t.Fatalf("%s: record without offset: %v", cmd, o)
		}
		i, _ := off.Int64()
		if int(i) >= len(payloads) {
			return // the transactions' records
		}
		want := payloads[i]
		if k, ok := decodeBytes(t, o, "key", "keyEncoding"); ok && k != nil && !bytes.Equal(k, want) {
			t.Errorf("%s: offset %d: key %q, want %q", cmd, i, k, want)
		}
		if v, ok := decodeBytes(t, o, "value", "valueEncoding"); ok && v != nil && !bytes.Equal(v, want) {
			t.Errorf("%s: offset %d: value %q, want %q", cmd, i, v, want)
		}
		hs, _ := o["headers"].([]any)
		if len(hs) != 2 {
			t.Fatalf("%s: offset %d: headers %v", cmd, i, o["headers"])
		}
		h := hs[0].(map[string]any)
		if k, ok := decodeBytes(t, h, "key", "keyEncoding"); !ok || !bytes.Equal(k, want) {
			t.Errorf("%s: offset %d: header key %q, want %q", cmd, i, k, want)
		}
		if v, ok := decodeBytes(t, h, "value", "valueEncoding"); ok && v != nil && !bytes.Equal(v, want) {
			t.Errorf("%s: offset %d: header value %q, want %q", cmd, i, v, want)
		}
		n++
	}
	for _, o := range objs {
		visit(o)
	}
	return n
}

// TestJSONEveryByte feeds keys, values, header keys and header values with
// every byte, invalid UTF-8 and surrogates through every command's --json:
// every line must parse with encoding/json, validate against the schema,
// and give the bytes back.
func TestJSONEveryByte(t *testing.T) {
	logDir, dir, payloads := hostilePartition(t)
	seg := filepath.Join(dir, "00000000000000000000.log")
	// An empty replica of the same partition, for diff to list every batch.
	empty := filepath.Join(t.TempDir(), "orders-0")
	if a, err := produce.Open(empty, produce.Options{}); err != nil {
		t.Fatal(err)
	} else {
		a.Close()
	}
	cases := []struct {
		name    string
		args    []string
		records int // records with data to check; -1 for none
	}{
		{"dump", []string{"dump", "--json", "--print-data-log", seg}, len(payloads)},
		{"dump hex", []string{"dump", "--json", "--print-data-log", "--key-encoding", "hex", "--value-encoding", "base64", seg}, len(payloads)},
		{"dump redacted", []string{"dump", "--json", "--print-data-log", "--value-encoding", "redacted", seg}, len(payloads)},
		{"dump dir", []string{"dump", "--json", dir}, -1},
		{"fetch", []string{"fetch", "--json", "--log", dir}, len(payloads)},
		{"fetch committed", []string{"fetch", "--json", "--log", dir, "--isolation", "read_committed", "--key-encoding", "hex"}, len(payloads)},
		{"fetch follow", []string{"fetch", "--json", "--follow", "--timeout", "300ms", "--log", dir}, len(payloads)},
		{"find", []string{"find", "--json", "--offset", "3", dir}, 1},
		{"diff records", []string{"diff", "--json", "--records", "--leader", dir, dir, empty}, len(payloads)},
		{"find time", []string{"find", "--json", "--timestamp", "0", "--value-encoding", "base64", dir}, 1},
		{"find where", []string{"find", "--json", "--where", "offset >= 0", dir}, len(payloads)},
		{"find where decoded", []string{"find", "--json", "--where", "true", "--key-format", "auto", "--value-format", "auto", dir}, len(payloads)},
		{"find schemas", []string{"find", "--json", "--where", "true", "--key-format", "auto", "--value-format", "auto", "../../schema/testdata/confluent"}, -1},
		{"recover salvage", []string{"recover", "--salvage", "--json", dir}, len(payloads)},
		{"tail", []string{"tail", "--json", "--from-beginning", "--print-data-log", "--timeout", "300ms", dir}, len(payloads)},
		{"verify", []string{"verify", "--json", dir}, -1},
		{"segments", []string{"segments", "--json", dir}, -1},
		{"stats", []string{"stats", "--json", dir}, -1},
		{"offsets", []string{"offsets", "--json", logDir}, -1},
		{"offsets earliest", []string{"offsets", "--json", "--time", "earliest", dir}, -1},
		{"recover", []string{"recover", "--json", dir}, -1},
	}
	// The schema fixtures hold records that do not decode: findings.
	codes := map[string]int{"find schemas": ExitFindings}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := klog(t, c.args...)
			if code != codes[c.name] {
				t.Fatalf("exit %d\n%s\n%s", code, errs, out)
			}
			objs, err := jsoncontract.Lines(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) == 0 {
				t.Fatalf("no output")
			}
			if c.name == "recover salvage" {
				if _, err := jsoncontract.Lines(errs); err != nil {
					t.Fatalf("stderr: %v", err)
				}
			}
			if c.records >= 0 {
				if n := checkRecords(t, c.name, objs, payloads); n != c.records {
					t.Errorf("%d records with data checked, want %d", n, c.records)
				}
			}
		})
	}
}

// TestJSONContractWriters covers the commands that write: produce's
// responses and replicate's request-log lines.
func TestJSONContractWriters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	var out, errw bytes.Buffer
	in := `{"key":"k","value":"AAEC/w==","valueEncoding":"base64","headers":[{"key":"h","value":"v"}]}` + "\n"
	code := run(context.Background(), []string{"klog", "produce", "--log", dir, "--input", "json", "--json"}, strings.NewReader(in), &out, &errw)
	if code != ExitOK {
		t.Fatalf("produce: exit %d: %s", code, errw.String())
	}
	if _, err := jsoncontract.Lines(out.String()); err != nil {
		t.Fatal(err)
	}
	code, rout, errs := klog(t, "replicate", "--dir", filepath.Join(t.TempDir(), "c"), "--preload", "2", "--records", "1", "--step", "--json")
	if code != ExitOK {
		t.Fatalf("replicate: exit %d: %s", code, errs)
	}
	if _, err := jsoncontract.Lines(rout); err != nil {
		t.Fatal(err)
	}
}

// TestJSONViewFindings: the views' JSON with findings in it (a CRC
// mismatch, a torn tail) still validates against the schema, and the exit
// code is 1.
func TestJSONViewFindings(t *testing.T) {
	badCRC := segments(t, "kafka-written", "derived-corrupt", "bad-crc-none")
	torn := segments(t, "kafka-written", "derived-corrupt", "truncated-tail")
	for _, args := range [][]string{
		{"segments", "--json", badCRC, torn},
		{"stats", "--json", badCRC},
		{"stats", "--json", torn},
		{"find", "--json", "--offset", "0", badCRC},
	} {
		code, out, errs := klog(t, args...)
		if code != ExitFindings {
			t.Errorf("%v: exit %d, want 1\n%s", args, code, errs)
		}
		objs, err := jsoncontract.Lines(out)
		if err != nil || len(objs) == 0 {
			t.Errorf("%v: %d objects: %v", args, len(objs), err)
		}
		if !strings.Contains(out, `"kind":"crc-mismatch"`) && !strings.Contains(out, `"kind":"truncated"`) {
			t.Errorf("%v: no finding in the JSON:\n%s", args, out)
		}
	}
}

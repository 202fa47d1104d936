package partition

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/format"
)

func writeMetadata(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, PartitionMetadata), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustID(t *testing.T, s string) [16]byte {
	t.Helper()
	id, err := format.ParseTopicID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestEnsureTopicID: which id a partition gets, from where, and that an
// existing partition.metadata is never rewritten.
func TestEnsureTopicID(t *testing.T) {
	t.Parallel()
	const (
		sib   = "c2libGluZy1pZC0wMDAwMQ" // a sibling's id
		sib2  = "c2libGluZy1pZC0wMDAwMg"
		given = "Z2l2ZW4taWQtLS0tLS0tMQ"
		own   = "b3duLWlkLS0tLS0tLS0tMQ"
	)
	kafka := func(id string) string { return "version: 0\ntopic_id: " + id }
	for _, tc := range []struct {
		name     string
		dir      string            // the partition, under the log dir
		files    map[string]string // partition dir -> partition.metadata content
		want     string            // --topic-id, "" for none
		create   bool
		wantID   string // "" for zero; "random" for a fresh one
		wantFile bool   // dir has partition.metadata afterwards
		mismatch bool
		fails    bool
	}{
		{name: "new, alone: fresh id", dir: "orders-0", create: true, wantID: "random", wantFile: true},
		{name: "new, sibling has one", dir: "orders-1", files: map[string]string{"orders-0": kafka(sib)}, create: true, wantID: sib, wantFile: true},
		{name: "new, lowest sibling wins", dir: "orders-5", files: map[string]string{"orders-10": kafka(sib2), "orders-2": kafka(sib)}, create: true, wantID: sib, wantFile: true},
		{name: "new, other topics ignored", dir: "orders-1", files: map[string]string{"orders-x-0": kafka(sib), "order-0": kafka(sib2), "orders-0-delete": kafka(sib)}, create: true, wantID: "random", wantFile: true},
		{name: "new, sibling unreadable: skipped", dir: "orders-1", files: map[string]string{"orders-0": "garbage", "orders-2": kafka(sib2)}, create: true, wantID: sib2, wantFile: true},
		{name: "new, given id beats sibling", dir: "orders-1", files: map[string]string{"orders-0": kafka(sib)}, want: given, create: true, wantID: given, wantFile: true},
		{name: "new, not named topic-N: fresh id", dir: "scratch", files: map[string]string{"scratch-0": kafka(sib)}, create: true, wantID: "random", wantFile: true},
		{name: "existing without file: left alone", dir: "orders-1", files: map[string]string{"orders-0": kafka(sib)}, wantID: "", wantFile: false},
		{name: "existing without file, given id: written", dir: "orders-1", want: given, wantID: given, wantFile: true},
		{name: "existing file kept", dir: "orders-0", files: map[string]string{"orders-0": kafka(own)}, create: true, wantID: own, wantFile: true},
		{name: "existing file, same given id", dir: "orders-0", files: map[string]string{"orders-0": kafka(own)}, want: own, wantID: own, wantFile: true},
		{name: "existing file, other given id", dir: "orders-0", files: map[string]string{"orders-0": kafka(own)}, want: given, wantID: own, wantFile: true, mismatch: true},
		{name: "existing file unreadable", dir: "orders-0", files: map[string]string{"orders-0": "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA"}, want: given, wantFile: true, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			logDir := t.TempDir()
			for d, content := range tc.files {
				writeMetadata(t, filepath.Join(logDir, d), content)
			}
			dir := filepath.Join(logDir, tc.dir)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(filepath.Join(dir, PartitionMetadata))
			var want [16]byte
			if tc.want != "" {
				want = mustID(t, tc.want)
			}
			id, err := EnsureTopicID(dir, want, tc.create, WriteOptions{NoSync: true})
			var me *TopicIDMismatchError
			switch {
			case tc.mismatch:
				if !errors.As(err, &me) || me.Have != mustID(t, own) || me.Want != want {
					t.Fatalf("err %v, want a mismatch", err)
				}
			case tc.fails:
				if err == nil || errors.As(err, &me) {
					t.Fatalf("err %v, want a parse error", err)
				}
			case err != nil:
				t.Fatal(err)
			}
			after, err := os.ReadFile(filepath.Join(dir, PartitionMetadata))
			if (err == nil) != tc.wantFile {
				t.Fatalf("partition.metadata exists %v, want %v", err == nil, tc.wantFile)
			}
			if before != nil && !bytes.Equal(before, after) {
				t.Fatalf("partition.metadata rewritten: %q -> %q", before, after)
			}
			if tc.fails {
				return
			}
			switch tc.wantID {
			case "":
				if id != ([16]byte{}) {
					t.Fatalf("id %s, want none", format.FormatTopicID(id))
				}
			case "random":
				for _, s := range []string{sib, sib2, given, own} {
					if id == mustID(t, s) {
						t.Fatalf("id %s is not fresh", s)
					}
				}
				if id[6]>>4 != 4 || id[8]>>6 != 2 {
					t.Fatalf("id %x is not a version 4, variant 2 UUID", id)
				}
			default:
				if id != mustID(t, tc.wantID) {
					t.Fatalf("id %s, want %s", format.FormatTopicID(id), tc.wantID)
				}
			}
			if tc.wantFile && before == nil {
				if want := "version: 0\ntopic_id: " + format.FormatTopicID(id); string(after) != want {
					t.Fatalf("wrote %q, want %q", after, want)
				}
				if _, err := os.Stat(filepath.Join(dir, PartitionMetadata+".tmp")); err == nil {
					t.Fatal("temporary file left behind")
				}
			}
			if got, ok, err := ReadTopicID(dir); tc.wantFile && (err != nil || !ok || got != id) {
				t.Fatalf("ReadTopicID = %x, %v, %v; want %x", got, ok, err, id)
			}
		})
	}
}

// TestNewTopicID: Uuid.randomUuid's rules on chosen random bytes: version
// and variant bits set, and a draw whose text starts with "-" (or is a
// reserved id) thrown away.
func TestNewTopicID(t *testing.T) {
	t.Parallel()
	dash := bytes.Repeat([]byte{0xf8}, 16) // prints as "-..."
	fine := bytes.Repeat([]byte{0x11}, 16)
	id, err := newTopicID(bytes.NewReader(append(dash, fine...)))
	if err != nil {
		t.Fatal(err)
	}
	want := [16]byte{}
	copy(want[:], fine)
	want[6], want[8] = 0x41, 0x91
	if id != want {
		t.Fatalf("id %x, want %x (the second draw, versioned)", id, want)
	}
	if _, err := newTopicID(bytes.NewReader(dash)); err == nil {
		t.Fatal("ran out of random bytes without an error")
	}
	for range 1000 {
		id, err := NewTopicID()
		if err != nil {
			t.Fatal(err)
		}
		s := format.FormatTopicID(id)
		if s[0] == '-' || id == ([16]byte{}) || id == metadataTopicID {
			t.Fatalf("NewTopicID gave %s", s)
		}
		if back, err := format.ParseTopicID(s); err != nil || back != id {
			t.Fatalf("%s does not parse back: %v", s, err)
		}
	}
}

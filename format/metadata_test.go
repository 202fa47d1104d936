package format

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPartitionMetadataKafkaBytes: what Kafka 4.3.1 wrote (its test
// harness used topic id ONE_UUID) parses, and AppendPartitionMetadata
// writes the very same bytes back, with no newline after the id.
func TestPartitionMetadataKafkaBytes(t *testing.T) {
	path := filepath.Join("..", "testdata", "segments", "kafka-written", "unifiedlog-v0", "topic-0", "partition.metadata")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParsePartitionMetadata(data)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 0 || m.TopicID != "AAAAAAAAAAAAAAAAAAAAAQ" {
		t.Fatalf("parsed %+v", m)
	}
	if got := AppendPartitionMetadata(nil, m); string(got) != string(data) {
		t.Fatalf("re-encoded %q, Kafka wrote %q", got, data)
	}
	if got := string(AppendPartitionMetadata([]byte("x"), PartitionMetadata{Version: 3, TopicID: "abc"})); got != "xversion: 3\ntopic_id: abc" {
		t.Fatalf("appended %q", got)
	}
}

func TestParseTopicID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		ok   bool
		want [16]byte
	}{
		{"AAAAAAAAAAAAAAAAAAAAAQ", true, [16]byte{15: 1}},
		{"_____________________w", true, [16]byte{0: 0xff, 1: 0xff, 2: 0xff, 3: 0xff, 4: 0xff, 5: 0xff, 6: 0xff, 7: 0xff,
			8: 0xff, 9: 0xff, 10: 0xff, 11: 0xff, 12: 0xff, 13: 0xff, 14: 0xff, 15: 0xff}},
		{"-AAAAAAAAAAAAAAAAAAAAQ", true, [16]byte{0: 0xf8, 15: 1}}, // fromString takes it; randomUuid never makes it
		{"AAAAAAAAAAAAAAAAAAAAAA", false, [16]byte{}},              // the zero id: "none"
		{"AAAAAAAAAAAAAAAAAAAAAR", false, [16]byte{}},              // same bytes as ...AQ, not toString's spelling
		{"AAAAAAAAAAAAAAAAAAAAA", false, [16]byte{}},               // 21
		{"AAAAAAAAAAAAAAAAAAAAAQ==", false, [16]byte{}},            // padded
		{"AAAAAAAAAAAAAAAAAAAA+Q", false, [16]byte{}},              // standard, not URL-safe, base64
		{"AAAAAAAAAAAAAAAAAAAA Q", false, [16]byte{}},
		{"", false, [16]byte{}},
	} {
		id, err := ParseTopicID(tc.in)
		if (err == nil) != tc.ok || id != tc.want {
			t.Errorf("ParseTopicID(%q) = %x, %v; want %x, ok %v", tc.in, id, err, tc.want, tc.ok)
		}
		if tc.ok && FormatTopicID(id) != tc.in {
			t.Errorf("FormatTopicID(%x) = %q, want %q", id, FormatTopicID(id), tc.in)
		}
	}
}

// TestParseTopicIDNamesTheSpelling: a 22-character id whose last character
// sets bits past the 16 bytes is refused with the spelling Kafka prints, not
// as "not URL-safe base64" (it is).
func TestParseTopicIDNamesTheSpelling(t *testing.T) {
	_, err := ParseTopicID("cGF5bWVudHMtdG9waWMtaR")
	if err == nil || !strings.Contains(err.Error(), "Kafka prints that id as cGF5bWVudHMtdG9waWMtaQ") {
		t.Fatalf("err = %v, want the spelling Kafka prints", err)
	}
	_, err = ParseTopicID("AAAAAAAAAAAAAAAAAAAA+Q")
	if err == nil || !strings.Contains(err.Error(), "is not 22 characters of URL-safe base64") {
		t.Fatalf("standard base64: err = %v", err)
	}
}

// FuzzTopicID: ParseTopicID never panics, accepts exactly the strings
// FormatTopicID prints for a non-zero id, and partition.metadata built
// from one parses back to it.
func FuzzTopicID(f *testing.F) {
	f.Add("AAAAAAAAAAAAAAAAAAAAAQ")
	f.Add("AAAAAAAAAAAAAAAAAAAAAR")
	f.Add("-AAAAAAAAAAAAAAAAAAAAQ")
	// The topic ids Kafka wrote into the fixtures' partition.metadata.
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "segments", "kafka-written", "*", "*", "partition.metadata"))
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			if m, err := ParsePartitionMetadata(data); err == nil {
				f.Add(m.TopicID)
			}
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseTopicID(s)
		if err != nil {
			return
		}
		if FormatTopicID(id) != s {
			t.Fatalf("%q parsed to %x, which prints as %q", s, id, FormatTopicID(id))
		}
		m, err := ParsePartitionMetadata(AppendPartitionMetadata(nil, PartitionMetadata{TopicID: s}))
		if err != nil || m.TopicID != s || m.Version != 0 {
			t.Fatalf("partition.metadata with %q reads back %+v, %v", s, m, err)
		}
	})
}

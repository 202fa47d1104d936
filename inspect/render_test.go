package inspect

import (
	"bytes"
	"strings"
	"testing"
)

func TestBytesCell(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1023: "1023", -1023: "-1023", 1128: "1128 (1.1 KiB)",
		-1128: "-1128 (-1.1 KiB)", 3 << 20: "3145728 (3.0 MiB)", 1 << 30: "1073741824 (1.0 GiB)"} {
		if got := bytesCell(n); got != want {
			t.Errorf("bytesCell(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestTablesShowHumanBytes: the diff, retention and what-if tables show
// byte counts as "exact (human)".
func TestTablesShowHumanBytes(t *testing.T) {
	var b bytes.Buffer
	check := func(name string, err error, want ...string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s table without %q:\n%s", name, w, b.String())
			}
		}
		b.Reset()
	}
	check("diff", WriteDiffText(&b, &DiffReport{Replicas: []DiffReplica{{Dir: "b", ExtraBytes: 1128}}}), "1128 (1.1 KiB)")
	check("retention", WriteRetentionTable(&b, &RetentionReport{Segments: []RetentionSegment{{SizeBytes: 5 << 20}}}), "5242880 (5.0 MiB)")
	check("what-if", WriteWhatIfTable(&b, &WhatIfReport{Codecs: []WhatIfCodec{{Codec: "zstd", StoredBytes: 2048, SavedBytes: -4096}}}),
		"2048 (2.0 KiB)", "-4096 (-4.0 KiB)")
}

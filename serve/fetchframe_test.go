package serve

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestFillSmall: a small Fetch frame gets each cut's bytes, from a segment
// range or from memory, at its place between the encoded fields; a segment
// shorter than the range read is errShortFile.
func TestFillSmall(t *testing.T) {
	seg := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(seg, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		fields  string
		cuts    []fetchCut
		want    string
		wantErr error
	}{
		{"no records", "hdr", nil, "hdr", nil},
		{"one file range", "AB", []fetchCut{{at: 1, file: seg, pos: 2, size: 3}}, "A234B", nil},
		{"at the end", "AB", []fetchCut{{at: 2, file: seg, pos: 0, size: 2}}, "AB01", nil},
		{"file and memory", "A|B|C", []fetchCut{{at: 2, file: seg, pos: 7, size: 3}, {at: 4, data: []byte("xy"), size: 2}}, "A|789B|xyC", nil},
		{"segment shrank", "AB", []fetchCut{{at: 1, file: seg, pos: 8, size: 4}}, "", errShortFile},
		{"segment gone", "AB", []fetchCut{{at: 1, file: seg + ".gone", pos: 0, size: 1}}, "", os.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var total int64
			for _, c := range tc.cuts {
				total += c.size
			}
			got, err := fillSmall([]byte(tc.fields), tc.cuts, total)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || !bytes.Equal(got, []byte(tc.want)) {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

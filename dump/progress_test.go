package dump

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRunOnBytes: dump's progress hook adds up to the logs' sizes and
// changes nothing in the output.
func TestRunOnBytes(t *testing.T) {
	dir := filepath.Join(segmentsDir(t), "kafka-written", "unifiedlog-producer", "topic-0")
	files := []string{filepath.Join(dir, "00000000000000000000.log"), filepath.Join(dir, "00000000000000000016.log")}
	var want int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		want += st.Size()
	}
	var n atomic.Int64
	var with, without strings.Builder
	if _, err := Run(files, Options{Deep: true, MaxBytes: -1, OnBytes: func(b int64) { n.Add(b) }}, &with, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(files, Options{Deep: true, MaxBytes: -1}, &without, io.Discard); err != nil {
		t.Fatal(err)
	}
	if n.Load() != want || with.String() != without.String() {
		t.Errorf("OnBytes told %d of %d bytes; outputs equal: %t", n.Load(), want, with.String() == without.String())
	}
}

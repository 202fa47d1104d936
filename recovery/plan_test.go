package recovery

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/internal/safeio"
)

// copyPartition copies a fixture partition (without oracle .txt files).
func copyPartition(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	des, _ := os.ReadDir(src)
	for _, de := range des {
		if de.IsDir() || strings.HasSuffix(de.Name(), ".txt") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dst, de.Name()), b, 0o644)
	}
	return dst
}

func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		b, _ := os.ReadFile(filepath.Join(dir, de.Name()))
		h.Write([]byte(de.Name()))
		h.Write(b)
	}
	return string(h.Sum(nil))
}

func offsets(t *testing.T, dir string) []int64 {
	t.Helper()
	var out []int64
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), ".log") {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(dir, de.Name()))
		sc := format.NewScanner(strings.NewReader(string(data)), int64(len(data)), format.ScanOptions{})
		var rr format.RecordReader
		var r format.Record
		for {
			b, err := sc.Next()
			if err != nil {
				break
			}
			if !b.Valid() || rr.Reset(b) != nil {
				break
			}
			for rr.Next(&r) == nil {
				out = append(out, r.Offset)
			}
		}
	}
	return out
}

func TestRecoverDamagedPartition(t *testing.T) {
	t.Parallel()
	dir := copyPartition(t, segments(t, "kafka-written", "unifiedlog-producer", "topic-0"))
	good := offsets(t, dir)
	// Flip a byte inside the records of the second batch of segment 16.
	p := filepath.Join(dir, "00000000000000000016.log")
	data, _ := os.ReadFile(p)
	bounds := klogtest.BatchBounds(t, data)
	data[bounds[1][0]+70] ^= 0x40
	os.WriteFile(p, data, 0o644)
	before := treeHash(t, dir)

	plan, err := PlanDir(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Changes() {
		t.Fatal("recovery of a damaged partition changes nothing")
	}
	var truncated, deleted int
	for _, s := range plan.Segments {
		if s.Action == ActionTruncate {
			truncated++
			if s.ValidBytes != bounds[1][0] || s.BaseOffset != 16 {
				t.Errorf("truncation at %d of segment %d, want %d of 16", s.ValidBytes, s.BaseOffset, bounds[1][0])
			}
		}
		if s.Action == ActionDelete {
			deleted++
		}
	}
	if truncated != 1 || deleted != 1 {
		t.Errorf("%d truncated, %d deleted segments, want 1 and 1", truncated, deleted)
	}
	out := filepath.Join(t.TempDir(), "topic-0")
	if err := plan.WriteRecovered(out); err != nil {
		t.Fatal(err)
	}
	if treeHash(t, dir) != before {
		t.Fatal("recovery changed the input")
	}
	rep, err := verifyPaths(out)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rep.Files {
		if !rep.Files[i].OK {
			t.Errorf("recovered %s: %+v", rep.Files[i].Path, rep.Files[i].Problems)
		}
	}
	got := offsets(t, out)
	var want []int64
	for _, o := range good {
		if o < plan.LogEndOffset {
			want = append(want, o)
		}
	}
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("recovered %d records, want the %d of the valid prefix", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("record %d: offset %d, want %d", i, got[i], want[i])
		}
	}
}

func TestSalvage(t *testing.T) {
	t.Parallel()
	src := segments(t, "kafka-written", "v2-none", "00000000000000000000.log")
	data, _ := os.ReadFile(src)
	bounds := klogtest.BatchBounds(t, data)
	// Garbage in the middle: overwrite the second batch's header.
	for i := bounds[1][0]; i < bounds[1][0]+20; i++ {
		data[i] = 0xee
	}
	p := filepath.Join(t.TempDir(), "00000000000000000000.log")
	os.WriteFile(p, data, 0o644)
	var got []int64
	var skipped []Skipped
	for s, err := range Salvage(p, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if s.Skipped != nil {
			skipped = append(skipped, *s.Skipped)
			continue
		}
		got = append(got, s.Record.Offset)
	}
	if len(skipped) != 1 || skipped[0].From != bounds[1][0] || skipped[0].To != bounds[2][0] {
		t.Errorf("skipped %+v, want [%d, %d)", skipped, bounds[1][0], bounds[2][0])
	}
	// Batches 0, 2 and 3 saved: offsets 0-3 then 8 onwards.
	if len(got) == 0 || got[0] != 0 || got[4] != 8 {
		t.Errorf("salvaged offsets %v", got)
	}
}

// TestRecoverOnBytes: the progress hook adds up to the size of the .log
// files, damaged ones and those after a truncation included, and does not
// change the plan.
func TestRecoverOnBytes(t *testing.T) {
	t.Parallel()
	dir := copyPartition(t, segments(t, "kafka-written", "unifiedlog-producer", "topic-0"))
	p := filepath.Join(dir, "00000000000000000016.log")
	data, _ := os.ReadFile(p)
	data[klogtest.BatchBounds(t, data)[1][0]+70] ^= 0x40
	os.WriteFile(p, data, 0o644)
	var want int64
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		st, _ := os.Stat(l)
		want += st.Size()
	}
	plain, err := PlanDir(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got int64
	watched, err := PlanDir(dir, Options{OnBytes: func(n int64) {
		if n <= 0 {
			t.Errorf("OnBytes(%d)", n)
		}
		got += n
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got != want || want == 0 {
		t.Errorf("OnBytes added up to %d, want the %d bytes of %d .log files", got, want, len(logs))
	}
	a, _ := json.Marshal(plain)
	b, _ := json.Marshal(watched)
	if !bytes.Equal(a, b) {
		t.Errorf("the plan changed with OnBytes:\n%s\n%s", a, b)
	}
}

// TestFurthestReader: re-reading a range (as after a split) counts once;
// steps are told as the furthest byte read passes each MiB.
func TestFurthestReader(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const size = 3*progressStep + 100
	f.Truncate(size)
	var calls []int64
	r := &furthestReader{File: f, onBytes: func(n int64) { calls = append(calls, n) }}
	buf := make([]byte, progressStep/2)
	for _, off := range []int64{0, progressStep / 2, 0, progressStep / 2, progressStep, 2 * progressStep} {
		r.ReadAt(buf, off)
	}
	if len(calls) != 2 || calls[0] != progressStep || calls[1] != progressStep*3/2 {
		t.Errorf("after reading the first MiB twice, then to 2.5 MiB: told %v, want [%d %d]", calls, progressStep, progressStep*3/2)
	}
	r.rest(size)
	var sum int64
	for _, n := range calls {
		sum += n
	}
	if sum != size {
		t.Errorf("told %d bytes in %v, want %d", sum, calls, size)
	}
}

// TestWriteRecoveredSourceShrinks: a segment truncated between the plan
// and the copy is an error (*safeio.ShrankError), not a shorter copy that
// verifies clean. Before, the copy held what was left and the write
// succeeded.
func TestWriteRecoveredSourceShrinks(t *testing.T) {
	t.Parallel()
	dir := copyPartition(t, segments(t, "kafka-written", "unifiedlog-producer", "topic-0"))
	plan, err := PlanDir(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "00000000000000000016.log")
	data, _ := os.ReadFile(p)
	bounds := klogtest.BatchBounds(t, data)
	if err := os.Truncate(p, bounds[1][0]); err != nil {
		t.Fatal(err)
	}
	var se *safeio.ShrankError
	if err := plan.WriteRecovered(filepath.Join(t.TempDir(), "topic-0")); !errors.As(err, &se) {
		t.Fatalf("err = %v, want a *safeio.ShrankError", err)
	}
}

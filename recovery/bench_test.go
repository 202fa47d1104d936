package recovery

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/internal/klogtest"
)

// BenchmarkPlanRecovery measures the recovery plan over a 64 MiB
// partition (framing, streaming CRC-32C, index rebuild), against verify
// of the same partition in the same run as the baseline.
func BenchmarkPlanRecovery(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "topic-0")
	os.Mkdir(dir, 0o755)
	p := klogtest.WriteSegment(b, dir, 0, 64<<20)
	os.WriteFile(filepath.Join(dir, klogtest.SegmentName(0)+".index"), nil, 0o644)
	st, _ := os.Stat(p)
	b.Run("recover", func(b *testing.B) {
		b.SetBytes(st.Size())
		for i := 0; i < b.N; i++ {
			plan, err := PlanDir(dir, Options{})
			if err != nil || plan.Changes() {
				b.Fatal(err, plan.Changes())
			}
		}
	})
	// With the progress hook klog recover uses on a terminal: the cost of
	// counting, against "recover" in the same run.
	b.Run("recover-progress", func(b *testing.B) {
		b.SetBytes(st.Size())
		var told int64
		for i := 0; i < b.N; i++ {
			plan, err := PlanDir(dir, Options{OnBytes: func(n int64) { told += n }})
			if err != nil || plan.Changes() {
				b.Fatal(err, plan.Changes())
			}
		}
		if told != int64(b.N)*st.Size() {
			b.Fatalf("told %d bytes, want %d", told, int64(b.N)*st.Size())
		}
	})
	b.Run("verify-baseline", func(b *testing.B) {
		b.SetBytes(st.Size())
		for i := 0; i < b.N; i++ {
			if _, err := verifyPaths(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzPlanRecovery feeds arbitrary segment bytes to the plan: it never
// fails on them, and whatever it changes verify reports.
func FuzzPlanRecovery(f *testing.F) {
	for _, name := range []string{"v2-none", "v2-gzip", "v2-transactions", "v1-gzip", "v0-none", "v2-baseoffset-sparseindex"} {
		des, _ := os.ReadDir(segments(f, "kafka-written", name))
		for _, de := range des {
			if filepath.Ext(de.Name()) == ".log" {
				data, err := os.ReadFile(segments(f, "kafka-written", name, de.Name()))
				if err == nil {
					f.Add(data)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "topic-0")
		os.Mkdir(dir, 0o755)
		os.WriteFile(filepath.Join(dir, klogtest.SegmentName(0)+".log"), data, 0o644)
		os.WriteFile(filepath.Join(dir, klogtest.SegmentName(0)+".index"), nil, 0o644)
		plan, err := PlanDir(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !plan.Changes() {
			return
		}
		rep, err := verifyPaths(dir)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Findings() == 0 {
			t.Errorf("plan %s %q, verify finds nothing", plan.Segments[0].Action, plan.KafkaError)
		}
	})
}

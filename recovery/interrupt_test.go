package recovery

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/partition"
)

// TestInterruptedCopyIsMarked (issue 24 item 9): a recovered copy cut short
// holds partition.IncompleteMarker; a finished one does not; a canceled
// plan returns the context's error.
func TestInterruptedCopyIsMarked(t *testing.T) {
	var log []byte
	for i := int64(0); i < 200; i++ {
		log = append(log, genBatch(t, i*3, 3, nil)...)
	}
	src := writeDir(t, map[string][]byte{"00000000000000000000.log": log, "00000000000000000000.index": idx})
	plan, err := PlanDir(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cut := filepath.Join(t.TempDir(), "cut-0")
	if err := plan.WriteRecoveredContext(ctx, cut); !errors.Is(err, context.Canceled) {
		t.Fatalf("WriteRecoveredContext after cancel: %v", err)
	}
	if !partition.IsIncomplete(cut) {
		t.Error("a copy cut short holds no incomplete marker")
	}
	whole := filepath.Join(t.TempDir(), "whole-0")
	if err := plan.WriteRecovered(whole); err != nil {
		t.Fatal(err)
	}
	if partition.IsIncomplete(whole) {
		t.Error("a finished copy holds the incomplete marker")
	}
	if _, err := os.Stat(filepath.Join(whole, "00000000000000000000.log")); err != nil {
		t.Error(err)
	}
	if _, err := PlanDir(src, Options{Context: ctx}); !errors.Is(err, context.Canceled) {
		t.Errorf("PlanDir with a canceled context: %v", err)
	}
}

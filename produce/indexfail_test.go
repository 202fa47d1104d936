package produce

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/format"
)

// TestIndexWriteFailureCutsBack: when the index entry of an appended batch
// cannot be written (a full disk, say), the append fails and the batch is
// cut back out of the log, so that a retry does not duplicate it.
func TestIndexWriteFailureCutsBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	a, err := Open(dir, Options{IndexIntervalBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rec := func(v string) *Batch {
		return &Batch{Records: []format.Record{{Value: []byte(v)}}}
	}
	for _, v := range []string{"a", "b"} {
		if _, err := a.Append(rec(v)); err != nil {
			t.Fatal(err)
		}
	}
	leo, size := a.LogEndOffset(), a.seg.size
	// The index handle now refuses writes.
	good := a.seg.index
	ro, err := os.Open(good.Name())
	if err != nil {
		t.Fatal(err)
	}
	a.seg.index = ro
	if _, err := a.Append(rec("c")); err == nil {
		t.Fatal("append with a failing index write succeeded")
	}
	st, err := os.Stat(filepath.Join(dir, "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != size || a.LogEndOffset() != leo || a.seg.size != size {
		t.Errorf("after the failed append: log %d bytes, LEO %d (state %d); want %d bytes, LEO %d", st.Size(), a.LogEndOffset(), a.seg.size, size, leo)
	}
	ro.Close()
	a.seg.index = good
	r, err := a.Append(rec("c"))
	if err != nil {
		t.Fatal(err)
	}
	if r.BaseOffset != leo {
		t.Errorf("the retry got offset %d, want %d (no duplicate)", r.BaseOffset, leo)
	}
}

package tail

import (
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/produce"
)

// TestFromOffsetAndLast: the replay starts at the batch holding an offset,
// or at the batch holding the first of the last N offsets, across segments.
func TestFromOffsetAndLast(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "orders-4")
	a := openAppender(t, dir, produce.Options{SegmentBytes: 400})
	res := appendN(t, a, 12)
	leo := a.LogEndOffset()
	cases := []struct {
		name string
		opts Options
		from int64 // first offset that must be reported
	}{
		{"offset", Options{FromOffset: res[5].BaseOffset + 1}, res[5].BaseOffset + 1},
		{"last 3", Options{FromLast: 3}, leo - 3},
		{"last more than the log", Options{FromLast: leo + 100}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := startTail(t, []string{dir}, c.opts)
			evs := r.wait(t, "state", func(evs []Event) bool { return len(ofType(evs, TypeState)) == 1 })
			var want []produce.Result
			for _, x := range res {
				if x.LastOffset >= c.from {
					want = append(want, x)
				}
			}
			checkBatches(t, dir, evs, want)
			if st := evs[len(evs)-1]; st.Type != TypeState || st.LogEndOffset != leo {
				t.Fatalf("the state comes last with leo %d: %+v", leo, st)
			}
		})
	}
}

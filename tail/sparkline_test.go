package tail

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestSparkline(t *testing.T) {
	cases := []struct {
		vals []int64
		want string
	}{
		{nil, ""},
		{[]int64{0, 0, 0}, "▁▁▁"},
		{[]int64{0, 1}, "▁█"},
		{[]int64{0, 1, 2, 3, 4, 5, 6, 7}, "▁▂▃▄▅▆▇█"},
		{[]int64{7, 0, 7}, "█▁█"},
		{[]int64{1, 100}, "▂█"},
		{[]int64{50, 100, 0}, "▄█▁"},
	}
	for _, c := range cases {
		if got := Sparkline(c.vals); got != c.want {
			t.Errorf("Sparkline(%v) = %q, want %q", c.vals, got, c.want)
		}
	}
	var h lagHistory
	for i := int64(0); i < 20; i++ {
		h.add(i % 4)
	}
	// The last twelve samples, oldest first.
	if got := h.sparkline(); got != Sparkline([]int64{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}) || len([]rune(got)) != lagSamples {
		t.Errorf("history %q", got)
	}
}

// TestTableLagSparkline: the table's lag trend follows LEO − HW as the
// events move them: one block per change, scaled to the window's largest
// lag; "-" while the high watermark is unknown.
func TestTableLagSparkline(t *testing.T) {
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	r := NewTable(w, false, func() int { return 200 })
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, s := range []struct{ leo, hw int64 }{{1, -1}, {1, 0}, {2, 0}, {3, 1}, {3, 3}} {
		ev := Event{Type: TypeLogEndOffset, Time: at.Add(time.Duration(i) * time.Second), Dir: "/d/orders-0", LogEndOffset: s.leo, HighWatermark: s.hw}
		if err := r.Event(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if !strings.Contains(out.String(), "LAG TREND") {
		t.Fatalf("no LAG TREND column:\n%s", out.String())
	}
	var row string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "orders-0") {
			row = l
		}
	}
	// lags 1, 2, 2, 0 (the first event has no high watermark)
	if !strings.Contains(row, "│ ▂██▁ ") {
		t.Errorf("row %q, want the lag trend ▂██▁", row)
	}
}

package report

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// needChromium finds Debian's chromium (or another Chrome): under CI
// (.ci/run installs it) a missing browser fails the test, elsewhere it
// skips it.
func needChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is required under CI (.ci/run installs it)")
	}
	t.Skip("chromium not available")
	return ""
}

// artifactDir is where CI keeps the screenshot: $KLOG_ARTIFACTS, else
// .ci/artifacts at the module root ("" outside CI).
func artifactDir() string {
	if d := os.Getenv("KLOG_ARTIFACTS"); d != "" {
		return d
	}
	if os.Getenv("CI") == "true" {
		return filepath.Join("..", ".ci", "artifacts")
	}
	return ""
}

// browserLog collects what the page must not do: console errors,
// exceptions, error log entries, and any request but the page itself.
type browserLog struct {
	mu       sync.Mutex
	page     string
	errors   []string
	requests []string
}

func (b *browserLog) listen(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range e.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			b.errors = append(b.errors, "console."+string(e.Type)+": "+strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		b.errors = append(b.errors, "exception: "+e.ExceptionDetails.Text+" "+fmt.Sprint(e.ExceptionDetails.Exception))
	case *cdplog.EventEntryAdded:
		if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
			b.errors = append(b.errors, "log: "+e.Entry.Text+" "+e.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		if e.Request.URL != b.page {
			b.requests = append(b.requests, e.Request.URL)
		}
	}
}

// TestReportInBrowser loads the report of two brokers' disks in headless
// Chromium with the network offline: no console error, no request but the
// file itself, and every chart holds the points the JSON holds (read back
// from the DOM: the hours, each partition's segments, hours and retention
// verdicts once opened, the groups' lag, the what-if codecs). A screenshot
// is kept (the test's temp dir; under CI the artifact directory too).
func TestReportInBrowser(t *testing.T) {
	chrome := needChromium(t)
	_, js := buildFixture(t)
	var rep Report
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	if err := WriteFile(out, &rep); err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1100, 900),
		// Nothing may leave: no proxy reachable, no name resolves.
		chromedp.ProxyServer("127.0.0.1:9"), chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ctx, cancelA := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelA()
	ctx, cancelB := chromedp.NewContext(ctx)
	defer cancelB()
	bl := &browserLog{page: "file://" + out}
	if err := chromedp.Listen(ctx, bl.listen); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(bl.page), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`))); err != nil {
		t.Fatal(err)
	}

	// The hour chart: one bar per hour, its bytes and records.
	var hours [][3]string
	evalJS(t, ctx, `Array.from(document.querySelectorAll("#hour-chart rect.hour")).map(r => [r.dataset.key, r.dataset.value, r.dataset.value2])`, &hours)
	if len(hours) != len(rep.Hours) || len(hours) == 0 {
		t.Fatalf("hour chart has %d bars, the JSON %d hours", len(hours), len(rep.Hours))
	}
	for i, h := range rep.Hours {
		if want := [3]string{itoa(h.HourMs), itoa(h.Bytes), itoa(h.Records)}; hours[i] != want {
			t.Errorf("hour bar %d: %v, JSON %v", i, hours[i], want)
		}
	}
	var rows int
	evalJS(t, ctx, `document.querySelectorAll("#parts tbody tr.part").length`, &rows)
	if rows != len(rep.Partitions) {
		t.Errorf("%d partition rows, JSON %d partitions", rows, len(rep.Partitions))
	}
	// Each partition, opened: its segments, hours and retention verdicts.
	for i, p := range rep.Partitions {
		sel := "#part-" + strconv.Itoa(i)
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)), chromedp.WaitVisible(chromedp.CSS("#detail-"+strconv.Itoa(i)))); err != nil {
			t.Fatal(err)
		}
		var segs [][4]string
		evalJS(t, ctx, `Array.from(document.querySelectorAll("#seg-chart-`+strconv.Itoa(i)+` rect.seg")).map(r => [r.dataset.base, r.dataset.last, r.dataset.size, r.dataset.maxTs])`, &segs)
		if len(segs) != len(p.Segments) {
			t.Errorf("%s-%d: %d segment boxes, JSON %d segments", p.Topic, p.Partition, len(segs), len(p.Segments))
		}
		for j := 0; j < len(segs) && j < len(p.Segments); j++ {
			s := p.Segments[j]
			if want := [4]string{itoa(s.BaseOffset), itoa(s.LastOffset), itoa(s.SizeBytes), itoa(s.MaxTimestamp)}; segs[j] != want {
				t.Errorf("%s-%d segment %d: %v, JSON %v", p.Topic, p.Partition, j, segs[j], want)
			}
		}
		var ph [][3]string
		evalJS(t, ctx, `Array.from(document.querySelectorAll("#hour-chart-`+strconv.Itoa(i)+` rect.hour")).map(r => [r.dataset.key, r.dataset.value, r.dataset.value2])`, &ph)
		if len(ph) != len(p.Hours) {
			t.Errorf("%s-%d: %d hour bars, JSON %d hours", p.Topic, p.Partition, len(ph), len(p.Hours))
		}
		for j := 0; j < len(ph) && j < len(p.Hours); j++ {
			h := p.Hours[j]
			if want := [3]string{itoa(h.HourMs), itoa(h.Bytes), itoa(h.Records)}; ph[j] != want {
				t.Errorf("%s-%d hour %d: %v, JSON %v", p.Topic, p.Partition, j, ph[j], want)
			}
		}
		var ret [][4]string
		evalJS(t, ctx, `Array.from(document.querySelectorAll("#ret-chart-`+strconv.Itoa(i)+` circle.ret")).map(r => [r.dataset.base, r.dataset.deletable, r.dataset.deletableAt, r.dataset.why])`, &ret)
		if len(ret) != len(p.Retention) {
			t.Errorf("%s-%d: %d retention marks, JSON %d verdicts", p.Topic, p.Partition, len(ret), len(p.Retention))
		}
		for j := 0; j < len(ret) && j < len(p.Retention); j++ {
			r := p.Retention[j]
			del, at, why := "0", "-1", r.HeldBy
			if r.Deletable {
				del, why = "1", *r.Reason
			}
			if r.DeletableAt != nil {
				at = itoa(*r.DeletableAt)
			}
			if want := [4]string{itoa(r.BaseOffset), del, at, why}; ret[j] != want {
				t.Errorf("%s-%d retention %d: %v, JSON %v", p.Topic, p.Partition, j, ret[j], want)
			}
		}
	}
	// The groups' lag and the what-if codecs.
	var lag [][2]string
	evalJS(t, ctx, `Array.from(document.querySelectorAll("#lag-chart rect.bar")).map(r => [r.dataset.key, r.dataset.value])`, &lag)
	var want [][2]string
	for _, g := range rep.Groups.Groups {
		for _, o := range g.Offsets {
			if o.Lag != nil {
				want = append(want, [2]string{g.GroupID + " " + o.Topic + "-" + strconv.Itoa(int(o.Partition)), itoa(*o.Lag)})
			}
		}
	}
	if fmt.Sprint(lag) != fmt.Sprint(want) {
		t.Errorf("lag chart %v, JSON %v", lag, want)
	}
	var codecs [][2]string
	evalJS(t, ctx, `Array.from(document.querySelectorAll("#whatif-chart rect.bar")).map(r => [r.dataset.key, r.dataset.value])`, &codecs)
	wantC := [][2]string{{"today", itoa(rep.WhatIf.TodayBytes)}}
	for _, c := range rep.WhatIf.Codecs {
		wantC = append(wantC, [2]string{c.Codec, itoa(c.StoredBytes)})
	}
	if fmt.Sprint(codecs) != fmt.Sprint(wantC) {
		t.Errorf("what-if chart %v, JSON %v", codecs, wantC)
	}
	var findings, divergence int
	evalJS(t, ctx, `document.querySelectorAll("#findings-table tbody tr").length`, &findings)
	evalJS(t, ctx, `document.querySelectorAll("#divergence-table tbody tr").length`, &divergence)
	if findings != len(rep.Findings) || divergence != len(rep.Divergence[0].Report.Replicas) {
		t.Errorf("%d finding rows (JSON %d), %d divergence rows (JSON %d replicas)", findings, len(rep.Findings), divergence, len(rep.Divergence[0].Report.Replicas))
	}

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(filepath.Dir(out), "report.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if d := artifactDir(); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "report.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", filepath.Join(d, "report.png"))
	}
	bl.mu.Lock()
	defer bl.mu.Unlock()
	if len(bl.errors) > 0 {
		t.Errorf("console errors: %q", bl.errors)
	}
	if len(bl.requests) > 0 {
		t.Errorf("network requests: %q", bl.requests)
	}
}

func evalJS[T any](t *testing.T, ctx context.Context, expr string, out *T) {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	*out = v
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

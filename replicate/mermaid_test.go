package replicate

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var updateMermaid = flag.Bool("update-mermaid", false, "rewrite the mermaid goldens (review them before committing)")

// mermaidRun runs a scenario on the virtual clock (as klog replicate
// --step does) and returns the diagram and the run's RPCs.
func mermaidRun(t *testing.T, preload int, sc Scenario) (string, []RPC) {
	t.Helper()
	cl := newCluster(t, Config{Tick: 10 * time.Millisecond, ReplicaLagTimeMax: 30 * time.Second, ProduceTimeout: 30 * time.Second})
	if err := cl.Preload(preload); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Run(context.Background(), sc); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := cl.WriteMermaid(&b, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	return b.String(), cl.RPCs()
}

var mermaidCases = []struct {
	name    string
	preload int
	sc      Scenario
}{
	// The README's run: one record, acks=all, a consumer that commits.
	{"consumer", 2, Scenario{Records: 1, Acks: AcksAll, Group: "g", CrashLeaderAt: -1}},
	// acks=1, then the leader crashes and follower A is elected.
	{"crash", 1, Scenario{Records: 2, Acks: AcksLeader, CrashLeaderAt: 2}},
}

// TestMermaidGolden: the diagrams of two runs, against goldens read and
// checked by hand against the RPC log (go test -update-mermaid rewrites
// them).
func TestMermaidGolden(t *testing.T) {
	for _, c := range mermaidCases {
		t.Run(c.name, func(t *testing.T) {
			got, _ := mermaidRun(t, c.preload, c.sc)
			golden := filepath.Join("testdata", "mermaid", c.name+".mmd")
			if *updateMermaid {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("diagram differs from %s:\n%s", golden, got)
			}
		})
	}
}

var (
	participantLine = regexp.MustCompile(`^    participant ([A-Z][0-9]*) as [a-z0-9 ()A-Z]+$`)
	noteLine        = regexp.MustCompile(`^    Note over ([A-Z][0-9]*)(?:,([A-Z][0-9]*))?: [^;#]+$`)
	messageLine     = regexp.MustCompile(`^    ([A-Z][0-9]*)(->>|-->>)([A-Z][0-9]*): ([A-Za-z]+)( [^;#]*)?$`)
	hwText          = regexp.MustCompile(`HW=(\d+)`)
)

// TestMermaidStructure: every line is a sequence diagram statement over
// declared participants; every request is answered by its addressee; the
// high watermarks the FetchResponses carry are the RPC log's, in order.
func TestMermaidStructure(t *testing.T) {
	for _, c := range mermaidCases {
		t.Run(c.name, func(t *testing.T) {
			got, rpcs := mermaidRun(t, c.preload, c.sc)
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			if lines[0] != "sequenceDiagram" {
				t.Fatalf("first line %q", lines[0])
			}
			declared := map[string]bool{}
			open := map[string]int{} // "from>to:Kind" requests not yet answered
			var hws []string
			for _, l := range lines[1:] {
				switch {
				case participantLine.MatchString(l):
					declared[participantLine.FindStringSubmatch(l)[1]] = true
				case noteLine.MatchString(l):
					for _, p := range noteLine.FindStringSubmatch(l)[1:] {
						if p != "" && !declared[p] {
							t.Errorf("note over undeclared %s: %q", p, l)
						}
					}
				case messageLine.MatchString(l):
					m := messageLine.FindStringSubmatch(l)
					from, arrow, to, kind := m[1], m[2], m[3], m[4]
					if !declared[from] || !declared[to] {
						t.Errorf("undeclared participant: %q", l)
					}
					if arrow == "->>" {
						open[from+">"+to+":"+kind]++
						continue
					}
					req := to + ">" + from + ":" + strings.TrimSuffix(kind, "Response") + "Request"
					if kind == "OffsetCommitResponse" {
						req = to + ">" + from + ":OffsetCommit"
					}
					if open[req] == 0 {
						t.Errorf("a response to no request: %q", l)
					}
					open[req]--
					if kind == "FetchResponse" {
						hws = append(hws, hwText.FindStringSubmatch(l)[1])
					}
				default:
					t.Errorf("not a statement: %q", l)
				}
			}
			for k, n := range open {
				if n != 0 && !strings.HasSuffix(k, ":ProduceRequest") {
					t.Errorf("%d unanswered %s", n, k)
				}
			}
			var want []string
			for _, r := range rpcs {
				if r.APIKeyName == "FETCH" {
					hw, _ := first(jsonMap(r.Response), "responses")["highWatermark"].(float64)
					want = append(want, strconv.FormatFloat(hw, 'f', -1, 64))
				}
			}
			if strings.Join(hws, ",") != strings.Join(want, ",") {
				t.Errorf("FetchResponses drawn with HW %v, the RPC log has %v", hws, want)
			}
		})
	}
}

// TestMermaidParses: mermaid itself (the npm package, pinned by
// testdata/mermaid/package-lock.json and installed by .ci/run with npm
// ci) parses the diagrams, loaded from disk into headless Chromium with
// nothing fetched.
func TestMermaidParses(t *testing.T) {
	lib, _ := filepath.Abs(filepath.Join("testdata", "mermaid", "node_modules", "mermaid", "dist", "mermaid.min.js"))
	chrome := ""
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			chrome = p
			break
		}
	}
	if _, err := os.Stat(lib); err != nil || chrome == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("under CI chromium and %s are needed (.ci/run installs them): %v", lib, err)
		}
		t.Skipf("chromium or mermaid not installed (%v)", err)
	}
	page := filepath.Join(t.TempDir(), "parse.html")
	if err := os.WriteFile(page, []byte(`<!DOCTYPE html><meta charset="utf-8"><script src="file://`+lib+`"></script><body></body>`), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()),
		chromedp.ProxyServer("127.0.0.1:9"), chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"), chromedp.Flag("allow-file-access-from-files", true))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ctx, cancelA := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelA()
	ctx, cancelB := chromedp.NewContext(ctx)
	defer cancelB()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page)); err != nil {
		t.Fatal(err)
	}
	for _, c := range mermaidCases {
		got, _ := mermaidRun(t, c.preload, c.sc)
		js, _ := json.Marshal(got)
		res, err := chromedp.Run(ctx, chromedp.Evaluate[string](`mermaid.parse(`+string(js)+`).then(r => r.diagramType, e => "error: " + e.message)`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		if res != "sequence" {
			t.Errorf("%s: mermaid.parse: %s\n%s", c.name, res, got)
		}
	}
}

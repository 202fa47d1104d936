package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/klog-dev/klog/internal/hostile"
	"github.com/klog-dev/klog/internal/jsoncontract"
)

// maxRSS is the memory promise of every reading command (README).
const maxRSS = 256 << 20

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// binDir holds the klog binary built for the tests that run it as a
// process; TestMain removes it.
var binDir string

// klogBinary builds the klog command once per test run, for every test
// that runs it as a process (building it is the most expensive step of
// cmd/klog's tests). The directory is
// world-readable: the binary may run as nobody.
func klogBinary(t *testing.T, _ string) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "klog-bin-")
		if buildErr != nil {
			return
		}
		os.Chmod(binDir, 0o755)
		builtBin = filepath.Join(binDir, "klog")
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
		}
		out, err := exec.Command(goTool, "build", "-o", builtBin, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building klog: %v", buildErr)
	}
	return builtBin
}

// runResult is one run of the klog binary.
type runResult struct {
	kinds  map[string]bool // problem kinds seen in JSON output
	code   int
	rss    int64 // peak resident set, bytes
	stdout string
	stderr string
	took   time.Duration
}

// rssHelper measures a klog run's peak RSS (TestMain, in script_test.go,
// runs it when KLOG_RSS_HELPER is set): Linux carries a process's pre-exec
// high-water mark into the RSS of what it execs (and os/exec starts
// children sharing the parent's memory), so a child of the big test
// process would report the test's own peak. A small helper process
// starting klog reports klog's peak alone.
func rssHelper(out string, args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if os.Getuid() == 0 {
		// As root, run as nobody: unreadable directories are then
		// unreadable (root reads through mode 000).
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		os.Stderr.WriteString("rss helper: " + err.Error() + "\n")
		return 99
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss * 1024 // kilobytes on Linux
	}
	os.WriteFile(out, []byte(strconv.FormatInt(rss, 10)), 0o644)
	return cmd.ProcessState.ExitCode()
}

// runKlog runs the binary through the RSS helper, with a deadline.
func runKlog(t *testing.T, bin string, dir string, args ...string) runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rssFile := filepath.Join(dir, "rss-"+strconv.FormatInt(rssFiles.Add(1), 10))
	defer os.Remove(rssFile)
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{bin}, args...)...)
	cmd.Env = append(os.Environ(), "KLOG_RSS_HELPER="+rssFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	outF, err := os.CreateTemp(dir, "stdout-*")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(outF.Name())
	defer outF.Close()
	var errb strings.Builder
	cmd.Stdout, cmd.Stderr = outF, &errb
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("klog %s: did not finish within 90s (hang)", strings.Join(args, " "))
	}
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("klog %s: %v", strings.Join(args, " "), err)
		}
	}
	r := runResult{code: cmd.ProcessState.ExitCode(), stderr: errb.String(), took: took}
	if r.code == 99 {
		t.Fatalf("klog %s: %s", strings.Join(args, " "), r.stderr)
	}
	data, err := os.ReadFile(rssFile)
	if err != nil {
		t.Fatalf("klog %s: no RSS measured: %v", strings.Join(args, " "), err)
	}
	r.rss, _ = strconv.ParseInt(string(data), 10, 64)
	// Keep only the head of stdout in memory; check JSON line by line.
	outF.Seek(0, 0)
	br := bufio.NewReaderSize(outF, 1<<20)
	var head strings.Builder
	validated := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if head.Len() < 1<<16 {
				head.Write(line[:min(len(line), 4096)])
			}
			if jsonArgs(args) && (!json.Valid(line) || line[0] != '{') {
				t.Errorf("klog %s: stdout line is not a JSON object: %.200q", strings.Join(args, " "), line)
				break
			}
			// Schema-valid too: the first lines (a bomb prints millions
			// of records) up to 1 MiB (a fetch of them is one line,
			// checked as JSON above).
			if validated++; jsonArgs(args) && validated <= 200 && len(line) <= 1<<20 {
				if err := jsoncontract.Line(line); err != nil {
					t.Errorf("klog %s: stdout line is not in the schema: %v: %.200q", strings.Join(args, " "), err, line)
					break
				}
			}
			for _, m := range kindRE.FindAllSubmatch(line, -1) {
				if k := string(m[1]); !fileKinds[k] {
					if r.kinds == nil {
						r.kinds = map[string]bool{}
					}
					r.kinds[k] = true
				}
			}
		}
		if err != nil {
			break
		}
	}
	r.stdout = head.String()
	return r
}

// rssFiles numbers the RSS helpers' files: runs may be concurrent.
var rssFiles atomic.Int64

var kindRE = regexp.MustCompile(`"kind":"([a-z-]+)"`)

// fileKinds are verify's file kinds, not problem kinds.
var fileKinds = map[string]bool{"log": true, "index": true, "timeindex": true, "txnindex": true, "snapshot": true, "checkpoint": true,
	"leader-epoch-checkpoint": true, "offset-checkpoint": true, "partition-metadata": true, "skipped": true, "unknown": true,
	"directory": true, "error": true, "misnamed": true}

func jsonArgs(args []string) bool {
	for _, a := range args {
		if a == "--json" {
			return true
		}
	}
	return false
}

// TestHostileCorpus runs the reading commands over every hostile input: no
// panic, no hang, peak RSS under 256 MiB, valid JSON, a documented exit
// code, and never "ok" (exit 0) from verify on corrupt data. Every command
// runs in .ci/run (CI=true) or with KLOG_HOSTILE=full; go test ./...
// elsewhere runs the small form (hostileFull).
func TestHostileCorpus(t *testing.T) {
	root, err := os.MkdirTemp("", "klog-hostile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(root)
	})
	// The commands may run as nobody: everything but the unreadable
	// directories must stay readable.
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := klogBinary(t, root)
	full := hostileFull()
	sizes := hostile.Small
	if full {
		sizes = hostile.Full
	}
	cases, err := hostile.BuildSized(filepath.Join(root, "corpus"), sizes)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(root, "corpus"), 0o755)
	// A replica holding nothing: diff --records against it lists (and
	// decodes) every batch of the hostile one.
	emptyReplica := filepath.Join(root, "empty", "topic-0")
	if err := os.MkdirAll(emptyReplica, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(root, "empty"), 0o755)
	// Where redact writes its copies, writable by the user the commands
	// run as (nobody, when the test runs as root: before, every redact of
	// the corpus failed on permissions and read nothing).
	outDir := filepath.Join(root, "out")
	if err := os.Mkdir(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(outDir, 0o777)
	// The cases are independent: in the small form up to four run at
	// once (each command's RSS is its own), so that the seconds each case
	// spends waiting (tail's --timeout) overlap; t.Run from several
	// goroutines, not t.Parallel, whose -parallel is GOMAXPROCS (two on a
	// 2-core machine). The full form's text dumps of 2 GiB files would
	// contend for the disk and CPU against each command's 90 s deadline:
	// its cases run one at a time.
	njobs := 4
	if full {
		njobs = 1
	}
	var wg sync.WaitGroup
	jobs := make(chan struct{}, njobs)
	defer wg.Wait()
	for _, c := range cases {
		wg.Add(1)
		jobs <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-jobs }()
			runHostileCase(t, c, bin, root, outDir, emptyReplica, full)
		}()
	}
}

// runHostileCase runs the reading commands over one hostile case (see
// TestHostileCorpus).
func runHostileCase(t *testing.T, c hostile.Case, bin, root, outDir, emptyReplica string, full bool) {
	t.Run(c.Name, func(t *testing.T) {
		p := c.Dir
		// The small form (go test ./... off CI) runs every case
		// through the commands that judge the bytes differently;
		// the full form adds the text dumps (minutes over the 2 GiB
		// sparse indexes), verify's many jobs and the views that
		// read what the others read.
		commands := [][]string{
			{"verify", "--json", p},
			{"dump", "--json", "--deep-iteration", p},
			{"stats", "--json", p},
			{"stats", "--what-if", "none,gzip,snappy,lz4,zstd", "--json", p},
			{"segments", "--json", p},
			{"offsets", p},
			{"tail", "--from-beginning", "--timeout", "1s", "--json", p},
		}
		if full {
			commands = append(commands,
				[]string{"verify", "--jobs", "16", p},
				[]string{"dump", p},
				[]string{"dump", "--deep-iteration", p})
		}
		if !c.LogDir {
			commands = append(commands,
				[]string{"fetch", "--log", p, "--offset", "0", "--json"},
				[]string{"recover", "--json", p},
			)
		}
		if !c.LogDir && full {
			commands = append(commands,
				[]string{"find", "--offset", "0", "--json", p},
				[]string{"retention", "--json", p},
				[]string{"diff", "--json", p, p},
				[]string{"diff", "--records", "--json", p, emptyReplica},
				[]string{"redact", "--json", "--output", filepath.Join(outDir, "redacted-"+c.Name), p},
			)
		}
		kinds := map[string]map[string]bool{}
		for _, args := range commands {
			r := runKlog(t, bin, root, args...)
			if jsonArgs(args) {
				kinds[args[0]] = r.kinds
			}
			name := "klog " + strings.Join(args, " ")
			t.Logf("%s: exit %d, %d MiB, %v", name, r.code, r.rss>>20, r.took.Round(time.Millisecond))
			for _, bad := range []string{"panic:", "fatal error:", "goroutine "} {
				if strings.Contains(r.stderr, bad) {
					t.Errorf("%s: crashed:\n%.2000s", name, r.stderr)
				}
			}
			if r.code < 0 || r.code > 2 {
				t.Errorf("%s: exit %d, not a documented code\n%.1000s", name, r.code, r.stderr)
			}
			if r.rss > maxRSS {
				t.Errorf("%s: peak RSS %d MiB, over the 256 MiB promise", name, r.rss>>20)
			}
			if args[0] == "redact" && r.code == ExitTrouble {
				// Every hostile partition can be copied: trouble here
				// means the copy did not run at all.
				t.Errorf("%s: exit 2: %.1000s", name, r.stderr)
			}
			if args[0] == "verify" && c.Corrupt && r.code == 0 {
				t.Errorf("%s: exit 0 on corrupt input", name)
			}
			if c.Unreadable {
				// Unreadable directories are reported, the rest is
				// still read, and the run ends with exit 2.
				if r.code != ExitTrouble {
					t.Errorf("%s: exit %d with an unreadable directory, want 2\n%.1000s", name, r.code, r.stderr)
				}
				if !strings.Contains(r.stderr+r.stdout, "permission denied") {
					t.Errorf("%s: the unreadable directory is not reported:\n%.1000s", name, r.stderr)
				}
			}
		}
		// The same bytes get the same problem kinds: whatever dump,
		// stats, tail, segments or find reports, verify reports too.
		for _, cmd := range []string{"dump", "stats", "tail", "segments", "find"} {
			for k := range kinds[cmd] {
				if !kinds["verify"][k] {
					t.Errorf("%s reports %s, verify does not (verify: %v)", cmd, k, kinds["verify"])
				}
			}
		}
	})
}

// hostileFull says whether TestHostileCorpus runs every command (CI, or
// KLOG_HOSTILE=full) or its small form (hostile.Small: 512 MiB sparse
// files, four zstd bombs, no text dumps): the full corpus took 183 s on a
// loaded 2-core machine, most of it text dumps of 2 GiB sparse indexes.
func hostileFull() bool {
	return os.Getenv("CI") == "true" || os.Getenv("KLOG_HOSTILE") == "full"
}

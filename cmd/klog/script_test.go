package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as klog inside the scripts.
func TestMain(m *testing.M) {
	// Helper processes of hostile_test.go and edges_test.go.
	if out := os.Getenv("KLOG_RSS_HELPER"); out != "" {
		os.Exit(rssHelper(out, os.Args[1:]))
	}
	if p := os.Getenv("KLOG_LOCK_HELPER"); p != "" {
		os.Exit(lockHelper(p))
	}
	if p := os.Getenv("KLOG_TRYLOCK_PROBE"); p != "" {
		os.Exit(tryLockProbe(p))
	}
	testscript.Main(cleanupM{m}, map[string]func(){"klog": main})
}

// cleanupM removes the klog binary the process tests built, after the run.
type cleanupM struct{ m *testing.M }

func (c cleanupM) Run() int {
	code := c.m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	return code
}

// TestScripts runs the end-to-end suite in testdata/script: one script per
// command, checking what an operator types and sees: stdout, stderr and
// exit codes. $SEGMENTS is testdata/segments and $SCHEMAS the log dir of
// schema fixtures (schema/testdata/confluent), both read-only; scripts write
// under $WORK. -update rewrites the expected outputs in the scripts.
// "exitcode N klog ARGS..." runs klog like exec and checks its exit status
// is N (exec only tells zero from non-zero); "sleep D" waits a Go
// duration (a background klog serve sets up before it is signalled).
func TestScripts(t *testing.T) {
	seg, err := filepath.Abs("../../testdata/segments")
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := filepath.Abs("../../schema/testdata/confluent")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": scriptExitCode,
			"sleep":    scriptSleep,
		},
		UpdateScripts: *update,
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "ci": // tools missing in CI are failures, not skips
				return os.Getenv("CI") == "true", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("SEGMENTS", seg)
			env.Setenv("SCHEMAS", schemas)
			tiered, err := filepath.Abs(tieredFixtures)
			if err != nil {
				return err
			}
			env.Setenv("TIERED", tiered)
			env.Setenv("NO_COLOR", "")
			env.Setenv("TZ", "UTC")
			return nil
		},
	})
}

// scriptExitCode is the scripts' "exitcode N PROGRAM ARGS...".
func scriptExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: exitcode N PROGRAM [ARGS...] (no !)")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad status %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// scriptSleep is the scripts' "sleep DURATION".
func scriptSleep(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sleep DURATION")
	}
	d, err := time.ParseDuration(args[0])
	if err != nil {
		ts.Fatalf("sleep: %v", err)
	}
	time.Sleep(d)
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
// exit codes. $SEGMENTS is testdata/segments (read-only; scripts write
// under $WORK). -update rewrites the expected outputs in the scripts.
func TestScripts(t *testing.T) {
	seg, err := filepath.Abs("../../testdata/segments")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       *update,
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "ci": // tools missing in CI are failures, not skips
				return os.Getenv("CI") == "true", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("SEGMENTS", seg)
			env.Setenv("NO_COLOR", "")
			env.Setenv("TZ", "UTC")
			return nil
		},
	})
}

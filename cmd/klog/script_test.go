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
	testscript.Main(m, map[string]func(){"klog": main})
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

package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/klog-dev/klog/internal/jsoncontract"
)

// TestOneKindPerFinding runs verify, dump and stats over every corrupt
// generated segment: the kinds dump and stats report for a file must be
// among the kinds verify reports for it, as all three use verify.Classify.
func TestOneKindPerFinding(t *testing.T) {
	root := segments(t, "generated")
	des, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), "corrupt-") {
			continue
		}
		log := filepath.Join(root, de.Name(), "00000000000000000000.log")
		if _, err := os.Stat(log); err != nil {
			continue
		}
		t.Run(de.Name(), func(t *testing.T) {
			kindsOf := func(args ...string) map[string]bool {
				t.Helper()
				_, out, _ := klog(t, args...)
				objs, err := jsoncontract.Lines(out)
				if err != nil {
					t.Fatal(err)
				}
				ks := map[string]bool{}
				var visit func(v any)
				visit = func(v any) {
					switch v := v.(type) {
					case map[string]any:
						if k, ok := v["kind"].(string); ok && v["message"] != nil && v["info"] == nil {
							ks[k] = true
						}
						for _, e := range v {
							visit(e)
						}
					case []any:
						for _, e := range v {
							visit(e)
						}
					}
				}
				for _, o := range objs {
					visit(o)
				}
				return ks
			}
			want := kindsOf("verify", "--json", log)
			if len(want) == 0 {
				t.Skip("verify finds nothing")
			}
			for _, args := range [][]string{{"dump", "--json", "--deep-iteration", log}, {"stats", "--json", log}} {
				for k := range kindsOf(args...) {
					if !want[k] {
						t.Errorf("%s reports %q; verify reports %v", args[0], k, sorted(want))
					}
				}
			}
			checked++
		})
	}
	if checked < 8 {
		t.Fatalf("only %d corrupt segments checked", checked)
	}
}

func sorted(m map[string]bool) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

package main

import (
	"strings"
	"testing"
)

func TestVersionLines(t *testing.T) {
	cases := []struct {
		v    buildVersion
		want string
	}{
		{buildVersion{Version: "v1.2.3", Revision: "258d573a", Commit: "2026-12-01T16:50:43Z", Go: "go1.26.8", Platform: "linux/amd64"},
			"klog version v1.2.3\nrevision: 258d573a (committed 2026-12-01T16:50:43Z)\nbuilt: unknown (release builds record it)\ngo: go1.26.8 linux/amd64\n"},
		{buildVersion{Version: "1.2.3", Revision: "abc", Time: "2026-12-01T00:00:00Z", Go: "go1.26.8", Platform: "darwin/arm64"},
			"klog version 1.2.3\nrevision: abc\nbuilt: 2026-12-01T00:00:00Z\ngo: go1.26.8 darwin/arm64\n"},
		{buildVersion{Version: "0.1.0-dev", Go: "go1.26.8", Platform: "linux/amd64"},
			"klog version 0.1.0-dev\nrevision: unknown\nbuilt: unknown (release builds record it)\ngo: go1.26.8 linux/amd64\n"},
	}
	for _, c := range cases {
		var b strings.Builder
		c.v.write(&b)
		if b.String() != c.want {
			t.Errorf("got\n%s\nwant\n%s", b.String(), c.want)
		}
	}
	// The test binary: the Go version is this toolchain's.
	if v := readBuildVersion(); !strings.HasPrefix(v.Go, "go1.") || v.Version == "" {
		t.Errorf("readBuildVersion() = %+v", v)
	}
}

package serve_test

// The Python admin clients against an in-process `klog serve --writable`.
// An external test package: the lag the clients compute is compared with
// cluster.Groups over the served log dir (package cluster imports serve,
// so package serve's own tests cannot import it), an answer read from
// the files, not from serve's OffsetFetch or ListOffsets.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/klog-dev/klog/cluster"
	"github.com/klog-dev/klog/internal/verifytest"
	"github.com/klog-dev/klog/serve"
	"github.com/klog-dev/klog/verify"
)

// pyLine is one JSON line an admin script printed.
type pyLine map[string]any

// pyWant is what one call's lines must hold: each field's value as JSON
// decodes it, in every line of the call (the lag lines are checked
// against cluster.Groups instead).
type pyWant struct {
	call   string
	lines  int
	fields pyLine
}

// TestAdminPython: each Python admin client runs every admin call its
// library version offers (the scripts' headers list what they lack):
// topics created (validate_only creating nothing, a second create
// refused), partitions added, metadata, configs described and altered,
// groups listed and described with a live member, a group's lag, a
// group and a topic deleted. The lag each client computes per partition
// (its committed offset against the end offset it lists) equals
// cluster.Groups' over the log dir; the deletions and the new partitions
// are on disk, and the log dir verifies clean.
func TestAdminPython(t *testing.T) {
	for _, tc := range []struct {
		name, module, script string
		topic, gone, group   string
		deleted              string // a group the script deleted ("": none)
		want                 []pyWant
	}{
		{
			name: "kafka-python", module: "kafka", script: "kafka_python_admin.py",
			topic: "pyt", gone: "pydel", group: "pylag", deleted: "pydoomed",
			want: []pyWant{
				{"create_topics", 1, pyLine{"ok": true}},
				{"describe_topics", 1, pyLine{"partitions": 3.0, "error": 0.0}},
				{"list_topics", 1, pyLine{"has_pyt": true, "has_pydel": true}},
				{"describe_cluster", 1, pyLine{"brokers": 1.0, "controller": 0.0}},
				{"describe_configs", 2, nil},
				{"alter_configs", 1, pyLine{"retention_ms": "3600000"}},
				{"list_consumer_groups", 1, nil},
				{"describe_consumer_groups", 1, pyLine{"group": "pylag", "state": "Stable", "protocol_type": "consumer",
					"members": 1.0, "client_id": "py-member", "assigned": []any{0.0, 1.0, 2.0}}},
				{"lag", 3, nil},
				{"delete_consumer_groups", 1, pyLine{"results": map[string]any{"pydoomed": 0.0, "pynever": 69.0}}},
				{"delete_topics", 1, pyLine{"ok": true}},
			},
		},
		{
			name: "confluent-kafka", module: "confluent_kafka", script: "confluent_admin.py",
			topic: "cft", gone: "cfdel", group: "cflag",
			want: []pyWant{
				{"create_topics", 1, pyLine{"ok": true}},
				{"list_topics", 1, pyLine{"has_cft": true, "has_cfdel": true, "partitions": 3.0, "brokers": 1.0, "controller": 0.0}},
				{"describe_configs", 2, nil},
				{"alter_configs", 1, pyLine{"retention_ms": "3600000", "retention_default": false}},
				{"list_groups", 1, nil},
				{"describe_group", 1, pyLine{"group": "cflag", "state": "Stable", "protocol_type": "consumer",
					"members": 1.0, "client_id": "cf-member"}},
				{"lag", 3, nil},
				{"delete_topics", 1, pyLine{"ok": true}},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			py := pythonWith(t, tc.module)
			dir := t.TempDir()
			stop, addr := serveWritable(t, dir)
			lines := runPython(t, py, filepath.Join("testdata", "clients", tc.script), addr)
			stop()
			for _, l := range lines {
				t.Log(l)
			}
			byCall := map[string][]pyLine{}
			for _, l := range lines {
				c, _ := l["call"].(string)
				byCall[c] = append(byCall[c], l)
			}
			for _, w := range tc.want {
				got := byCall[w.call]
				if len(got) != w.lines {
					t.Errorf("%s: %d lines, want %d: %v", w.call, len(got), w.lines, got)
					continue
				}
				for _, l := range got {
					for k, v := range w.fields {
						if !reflect.DeepEqual(l[k], v) {
							t.Errorf("%s: %s = %#v, want %#v (line %v)", w.call, k, l[k], v, l)
						}
					}
				}
			}
			checkConfigLines(t, tc.topic, byCall["describe_configs"])
			checkGroupListed(t, tc.group, byCall)
			checkLag(t, dir, tc.group, tc.deleted, byCall["lag"])
			for n := 0; n < 3; n++ {
				pd := filepath.Join(dir, tc.topic+"-"+string(rune('0'+n)))
				if _, err := os.Stat(filepath.Join(pd, "partition.metadata")); err != nil {
					t.Errorf("partition %d of %s: %v", n, tc.topic, err)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, tc.gone+"-0")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("deleted topic %s: %s-0 still there (%v)", tc.gone, tc.gone, err)
			}
			verifyDir(t, dir)
		})
	}
}

// checkConfigLines: the topic's configs are Kafka's defaults before the
// alteration (retention.ms 7 days, cleanup.policy delete), and the broker
// has configs.
func checkConfigLines(t *testing.T, topic string, lines []pyLine) {
	t.Helper()
	for _, l := range lines {
		if n, _ := l["configs"].(float64); n == 0 {
			t.Errorf("describe_configs %v: no configs", l)
		}
		if l["name"] != topic {
			continue
		}
		if l["retention_ms"] != "604800000" || l["cleanup_policy"] != "delete" {
			t.Errorf("describe_configs of %s: %v, want Kafka's defaults", topic, l)
		}
		if d, ok := l["retention_default"]; ok && d != true {
			t.Errorf("describe_configs of %s: retention.ms not reported as a default: %v", topic, l)
		}
	}
}

// checkGroupListed: the group is listed as a consumer group (kafka-python
// prints [id, protocol type] pairs under list_consumer_groups, confluent
// under list_groups).
func checkGroupListed(t *testing.T, group string, byCall map[string][]pyLine) {
	t.Helper()
	for _, call := range []string{"list_consumer_groups", "list_groups"} {
		for _, l := range byCall[call] {
			gs, _ := l["groups"].([]any)
			found := false
			for _, g := range gs {
				if reflect.DeepEqual(g, []any{group, "consumer"}) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: %v, want [%s consumer] among them", call, gs, group)
			}
		}
	}
}

// checkLag compares the client's lag lines with cluster.Groups over the
// log dir: partition 0 committed at its end (lag 0), partition 1 at 2
// (lag 3), partition 2 not committed (no offset, no lag); every end
// offset is the 5 records produced. A deleted group has no offsets.
func checkLag(t *testing.T, dir, group, deleted string, lines []pyLine) {
	t.Helper()
	lds, err := cluster.Discover([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := cluster.Groups(context.Background(), lds, cluster.GroupsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	klog := map[int32]*cluster.Offset{}
	for _, g := range rep.Groups {
		if g.GroupID == deleted && len(g.Offsets) > 0 {
			t.Errorf("deleted group %s has offsets %v", deleted, g.Offsets)
		}
		if g.GroupID != group {
			continue
		}
		for _, o := range g.Offsets {
			klog[o.Partition] = o
		}
	}
	wantLag := map[int32]any{0: 0.0, 1: 3.0, 2: nil}
	for _, l := range lines {
		p := int32(l["partition"].(float64))
		if l["end"] != 5.0 {
			t.Errorf("lag line %v: end offset, want 5", l)
		}
		if l["lag"] != wantLag[p] {
			t.Errorf("lag line %v: lag, want %v", l, wantLag[p])
		}
		o := klog[p]
		switch {
		case o == nil && l["committed"] != nil:
			t.Errorf("partition %d: the client has offset %v committed, klog none", p, l["committed"])
		case o == nil:
		case o.Lag == nil || o.LogEndOffset == nil:
			t.Errorf("partition %d: klog has no lag: %+v", p, o)
		case l["committed"] != float64(o.Offset) || l["end"] != float64(*o.LogEndOffset) || l["lag"] != float64(*o.Lag):
			t.Errorf("partition %d: client committed %v end %v lag %v; klog %d %d %d", p,
				l["committed"], l["end"], l["lag"], o.Offset, *o.LogEndOffset, *o.Lag)
		}
		delete(klog, p)
	}
	for p, o := range klog {
		t.Errorf("klog has group %s's partition %d (%+v), the client printed no lag for it", group, p, o)
	}
}

// pythonWith is /usr/bin/python3 when it imports module (Debian's
// packages, installed by .ci/run: required under CI, else a skip).
func pythonWith(t *testing.T, module string) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import "+module).Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s with %s is required under CI (.ci/run installs it): %v", py, module, err)
		}
		t.Skipf("%s with %s not available: %v", py, module, err)
	}
	return py
}

// serveWritable serves dir writable on 127.0.0.1:0; stop shuts it down
// (the cleanup does too if the test did not).
func serveWritable(t *testing.T, dir string) (stop func(), addr string) {
	t.Helper()
	s, err := serve.New(serve.Config{LogDir: dir, Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; !errors.Is(err, serve.ErrServerClosed) {
			t.Errorf("serve: %v, want ErrServerClosed", err)
		}
	}
	t.Cleanup(stop)
	return stop, ln.Addr().String()
}

// runPython runs a script and decodes its JSON lines; a nonzero exit
// fails the test with its output.
func runPython(t *testing.T, py, script string, args ...string) []pyLine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, append([]string{script}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", script, err, out.String(), errb.String())
	}
	var lines []pyLine
	dec := json.NewDecoder(&out)
	for dec.More() {
		var l pyLine
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("%s: %v\nstdout:\n%s", script, err, out.String())
		}
		lines = append(lines, l)
	}
	return lines
}

// verifyDir: klog verify of the log dir finds nothing but information.
func verifyDir(t *testing.T, dir string) {
	t.Helper()
	rep, err := verifytest.Run(context.Background(), []string{dir}, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Files {
		if f.Err != "" {
			t.Errorf("verify: %s: %s", f.Path, f.Err)
		}
		for _, p := range f.Problems {
			if !p.Info {
				t.Errorf("verify: %s: %s at %d (offset %d): %s", f.Path, p.Kind, p.Position, p.Offset, p.Message)
			}
		}
	}
}

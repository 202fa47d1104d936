package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/internal/klogtest"
)

// replayFolder is a folder of three broker folders (meta.properties with
// node.id 1, 2, 3): orders-0 on brokers 1 and 2, orders-1 on 2 and 3,
// orders-2 on 3 only, each a copy of the v2-none fixture.
func replayFolder(t *testing.T) string {
	root := t.TempDir()
	src := segments(t, "kafka-written", "v2-none")
	for b, parts := range map[int][]int{1: {0}, 2: {0, 1}, 3: {1, 2}} {
		ld := filepath.Join(root, "broker-"+strconv.Itoa(b))
		if err := os.MkdirAll(ld, 0o755); err != nil {
			t.Fatal(err)
		}
		props := "version=1\ncluster.id=replay-test\nnode.id=" + strconv.Itoa(b) + "\n"
		if err := os.WriteFile(filepath.Join(ld, "meta.properties"), []byte(props), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			klogtest.CopyPartition(t, src, filepath.Join(ld, "orders-"+strconv.Itoa(p)))
		}
	}
	return root
}

// TestServeReplay: `klog serve --log-dir FOLDER` over a folder of three
// broker folders serves each broker on its own listener; kcat -L through
// any of them sees the three brokers and each partition's leader and
// replicas; stderr says how leaders were chosen.
func TestServeReplay(t *testing.T) {
	kcat := needKcat(t)
	root := replayFolder(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"klog", "serve", "--log-dir", root, "--listen", "127.0.0.1:0", "--state", t.TempDir()},
			strings.NewReader(""), &bytes.Buffer{}, &stderr)
	}()
	if stderr.waitMatch(regexp.MustCompile(`3 brokers \(read-only`)) == nil {
		t.Fatalf("serve did not start: %s", stderr.String())
	}
	addrs := map[string]string{}
	for _, m := range regexp.MustCompile(`broker (\d) \([^)]*\) on (127\.0\.0\.1:\d+)`).FindAllStringSubmatch(stderr.String(), -1) {
		addrs[m[1]] = m[2]
	}
	if len(addrs) != 3 || !strings.Contains(stderr.String(), "no __cluster_metadata on these disks") {
		t.Fatalf("stderr: %s", stderr.String())
	}
	out, err := exec.Command(kcat, "-b", addrs["3"], "-L", "-J", "-m", "10").Output()
	if err != nil {
		t.Fatalf("kcat -L: %v", err)
	}
	var md struct {
		Brokers []struct {
			ID   int    `json:"id"`
			Name string `json:"name"`
		} `json:"brokers"`
		Topics []struct {
			Topic      string `json:"topic"`
			Partitions []struct {
				Partition int `json:"partition"`
				Leader    int `json:"leader"`
				Replicas  []struct {
					ID int `json:"id"`
				} `json:"replicas"`
			} `json:"partitions"`
		} `json:"topics"`
	}
	if err := json.Unmarshal(out, &md); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var got []string
	for _, b := range md.Brokers {
		got = append(got, "broker "+strconv.Itoa(b.ID)+" "+strconv.FormatBool(b.Name == addrs[strconv.Itoa(b.ID)]))
	}
	sort.Strings(got)
	for _, tp := range md.Topics {
		for _, p := range tp.Partitions {
			var rs []string
			for _, r := range p.Replicas {
				rs = append(rs, strconv.Itoa(r.ID))
			}
			got = append(got, tp.Topic+"-"+strconv.Itoa(p.Partition)+" leader "+strconv.Itoa(p.Leader)+" replicas "+strings.Join(rs, ","))
		}
	}
	want := "broker 1 true; broker 2 true; broker 3 true; orders-0 leader 1 replicas 1,2; orders-1 leader 2 replicas 2,3; orders-2 leader 3 replicas 3"
	if strings.Join(got, "; ") != want {
		t.Errorf("kcat -L:\n got %s\nwant %s", strings.Join(got, "; "), want)
	}
	// Every partition reads through its leader: 59 records each.
	for p := 0; p < 3; p++ {
		out, err := exec.Command(kcat, "-b", addrs["1"], "-C", "-t", "orders", "-p", strconv.Itoa(p), "-o", "beginning", "-e", "-q", "-f", "%o\n").Output()
		if err != nil || bytes.Count(out, []byte("\n")) != 59 {
			t.Errorf("kcat -C orders-%d: %v, %d records", p, err, bytes.Count(out, []byte("\n")))
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK || !strings.Contains(stderr.String(), "klog: serve: stopped") {
			t.Fatalf("exit %d, stderr %s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// TestServeReplayUsage: what a replay cannot do is a usage error.
func TestServeReplayUsage(t *testing.T) {
	root := replayFolder(t)
	b1, b2 := filepath.Join(root, "broker-1"), filepath.Join(root, "broker-2")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--log-dir", b1, "--log-dir", b2, "--writable"}, "--writable serves one log dir"},
		{[]string{"--log-dir", root, "--advertise", "h:1"}, "--advertise serves one log dir"},
		{[]string{"--log-dir", root, "--broker-ports", "1,2"}, "lists 2 ports for 3 brokers"},
		{[]string{"--log-dir", root, "--broker-ports", "1,x,3"}, "bad port"},
		{[]string{"--log-dir", b1, "--broker-ports", "1"}, "--broker-ports is for several"},
	} {
		code, _, errs := klog(t, append([]string{"serve", "--state", t.TempDir()}, c.args...)...)
		if code != ExitTrouble || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}

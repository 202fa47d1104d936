package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/serve"
)

// TestFormatStringsMatchKcat: klog fetch --consumer, tail, dump and find
// print, for a kcat -f format string, exactly what kcat prints reading the
// same partitions through klog serve: transactions (aborted records and
// markers, at both isolation levels for fetch, whose consumer view is what
// kcat gets), compression, headers, null keys and values (-Z).
func TestFormatStringsMatchKcat(t *testing.T) {
	kcatBin, err := exec.LookPath("kcat")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kcat is required under CI (.ci/run installs it): %v", err)
		}
		t.Skip("kcat not installed")
	}
	logDir := t.TempDir()
	topics := map[string]string{"payments": "v2-transactions", "orders": "v2-none", "zipped": "v2-gzip", "producer": "unifiedlog-producer/topic-0"}
	var cp []format.OffsetEntry
	records := map[string]int{} // topic+isolation: how many records kcat reads
	for topic, fixture := range topics {
		dst := filepath.Join(logDir, topic+"-0")
		klogtest.CopyPartition(t, segments(t, append([]string{"kafka-written"}, strings.Split(fixture, "/")...)...), dst)
		l, err := partition.OpenLog(dst, partition.LogOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cp = append(cp, format.OffsetEntry{Topic: topic, Partition: 0, Offset: l.LogEndOffset()})
	}
	if err := os.WriteFile(filepath.Join(logDir, partition.ReplicationCheckpoint), format.AppendOffsetCheckpoint(nil, cp), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := serve.New(serve.Config{LogDir: logDir, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	defer s.Close()
	// kcat's outputs first, several at once (each kcat waits on its
	// fetches, not on the CPU); klog runs in this process afterwards, one
	// command at a time.
	type query struct {
		topic, iso, f string
		null          bool
	}
	kcatRun := func(q query) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		args := []string{"-b", ln.Addr().String(), "-C", "-t", q.topic, "-p", "0", "-o", "beginning", "-e", "-q", "-X", "isolation.level=" + q.iso, "-f", q.f}
		if q.null {
			args = append(args, "-Z")
		}
		out, err := exec.CommandContext(ctx, kcatBin, args...).Output()
		if err != nil {
			return "", fmt.Errorf("kcat %v: %v", args, err)
		}
		return string(out), nil
	}
	formats := []struct {
		f    string
		null []bool
	}{{`%t|%p|%o|%T|%k|%K|%s|%S|%h\n`, []bool{false, true}}, {`%o:%R%s;`, []bool{false}}}
	var queries []query
	for topic := range topics {
		for _, iso := range []string{"read_uncommitted", "read_committed"} {
			queries = append(queries, query{topic, iso, `%o\n`, false})
			for _, fz := range formats {
				for _, null := range fz.null {
					queries = append(queries, query{topic, iso, fz.f, null})
				}
			}
		}
	}
	kcatOuts := make(map[query]string, len(queries))
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	jobs := make(chan struct{}, 8)
	for _, q := range queries {
		wg.Add(1)
		jobs <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-jobs }()
			out, err := kcatRun(q)
			mu.Lock()
			defer mu.Unlock()
			kcatOuts[q], errs = out, append(errs, err)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	kcatOut := func(_ *testing.T, topic, iso, f string, null bool) string {
		return kcatOuts[query{topic, iso, f, null}]
	}
	for _, fz := range formats {
		f := fz.f
		for _, null := range fz.null {
			for topic := range topics {
				dir := filepath.Join(logDir, topic+"-0")
				z := []string{"-f", f}
				if null {
					z = append(z, "-Z")
				}
				for _, iso := range []string{"read_uncommitted", "read_committed"} {
					want := kcatOut(t, topic, iso, f, null)
					// fetch's consumer polls until it has what kcat printed
					// (one poll, --consumer, reads one segment).
					if _, ok := records[topic+iso]; !ok {
						records[topic+iso] = strings.Count(kcatOut(t, topic, iso, `%o\n`, false), "\n")
					}
					n := strconv.Itoa(max(1, records[topic+iso]))
					runs := map[string][]string{"fetch --follow": {"fetch", dir, "--follow", "--isolation", iso, "-c", n, "--timeout", "30s"}}
					if iso == "read_uncommitted" {
						// What kcat reads uncommitted is every data record:
						// what dump, find and tail print through -f.
						runs["dump"] = []string{"dump", dir}
						runs["find"] = []string{"find", dir, "--where", "true"}
						runs["tail"] = []string{"tail", dir, "-o", "earliest", "-c", n, "--timeout", "30s"}
					}
					for name, args := range runs {
						code, out, errs := klog(t, append(args, z...)...)
						if code != ExitOK {
							t.Fatalf("%s %s: exit %d: %s", name, topic, code, errs)
						}
						if out != want {
							t.Errorf("%s %s %s -f %q -Z=%v:\nklog %q\nkcat %q", name, topic, iso, f, null, out, want)
						}
					}
				}
			}
		}
	}
}

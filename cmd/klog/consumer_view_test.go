package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
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
	"github.com/twmb/franz-go/pkg/kgo"
)

// viewRecord is a record as the application gets it.
type viewRecord struct {
	Offset, Timestamp int64
	Key, Value        string // hex, "null" for null
	Headers           int
}

func (r viewRecord) String() string {
	return fmt.Sprintf("%d@%d %s=%s h%d", r.Offset, r.Timestamp, r.Key, r.Value, r.Headers)
}

func hexOrNull(b []byte) string {
	if b == nil {
		return "null"
	}
	return hex.EncodeToString(b)
}

// consumerView runs klog fetch DIR --consumer --json and returns its
// records and the position it reports.
func consumerView(t *testing.T, dir string, offset int64, iso string) ([]viewRecord, int64) {
	t.Helper()
	code, out, errs := klog(t, "fetch", dir, "--consumer", "--json", "--offset", strconv.FormatInt(offset, 10), "--isolation", iso,
		"--key-encoding", "hex", "--value-encoding", "hex")
	if code != ExitOK {
		t.Fatalf("klog fetch --consumer: exit %d: %s", code, errs)
	}
	var recs []viewRecord
	position := int64(-1)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var o struct {
			Type              string
			Offset, Timestamp int64
			Key, Value        *string
			Headers           []json.RawMessage
			Position          int64
		}
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		switch o.Type {
		case "record":
			r := viewRecord{Offset: o.Offset, Timestamp: o.Timestamp, Key: "null", Value: "null", Headers: len(o.Headers)}
			if o.Key != nil {
				r.Key = *o.Key
			}
			if o.Value != nil {
				r.Value = *o.Value
			}
			recs = append(recs, r)
		case "consumerPosition":
			position = o.Position
		}
	}
	return recs, position
}

// franzGo reads topic partition 0 from offset through klog serve with a
// franz-go consumer: want records (then a poll that must bring nothing
// more: the range ends at the high watermark or last stable offset).
func franzGo(t *testing.T, addr, topic string, offset int64, want int, iso kgo.IsolationLevel) []viewRecord {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.FetchIsolationLevel(iso), kgo.FetchMaxWait(50*time.Millisecond),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(offset)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []viewRecord
	add := func(fs kgo.Fetches) {
		for _, e := range fs.Errors() {
			if ctx.Err() == nil && e.Err != context.DeadlineExceeded {
				t.Fatalf("%s: %v", topic, e.Err)
			}
		}
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, viewRecord{Offset: r.Offset, Timestamp: r.Timestamp.UnixMilli(), Key: hexOrNull(r.Key),
				Value: hexOrNull(r.Value), Headers: len(r.Headers)})
		})
	}
	for len(out) < want && ctx.Err() == nil {
		add(cl.PollFetches(ctx))
	}
	sctx, scancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer scancel()
	add(cl.PollFetches(sctx))
	return out
}

// kcat reads the same range with kcat (librdkafka): offset, timestamp, key
// and value sizes of each record it prints, -1 for null.
func kcat(t *testing.T, bin, addr, topic string, offset int64, iso string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-b", addr, "-C", "-t", topic, "-p", "0", "-o", strconv.FormatInt(offset, 10), "-e", "-q",
		"-X", "isolation.level="+iso, "-f", `%o %T %K %S\n`).Output()
	if err != nil {
		t.Fatalf("kcat: %v", err)
	}
	return string(out)
}

func kcatView(recs []viewRecord) string {
	size := func(h string) int {
		if h == "null" {
			return -1
		}
		return len(h) / 2
	}
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "%d %d %d %d\n", r.Offset, r.Timestamp, size(r.Key), size(r.Value))
	}
	return b.String()
}

// TestConsumerViewIsWhatClientsGet: klog fetch --consumer prints exactly
// the records a franz-go consumer (and kcat, when installed) reads from the
// same partition through klog serve, from every offset of partitions with
// aborted and committed transactions, markers, compression and a batch that
// starts before the fetch offset, at both isolation levels.
func TestConsumerViewIsWhatClientsGet(t *testing.T) {
	logDir := t.TempDir()
	topics := map[string]string{"payments": "v2-transactions", "orders": "v2-none", "zipped": "v2-gzip"}
	// Every offset of the transactions (markers, the aborted record); in
	// the others the start, inside the first and the last batch.
	offsets := map[string][]int64{"payments": {0, 1, 2, 3, 4, 5}, "orders": {0, 5, 57}, "zipped": {0, 2, 58}}
	var cp []format.OffsetEntry
	for topic, fixture := range topics {
		dst := filepath.Join(logDir, topic+"-0")
		klogtest.CopyPartition(t, segments(t, "kafka-written", fixture), dst)
		l, err := partition.OpenLog(dst, partition.LogOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cp = append(cp, format.OffsetEntry{Topic: topic, Partition: 0, Offset: l.LogEndOffset()})
	}
	// One high watermark for both readers: the log end.
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
	addr := ln.Addr().String()
	kcatBin, kerr := exec.LookPath("kcat")
	if kerr != nil && os.Getenv("CI") == "true" {
		t.Fatalf("kcat is required under CI (.ci/run installs it): %v", kerr)
	}
	// klog's views first, one after the other (klog runs in this
	// process); then the clients read the same ranges, several cases at
	// once (each waits on its consumer's polls, not on the CPU).
	type viewCase struct {
		name, topic, iso string
		offset           int64
		view             []viewRecord
	}
	var cases []viewCase
	for _, c := range cp {
		for _, iso := range []string{"read_uncommitted", "read_committed"} {
			for _, off := range offsets[c.Topic] {
				if off >= c.Offset {
					continue
				}
				name := fmt.Sprintf("%s/%s/offset=%d", c.Topic, iso, off)
				view, pos := consumerView(t, filepath.Join(logDir, c.Topic+"-0"), off, iso)
				if pos < off {
					t.Errorf("%s: position %d", name, pos)
				}
				cases = append(cases, viewCase{name, c.Topic, iso, off, view})
			}
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	jobs := make(chan struct{}, 8)
	for _, c := range cases {
		wg.Add(1)
		jobs <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-jobs }()
			t.Run(c.name, func(t *testing.T) {
				kiso := kgo.ReadUncommitted()
				if c.iso == "read_committed" {
					kiso = kgo.ReadCommitted()
				}
				got := franzGo(t, addr, c.topic, c.offset, len(c.view), kiso)
				if fmt.Sprint(got) != fmt.Sprint(c.view) {
					t.Errorf("franz-go %v\n klog     %v", got, c.view)
				}
				if kcatBin != "" {
					if k := kcat(t, kcatBin, addr, c.topic, c.offset, c.iso); k != kcatView(c.view) {
						t.Errorf("kcat:\n%s klog:\n%s", k, kcatView(c.view))
					}
				}
			})
		}()
	}
}

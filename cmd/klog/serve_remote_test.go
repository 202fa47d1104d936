package main

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/internal/s3test"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// tieredFixtures holds the remote tiers written by Kafka's LocalTieredStorage
// and by Aiven's plugin, with their broker log dirs (tiered/testdata).
const tieredFixtures = "../../tiered/testdata/kafka-written"

// TestServeRemoteS3: the remote tier of a topic is in a bucket, and `klog
// serve --remote s3://BUCKET/PREFIX --s3-endpoint URL` replays the whole
// partition to an unmodified franz-go consumer: offsets 8-28 from the
// remote segments in the bucket (LocalTieredStorage's files, and Aiven's
// zstd + AES-GCM chunks with --key-pair), 29-33 from the local log.
// ListOffsets answers -2 (earliest) with the remote start and -4
// (earliest-local) with the local log start, as a broker with tiered
// storage does.
func TestServeRemoteS3(t *testing.T) {
	kw := tieredFixtures
	// What the consumer must read: the records of LocalTieredStorage's
	// .log files (plain Kafka segments) and of the local tail, control
	// records left out. The Aiven fixture holds the same batches (klog
	// tiered dump prints its .log as the local-tiered one).
	remote := filepath.Join(kw, "local-tiered", "remote", "kafka-tiered-storage", "orders-0-b3JkZXJzAAAAAAAAAAAAAg")
	want := segmentRecords(t, remote)
	want = append(want, segmentRecords(t, filepath.Join(kw, "local-tiered", "broker-logdir", "orders-0"))...)
	if len(want) != 25 || want[0].offset != 8 || want[len(want)-1].offset != 33 {
		t.Fatalf("the fixture's records: %d, offsets %d-%d", len(want), want[0].offset, want[len(want)-1].offset)
	}
	for _, c := range []struct {
		name, store, logDir string
		args                []string
	}{
		{"local-tiered", "local-tiered/remote", "local-tiered/broker-logdir", nil},
		{"aiven-zstd-encrypted", "aiven/zstd-encrypted/storage", "aiven/zstd-encrypted/broker-logdir",
			[]string{"--key-pair", "key1=" + filepath.Join(kw, "aiven", "keys", "private.pem")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			endpoint := s3test.FakeS3(t, filepath.Join(kw, c.store), "kafka-archive", "prod/")
			dir := t.TempDir()
			klogtest.CopyLogDir(t, filepath.Join(kw, c.logDir), dir)
			addr, stderr, stop := runServeCmd(t, append([]string{"--log-dir", dir,
				"--remote", "s3://kafka-archive/prod/", "--s3-endpoint", endpoint, "--s3-region", "eu-west-1"}, c.args...)...)
			if strings.Contains(stderr.String(), "WARNING") {
				t.Errorf("a warning with the tier in place: %s", stderr.String())
			}
			// Offset 0 is below the remote start too: the broker
			// answers OFFSET_OUT_OF_RANGE and the consumer resets to
			// the earliest offset (ListOffsets -2), in the bucket.
			got := consumeFrom(t, addr, 0, want[len(want)-1].offset)
			sameOffsetRecords(t, "from offset 0", got, want)
			// From the middle of a remote batch (14-16) of the second
			// segment: the consumer drops the records before 15.
			got = consumeFrom(t, addr, 15, want[len(want)-1].offset)
			i := sort.Search(len(want), func(i int) bool { return want[i].offset >= 15 })
			sameOffsetRecords(t, "from offset 15", got, want[i:])
			for _, q := range []struct{ ts, want int64 }{{-2, 8}, {-4, 29}, {-5, 28}, {-1, 34}} {
				if off := listOffset(t, addr, q.ts); off != q.want {
					t.Errorf("ListOffsets %d = %d, want %d", q.ts, off, q.want)
				}
			}
			if code := stop(); code != ExitOK {
				t.Errorf("exit %d: %s", code, stderr.String())
			}
		})
	}
}

// TestServeRemoteWrongPrefix: a --remote prefix that holds none of the
// objects the metadata says were copied reads as an empty remote tier; serve
// still starts (the local log serves) but says which partitions lost their
// remote segments, so a typo does not hide the archive without a word.
func TestServeRemoteWrongPrefix(t *testing.T) {
	kw := tieredFixtures
	endpoint := s3test.FakeS3(t, filepath.Join(kw, "local-tiered/remote"), "kafka-archive", "prod/")
	dir := t.TempDir()
	klogtest.CopyLogDir(t, filepath.Join(kw, "local-tiered/broker-logdir"), dir)
	addr, stderr, _ := runServeCmd(t, "--log-dir", dir, "--remote", "s3://kafka-archive/prdo/", "--s3-endpoint", endpoint, "--s3-region", "eu-west-1")
	want := `klog: serve: WARNING: orders-0: __remote_log_metadata names 3 copied segments (offsets 8-28) but the remote tier under "prdo/" holds none of its objects; offsets below the local log start are out of range`
	if !strings.Contains(stderr.String(), want+"\n") {
		t.Errorf("stderr:\n%s\nwant the line\n%s", stderr.String(), want)
	}
	if off := listOffset(t, addr, -2); off != 29 {
		t.Errorf("ListOffsets -2 = %d, want the local log start 29", off)
	}
}

// offsetRecord is a record's offset, key and value.
type offsetRecord struct {
	offset     int64
	key, value string
}

// segmentRecords reads the records of every .log in dir, in offset order,
// without control records.
func segmentRecords(t *testing.T, dir string) []offsetRecord {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(logs) // 20-digit start offsets
	var out []offsetRecord
	var rr format.RecordReader
	for _, p := range logs {
		f, size, err := safeio.OpenSized(p)
		if err != nil {
			t.Fatal(err)
		}
		for b, err := range format.NewScanner(f, size, format.ScanOptions{}).All() {
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if b.IsControl() {
				continue
			}
			for r, err := range rr.Records(b) {
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				out = append(out, offsetRecord{r.Offset, string(r.Key), string(r.Value)})
			}
		}
		f.Close()
	}
	return out
}

// consumeFrom consumes partition orders-0 with franz-go from offset from
// (read_uncommitted) until it has the record at last.
func consumeFrom(t *testing.T, addr string, from, last int64) []offsetRecord {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.FetchMaxWait(200*time.Millisecond), kgo.FetchIsolationLevel(kgo.ReadUncommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"orders": {0: kgo.NewOffset().At(from)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []offsetRecord
	for len(out) == 0 || out[len(out)-1].offset < last {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("from %d: %d records before the timeout", from, len(out))
		}
		for _, e := range fs.Errors() {
			t.Fatalf("from %d: fetch error: %v", from, e.Err)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, offsetRecord{r.Offset, string(r.Key), string(r.Value)}) })
	}
	return out
}

func sameOffsetRecords(t *testing.T, what string, got, want []offsetRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("%s: record %d = %+v, want %+v", what, i, got[i], want[i])
			return
		}
	}
}

// listOffset asks ListOffsets for orders-0 at ts (-1 latest, -2 earliest,
// -4 earliest-local, -5 latest-tiered).
func listOffset(t *testing.T, addr string, ts int64) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "orders"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = ts
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("ListOffsets %d: error %d", ts, p.ErrorCode)
	}
	return p.Offset
}

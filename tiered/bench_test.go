package tiered

// Benchmarks of the remote tier, each against its reference in the same
// run:
//
//	go test ./tiered -run '^$' -bench . -benchtime 1x   (needs versitygw: KLOG_VERSITYGW or PATH)
//
// BenchmarkRemoteVerify1GiB: klog's verify of 1 GiB of remote segments
// through versitygw against fetching the same objects with the S3 client
// alone (GetObject, the body copied to io.Discard, as many at once as
// verify reads); the ratio is the "ratio" metric, and "ratio-1MiB" the
// ratio to the client reading the bodies in 1 MiB reads. Each side's CPU
// time per GB, this process's and versitygw's, is reported too.
// BenchmarkRemoteVerifyRSS: the peak RSS of a process verifying one
// segment of 64 MiB and one of 512 MiB, from a directory and through
// versitygw (it does not grow with the size).
// BenchmarkRemoteSegments10k: 10,000 remote segments listed, folded and
// checked, with the peak RSS. The README ("klog tiered", Figures) keeps
// the last run's numbers.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/objstore"
)

// benchBatch is one uncompressed v2 batch of n records of 1 KiB values.
func benchBatch(tb testing.TB, n int) []byte {
	tb.Helper()
	recs := make([]format.Record, n)
	val := make([]byte, 1024)
	for i := range val {
		val[i] = byte('a' + i%26)
	}
	for i := range recs {
		recs[i] = format.Record{Offset: int64(i), Timestamp: 1700000000000 + int64(i), Key: []byte("key-" + strconv.Itoa(i)), Value: val}
	}
	h := format.Batch{PartitionLeaderEpoch: 0, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	format.PrepareBatch(&h, recs)
	var c format.Compressor
	b, err := c.AppendBatch(nil, &h, recs)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// writeLTSSegments writes segments LocalTieredStorage .log objects of size
// bytes each (whole batches) under dir's partition directory; only the
// .log: the benchmarks read logs.
func writeLTSSegments(tb testing.TB, dir string, segments int, size int64) int64 {
	tb.Helper()
	batch := benchBatch(tb, 1000)
	per := int64(1000)
	pd := filepath.Join(dir, "kafka-tiered-storage", "bench-0-YmVuY2gAAAAAAAAAAAAAAQ")
	if err := os.MkdirAll(pd, 0o755); err != nil {
		tb.Fatal(err)
	}
	off := int64(0)
	var total int64
	for s := range segments {
		id := Uuid{byte(s >> 8), byte(s), 1}
		f, err := os.Create(filepath.Join(pd, FilenamePrefix(off)+"-"+id.String()+SuffixLog))
		if err != nil {
			tb.Fatal(err)
		}
		for w := int64(0); w+int64(len(batch)) <= size; w += int64(len(batch)) {
			// The base offset is outside the CRC: one batch serves all.
			putBase(batch, off)
			if _, err := f.Write(batch); err != nil {
				tb.Fatal(err)
			}
			off += per
			total += int64(len(batch))
		}
		f.Close()
	}
	return total
}

func putBase(b []byte, off int64) {
	for i := range 8 {
		b[i] = byte(off >> (56 - 8*i))
	}
}

// rawClient is the SDK's client alone, as a reference.
func rawClient(tb testing.TB, endpoint string) *s3.Client {
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"), config.WithBaseEndpoint(endpoint),
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired))
	if err != nil {
		tb.Fatal(err)
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
}

func BenchmarkRemoteVerify1GiB(b *testing.B) {
	root := b.TempDir()
	bucket := filepath.Join(root, "tiered")
	total := writeLTSSegments(b, filepath.Join(bucket, "bench"), 16, 64<<20)
	ep, server := versityGWProcess(b, root, "klogbench", "klog-secret")
	b.Setenv("AWS_ACCESS_KEY_ID", "klogbench")
	b.Setenv("AWS_SECRET_ACCESS_KEY", "klog-secret")
	b.Setenv("AWS_CONFIG_FILE", filepath.Join(root, "none"))
	b.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(root, "none"))
	st, err := objstore.NewS3(context.Background(), "tiered", objstore.S3Options{Endpoint: ep})
	if err != nil {
		b.Fatal(err)
	}
	var keys []string
	st.List(context.Background(), "bench/", func(o objstore.Object) error { keys = append(keys, o.Key); return nil })
	client := rawClient(b, ep)
	const jobs = 4
	// fetch reads every object with the client alone, jobs at once, each
	// body through read.
	fetch := func(read func(io.Reader)) {
		work := make(chan string)
		var wg sync.WaitGroup
		for range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range work {
					out, err := client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("tiered"), Key: aws.String(k)})
					if err != nil {
						b.Error(err)
						continue
					}
					read(out.Body)
					out.Body.Close()
				}
			}()
		}
		for _, k := range keys {
			work <- k
		}
		close(work)
		wg.Wait()
	}
	sides := []struct {
		name string
		run  func()
	}{
		// The reference: a download, the body copied to io.Discard.
		{"client", func() { fetch(func(r io.Reader) { io.Copy(io.Discard, r) }) }},
		// The client reading each body in 1 MiB reads, as verify does:
		// fewer system calls than io.Copy's 8 KiB, the fastest the client
		// reads here.
		{"client1MiB", func() {
			fetch(func(r io.Reader) {
				buf := make([]byte, 1<<20)
				for {
					if _, err := io.ReadFull(r, buf); err != nil {
						return
					}
				}
			})
		}},
		{"verify", func() {
			sum, err := Run(context.Background(), Options{Remote: &Remote{Store: st}, Prefix: "bench/", Checker: Checker{Read: true, Jobs: jobs}},
				func(p *PartitionReport) error {
					for _, s := range p.Segments {
						if s.Read == nil || !s.Read.OK {
							b.Errorf("segment %s not verified clean: %+v", s.SegmentID, s.Findings)
						}
					}
					return nil
				})
			if err != nil || sum.Segments != len(keys) {
				b.Fatalf("verify: %v (%d segments)", err, sum.Segments)
			}
		}},
	}
	// Each side's time, and the CPU time it spent, this process's and
	// the server's: the ratio of times moves with the machine's load,
	// CPU per byte much less.
	wall := make([]time.Duration, len(sides))
	cpu := make([]time.Duration, len(sides))
	srv := make([]time.Duration, len(sides))
	b.SetBytes(total)
	for b.Loop() {
		for i, side := range sides {
			start, cpu0, srv0 := time.Now(), selfCPU(), procCPU(server.Pid)
			side.run()
			wall[i] += time.Since(start)
			cpu[i] += selfCPU() - cpu0
			srv[i] += procCPU(server.Pid) - srv0
		}
	}
	gb := float64(total) * float64(b.N) / 1e9
	mbs := func(i int) float64 { return gb * 1e3 / wall[i].Seconds() }
	for i, side := range sides {
		b.ReportMetric(mbs(i), side.name+"-MB/s")
		b.ReportMetric(cpu[i].Seconds()*1e3/gb, side.name+"-CPU-ms/GB")
		b.ReportMetric(srv[i].Seconds()*1e3/gb, side.name+"-server-CPU-ms/GB")
	}
	b.ReportMetric(mbs(2)/mbs(0), "ratio")
	b.ReportMetric(mbs(2)/mbs(1), "ratio-1MiB")
}

// selfCPU is the CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is the CPU time process pid has used (Linux's /proc; 0
// elsewhere), in the kernel's USER_HZ ticks of 10 ms.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: count fields
	// after its closing one (utime and stime are fields 14 and 15).
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

// childEnv runs this test binary as a child that verifies one store and
// exits (TestMain), and returns its peak RSS in bytes.
func childRSS(tb testing.TB, args ...string) int64 {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KLOG_TIERED_CHILD="+fmt.Sprint(args))
	for i, a := range args {
		cmd.Env = append(cmd.Env, "KLOG_TIERED_ARG"+strconv.Itoa(i)+"="+a)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("child: %v\n%s", err, out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		tb.Skip("no rusage on this system")
	}
	return ru.Maxrss * 1024 // Linux reports KiB
}

func TestMain(m *testing.M) {
	if os.Getenv("KLOG_TIERED_CHILD") != "" {
		os.Exit(child(os.Getenv("KLOG_TIERED_ARG0"), os.Getenv("KLOG_TIERED_ARG1")))
	}
	os.Exit(m.Run())
}

// child verifies the directory store dir (mode "verify") or the bucket
// "tiered" of the S3 server at endpoint dir (mode "verify-s3"), or checks
// the directory store against a synthetic lineage of every segment it
// holds (mode "lineage").
func child(mode, dir string) int {
	ctx := context.Background()
	var st objstore.Store
	var err error
	if mode == "verify-s3" {
		// dir is the endpoint of an S3 server whose bucket "tiered"
		// holds the segments.
		st, err = objstore.NewS3(ctx, "tiered", objstore.S3Options{Endpoint: dir})
	} else {
		st, err = objstore.NewDir(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var lin *Lineage
	if mode == "lineage" {
		lin = NewLineage()
		ListPartitions(ctx, st, "", nil, func(p *PartitionObjects) error {
			for _, s := range p.Segments {
				lin.Apply(&Event{Kind: EventSegment, Partition: p.Partition, SegmentID: s.SegmentID, StartOffset: s.StartOffset, EndOffset: s.StartOffset + 9,
					MaxTimestampMs: 1700000000009, LeaderEpochs: []EpochStart{{0, s.StartOffset}}, SizeInBytes: int32(s.Objects[SuffixLog].Size), TxnIdxEmpty: true, State: CopySegmentStarted})
				lin.Apply(&Event{Kind: EventSegmentUpdate, Partition: p.Partition, SegmentID: s.SegmentID, State: CopySegmentFinished})
			}
			return nil
		})
	}
	c := Checker{Remote: &Remote{Store: st}, Read: true}
	n := 0
	_, err = ListPartitions(ctx, st, "", nil, func(p *PartitionObjects) error {
		var pl *PartitionLineage
		if lin != nil {
			pl = lin.Partitions[p.Partition]
		}
		rep := c.CheckPartition(ctx, p, pl, nil)
		n += len(rep.Segments)
		if f, _ := rep.Count(); f > 0 {
			return fmt.Errorf("%d findings on clean segments: %+v", f, FirstFinding(rep))
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(n, "segments")
	return 0
}

// FirstFinding is rep's first finding (for messages).
func FirstFinding(rep *PartitionReport) *Finding {
	for _, f := range allOf(rep) {
		if !f.Info {
			return &f
		}
	}
	return nil
}

func BenchmarkRemoteVerifyRSS(b *testing.B) {
	for _, size := range []int64{64 << 20, 512 << 20} {
		b.Run("segment="+strconv.FormatInt(size>>20, 10)+"MiB", func(b *testing.B) {
			root := b.TempDir()
			dir := filepath.Join(root, "tiered", "bench")
			total := writeLTSSegments(b, dir, 1, size)
			ep := versityGW(b, root, "klogbench", "klog-secret")
			b.Setenv("AWS_ACCESS_KEY_ID", "klogbench")
			b.Setenv("AWS_SECRET_ACCESS_KEY", "klog-secret")
			b.Setenv("AWS_CONFIG_FILE", filepath.Join(root, "none"))
			b.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(root, "none"))
			b.SetBytes(total)
			var rss, s3RSS int64
			for b.Loop() {
				rss = max(rss, childRSS(b, "verify", dir))
				s3RSS = max(s3RSS, childRSS(b, "verify-s3", ep))
			}
			b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
			b.ReportMetric(float64(s3RSS)/(1<<20), "S3-peak-RSS-MiB")
		})
	}
}

func BenchmarkRemoteSegments10k(b *testing.B) {
	dir := b.TempDir()
	pd := filepath.Join(dir, "kafka-tiered-storage", "bench-0-YmVuY2gAAAAAAAAAAAAAAQ")
	if err := os.MkdirAll(pd, 0o755); err != nil {
		b.Fatal(err)
	}
	batch := benchBatch(b, 10)
	for s := range 10000 {
		id := Uuid{byte(s >> 8), byte(s), 2}
		base := filepath.Join(pd, FilenamePrefix(int64(s)*10)+"-"+id.String())
		putBase(batch, int64(s)*10)
		for _, sfx := range kafkaSuffixes[:5] {
			data := []byte{}
			if sfx == SuffixLog {
				data = batch
			}
			if err := os.WriteFile(base+sfx, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	var rss int64
	for b.Loop() {
		rss = max(rss, childRSS(b, "lineage", dir))
	}
	b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(10000, "segments")
}

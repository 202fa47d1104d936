package dump_test

// Benchmarks for the text renderer. The requirement: `klog dump
// --print-data-log` renders at least 2x faster than the same lines written
// with fmt.Fprintf from the same decoded batches and records. Compare within
// one run:
//
//	go test -run='^$' -bench='DumpText|Fprintf' -count=5 ./dump/
//
// TestDumpBigSegments (KLOG_BIG=1) checks the whole binary on large
// segments: peak RSS under 64 MiB on 1 GiB, and the wall time on 256 MiB.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/format"
)

const (
	benchDumpSegmentBytes = 32 << 20
	benchDumpBatchBytes   = 16 << 10
	benchDumpValueBytes   = 1 << 10
)

// benchWriteSegment writes a segment of v2 batches (about 16 KiB each) of
// records with 1 KiB printable values to path, until it holds at least size
// bytes. The bytes depend only on size.
func benchWriteSegment(path string, size int64) (records int64, err error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(7, 11))
	const alphabet = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 {}:\","
	pool := make([][]byte, 256)
	for i := range pool {
		pool[i] = make([]byte, benchDumpValueBytes)
		for j := range pool[i] {
			pool[i][j] = alphabet[rng.IntN(len(alphabet))]
		}
	}
	var c format.Compressor
	recs := make([]format.Record, benchDumpBatchBytes/(benchDumpValueBytes+32))
	keys := make([][]byte, len(recs))
	var buf []byte
	written := int64(0)
	ts := int64(1_700_000_000_000)
	for written < size {
		h := format.Batch{BaseOffset: records, PartitionLeaderEpoch: 0, Magic: format.MagicV2,
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		for i := range recs {
			off := records + int64(i)
			keys[i] = fmt.Appendf(keys[i][:0], "key-%010d", off)
			recs[i] = format.Record{Offset: off, Timestamp: ts + off, Key: keys[i], Value: pool[off%int64(len(pool))]}
		}
		format.PrepareBatch(&h, recs)
		if buf, err = c.AppendBatch(buf[:0], &h, recs); err != nil {
			return 0, err
		}
		if _, err := w.Write(buf); err != nil {
			return 0, err
		}
		written += int64(len(buf))
		records += int64(len(recs))
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return records, f.Close()
}

// fprintfDump writes what `klog dump --print-data-log` prints for a segment
// of uncompressed, non-control v2 batches, with fmt.Fprintf: the same
// scanner and record reader, the same fields, one Fprintf per line part.
// Keys and values are printed with %s (valid UTF-8 prints the same as
// Kafka's String conversion).
func fprintfDump(path string, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	fmt.Fprintf(bw, "Dumping %s\n", path)
	fmt.Fprintf(bw, "Log starting offset: %d\n", 0)
	sc := format.NewScanner(f, st.Size(), format.ScanOptions{})
	var rr format.RecordReader
	var rec format.Record
	for {
		b, err := sc.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if !b.IsV2() || b.IsControl() || b.Compression() != format.CompressionNone {
			return errors.New("fprintfDump handles uncompressed data batches only")
		}
		horizon := "OptionalLong.empty"
		if h, ok := b.DeleteHorizonMs(); ok {
			horizon = fmt.Sprintf("OptionalLong[%d]", h)
		}
		fmt.Fprintf(bw, "baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t deleteHorizonMs: %s position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: %t\n",
			b.BaseOffset, b.LastOffset(), b.RecordCount, b.BaseSequence, b.LastSequence(), b.ProducerID,
			b.ProducerEpoch, b.PartitionLeaderEpoch, b.IsTransactional(), b.IsControl(), horizon,
			b.Pos, b.TimestampType(), b.MaxTimestamp, b.Size(), b.Magic, b.Compression(), b.CRC, b.Valid())
		if err := rr.Reset(b); err != nil {
			return err
		}
		for {
			if err := rr.Next(&rec); err == io.EOF {
				break
			} else if err != nil {
				return err
			}
			fmt.Fprintf(bw, "| offset: %d %s: %d keySize: %d valueSize: %d sequence: %d headerKeys: [",
				rec.Offset, b.TimestampType(), rec.Timestamp, rec.KeySize, rec.ValueSize, rec.Sequence)
			for i, h := range rec.Headers {
				if i > 0 {
					fmt.Fprintf(bw, ",")
				}
				fmt.Fprintf(bw, "%s", h.Key)
			}
			fmt.Fprintf(bw, "]")
			if rec.Key != nil {
				fmt.Fprintf(bw, " key: %s", rec.Key)
			}
			if rec.Value != nil {
				fmt.Fprintf(bw, " payload: %s", rec.Value)
			}
			fmt.Fprintf(bw, "\n")
		}
	}
	return bw.Flush()
}

// TestFprintfDumpMatches proves the fmt.Fprintf baseline prints exactly what
// dump.Run prints, so the benchmarks compare the same output.
func TestFprintfDumpMatches(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "00000000000000000000.log")
	if _, err := benchWriteSegment(p, 1<<20); err != nil {
		t.Fatal(err)
	}
	var want, got bytes.Buffer
	if _, err := dump.Run([]string{p}, dump.Options{PrintData: true, MaxBytes: -1, Cwd: dir}, &want, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := fprintfDump(p, &got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want.Bytes(), got.Bytes()) {
		w, g := bytes.Split(want.Bytes(), []byte("\n")), bytes.Split(got.Bytes(), []byte("\n"))
		for i := range min(len(w), len(g)) {
			if !bytes.Equal(w[i], g[i]) {
				t.Fatalf("line %d differs:\ndump:    %.300s\nfprintf: %.300s", i+1, w[i], g[i])
			}
		}
		t.Fatalf("dump wrote %d lines, fprintf %d", len(w), len(g))
	}
}

func benchSegmentFile(b *testing.B) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), "00000000000000000000.log")
	if _, err := benchWriteSegment(p, benchDumpSegmentBytes); err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkDumpText(b *testing.B) {
	b.Run("print-data-log", func(b *testing.B) {
		p := benchSegmentFile(b)
		opts := dump.Options{PrintData: true, MaxBytes: -1, Cwd: filepath.Dir(p)}
		b.SetBytes(benchDumpSegmentBytes)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := dump.Run([]string{p}, opts, io.Discard, io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkFprintf(b *testing.B) {
	b.Run("print-data-log", func(b *testing.B) {
		p := benchSegmentFile(b)
		b.SetBytes(benchDumpSegmentBytes)
		b.ReportAllocs()
		for b.Loop() {
			if err := fprintfDump(p, io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDumpBigSegments runs the built binary on generated 1 GiB and 256 MiB
// segments under the temp directory, with stdout to /dev/null: peak RSS (the
// kernel's ru_maxrss) must stay under 64 MiB on 1 GiB, and the 256 MiB dump
// must take under 0.49 s (the best of 5 runs after a warm-up, page cache
// hot). It needs about 1.3 GiB of disk and the go command, so it runs only
// with KLOG_BIG=1:
//
//	KLOG_BIG=1 go test -run='^TestDumpBigSegments$' -v ./dump/
//
// KLOG_BIG_DIR=/tmp/klog-big keeps the segments there (1GiB/ and 256MiB/)
// for measuring by hand, e.g.
//
//	go build -o /tmp/klog ./cmd/klog
//	/usr/bin/time -v /tmp/klog dump --print-data-log /tmp/klog-big/1GiB/00000000000000000000.log >/dev/null
func TestDumpBigSegments(t *testing.T) {
	if os.Getenv("KLOG_BIG") != "1" {
		t.Skip("set KLOG_BIG=1 to dump generated 1 GiB and 256 MiB segments")
	}
	bin := filepath.Join(t.TempDir(), "klog")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/klog").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(path string) (time.Duration, int64) {
		t.Helper()
		devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer devnull.Close()
		cmd := exec.Command(bin, "dump", "--print-data-log", path)
		cmd.Stdout = devnull
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("klog dump: %v\n%s", err, stderr.Bytes())
		}
		wall := time.Since(start)
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		return wall, ru.Maxrss << 10 // KiB on Linux
	}
	for _, c := range []struct {
		name string
		size int64
	}{{"1GiB", 1 << 30}, {"256MiB", 256 << 20}} {
		dir := t.TempDir()
		if keep := os.Getenv("KLOG_BIG_DIR"); keep != "" {
			dir = filepath.Join(keep, c.name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		p := filepath.Join(dir, "00000000000000000000.log")
		recs, err := benchWriteSegment(p, c.size)
		if err != nil {
			t.Fatal(err)
		}
		run(p) // warm the page cache
		var walls []time.Duration
		var peak int64
		for range 5 {
			wall, rss := run(p)
			walls = append(walls, wall)
			peak = max(peak, rss)
		}
		slices.Sort(walls)
		t.Logf("%s (%d records): wall best %v median %v, peak RSS %.1f MiB",
			c.name, recs, walls[0], walls[len(walls)/2], float64(peak)/(1<<20))
		if peak >= 64<<20 {
			t.Errorf("%s: peak RSS %.1f MiB, want under 64 MiB", c.name, float64(peak)/(1<<20))
		}
		if c.size == 256<<20 && walls[0] >= 490*time.Millisecond {
			t.Errorf("%s: best wall time %v, want under 0.49 s", c.name, walls[0])
		}
		if os.Getenv("KLOG_BIG_DIR") == "" {
			os.Remove(p)
		}
	}
}

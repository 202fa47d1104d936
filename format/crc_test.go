package format

import (
	stdcrc32 "hash/crc32"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/klauspost/crc32"
)

// TestCRC32CMatchesStdlib checks that klauspost/crc32 (used by crc.go) and
// hash/crc32 agree on Castagnoli sums, for every length up to a few blocks
// and every alignment, so swapping one for the other stays a one-line
// change. It also pins the CRC-32C and CRC-32 check values.
func TestCRC32CMatchesStdlib(t *testing.T) {
	t.Parallel()
	std := stdcrc32.MakeTable(stdcrc32.Castagnoli)
	kp := crc32.MakeTable(crc32.Castagnoli)
	buf := make([]byte, 4096+16)
	for i := range buf {
		buf[i] = byte(i*131 + i>>8)
	}
	for _, n := range []int{0, 1, 2, 3, 7, 8, 15, 16, 31, 63, 64, 100, 255, 256, 1000, 1024, 4095, 4096} {
		for align := 0; align < 16; align += 3 {
			b := buf[align : align+n]
			want := stdcrc32.Checksum(b, std)
			if got := crc32.Checksum(b, kp); got != want {
				t.Errorf("len=%d align=%d: klauspost %#08x, hash/crc32 %#08x", n, align, got, want)
			}
			if got := ChecksumC(b); got != want {
				t.Errorf("len=%d align=%d: ChecksumC %#08x, hash/crc32 %#08x", n, align, got, want)
			}
			// Incremental: split anywhere.
			if got := UpdateC(ChecksumC(b[:n/3]), b[n/3:]); got != want {
				t.Errorf("len=%d align=%d: UpdateC %#08x, want %#08x", n, align, got, want)
			}
			if got, want := ChecksumIEEE(b), stdcrc32.ChecksumIEEE(b); got != want {
				t.Errorf("len=%d align=%d: ChecksumIEEE %#08x, hash/crc32 %#08x", n, align, got, want)
			}
		}
	}
	// Check values for "123456789" (kafka-format.md §0.2).
	if got := ChecksumC([]byte("123456789")); got != 0xE3069283 {
		t.Errorf("CRC-32C check value %#08x, want 0xe3069283", got)
	}
	if got := ChecksumIEEE([]byte("123456789")); got != 0xCBF43926 {
		t.Errorf("CRC-32 check value %#08x, want 0xcbf43926", got)
	}
}

// BenchmarkCRC32CImpls measures the CRC-32C implementations available for
// Go against each other in one run, at the sizes klog checksums (a small
// batch, a producer's 16 KiB batch, a 1 MiB batch, a 64 MiB run): crc.go's
// klauspost/crc32 and the standard library's hash/crc32. On amd64 both use
// SSE 4.2's CRC32 instruction on three streams (klauspost's AVX-512 path is
// switched off by its authors as no faster); the ratio reported is
// klauspost's speed over the standard library's, pairs alternating:
//
//	go test -run='^$' -bench=CRC32CImpls -count=3 ./format/
func BenchmarkCRC32CImpls(b *testing.B) {
	std := stdcrc32.MakeTable(stdcrc32.Castagnoli)
	kp := crc32.MakeTable(crc32.Castagnoli)
	for _, size := range []int{1 << 10, 16 << 10, 1 << 20, 64 << 20} {
		buf := make([]byte, size)
		for i := range buf {
			buf[i] = byte(i*131 + i>>8)
		}
		b.Run("size="+sizeName(size), func(b *testing.B) {
			reps := max(1, (4<<20)/size) // a few MiB a timing
			b.SetBytes(int64(2 * size * reps))
			var ratios []float64
			var sum uint32
			for b.Loop() {
				t0 := time.Now()
				for range reps {
					sum += crc32.Checksum(buf, kp)
				}
				t1 := time.Now()
				for range reps {
					sum += stdcrc32.Checksum(buf, std)
				}
				ratios = append(ratios, time.Since(t1).Seconds()/t1.Sub(t0).Seconds())
			}
			_ = sum
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "klauspost/stdlib")
		})
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return strconv.Itoa(n>>20) + "MiB"
	}
	return strconv.Itoa(n>>10) + "KiB"
}

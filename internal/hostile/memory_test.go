package hostile

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/inspect"
	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/redact"
)

// BigBombRecords is the offset-delta bomb of the issue that found the
// per-record memory of the forensic commands: 19 million records at delta
// 0 in a 194 KB gzip batch, 133 MB decompressed (under the 128 MiB cap).
const BigBombRecords = 19_000_000

// TestForensicsBoundedOnBombs: redact, diff --records and stats --what-if
// hold a bounded heap (under 256 MiB, the promise of every command) on the
// offset-delta bombs, whatever the record count: they stream records
// instead of keeping one thing per record. Before, the 2-million-record
// bomb took redact to 1.15 GB and diff --records to 1.74 GB (11 GB and
// 6 GB on the 19-million one), stats --what-if to 421 MB. The test-time
// corpus (cmd/klog's TestHostileCorpus) runs the same commands as
// processes and measures their RSS; here they run in-process on both bombs
// (the big one only without -short).
func TestForensicsBoundedOnBombs(t *testing.T) {
	sizes := []int{BombRecords, BigBombRecords}
	if testing.Short() {
		sizes = sizes[:1]
	}
	all := []format.Compression{format.CompressionNone, format.CompressionGzip, format.CompressionSnappy, format.CompressionLZ4, format.CompressionZstd}
	for _, n := range sizes {
		root := t.TempDir()
		part := filepath.Join(root, "bomb", "t-0")
		empty := filepath.Join(root, "empty", "t-0")
		os.MkdirAll(part, 0o755)
		os.MkdirAll(empty, 0o755)
		b, err := OffsetDeltaBomb(n)
		if err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(part, fileName(0, ".log"))
		if err := os.WriteFile(log, b, 0o644); err != nil {
			t.Fatal(err)
		}
		b = nil
		for _, c := range []struct {
			name string
			run  func() error
		}{
			{"redact", func() error {
				_, err := redact.Partition(part, filepath.Join(root, "redacted-"+strconv.Itoa(n)), redact.Options{Mode: redact.Hash})
				return err
			}},
			{"diff --records", func() error {
				_, err := inspect.Diff([]string{part, empty}, inspect.DiffOptions{Leader: -1, Records: true})
				return err
			}},
			{"stats --what-if", func() error {
				_, err := inspect.WhatIf(context.Background(), []string{log}, inspect.WhatIfOptions{Codecs: all})
				return err
			}},
		} {
			var err error
			peak := klogtest.PeakHeap(func() { err = c.run() })
			t.Logf("%s on %d records: peak heap %d MiB", c.name, n, peak>>20)
			if err != nil {
				t.Errorf("%s on %d records: %v", c.name, n, err)
			}
			if peak > 256<<20 {
				t.Errorf("%s on %d records: peak heap %d MiB, over the 256 MiB promise", c.name, n, peak>>20)
			}
		}
	}
}

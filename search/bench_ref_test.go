package search

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/klog-dev/klog/format"
)

// referenceScan reads every batch of the partitions' segments with
// format.Scanner and checks its CRC: the least a search that checks what it
// reads must do. jobs partitions at a time (0: GOMAXPROCS).
func referenceScan(b *testing.B, dirs []string, jobs int) {
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for _, d := range dirs {
		sem <- struct{}{}
		wg.Add(1)
		go func(d string) {
			defer wg.Done()
			defer func() { <-sem }()
			f, err := os.Open(filepath.Join(d, "00000000000000000000.log"))
			if err != nil {
				b.Error(err)
				return
			}
			defer f.Close()
			fi, _ := f.Stat()
			sc := format.NewScanner(f, fi.Size(), format.ScanOptions{})
			for bt, err := range sc.All() {
				if err != nil || !bt.Valid() {
					b.Error("bad batch", err)
					return
				}
			}
		}(d)
	}
	wg.Wait()
}

package dump_test

// FuzzDumpText runs the whole dump, text and JSON, over arbitrary segment
// bytes: it must never panic, fail only with a *FatalError (Kafka's own
// give-up points), and every JSON line must be a JSON object. Run it with
//
//	go test -run='^$' -fuzz='^FuzzDumpText$' -fuzztime=60s ./dump/

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klog-dev/klog/dump"
)

// fuzzDumpSeeds returns the first 64 KiB of every .log file under the
// repository's testdata/segments.
func fuzzDumpSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	root := filepath.Join("..", "testdata", "segments")
	var seeds [][]byte
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".log") {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		b := make([]byte, 64<<10)
		n, _ := f.Read(b)
		seeds = append(seeds, b[:n])
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return seeds
}

func FuzzDumpText(f *testing.F) {
	for _, s := range fuzzDumpSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "00000000000000000000.log")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		base := dump.Options{Deep: true, PrintData: true, MaxBytes: -1, Cwd: dir,
			MaxBatchBytes: 1 << 20, MaxDecompressedBytes: 1 << 20}
		skip := base
		skip.SkipRecordMetadata = true
		for _, opts := range []dump.Options{base, skip} {
			var out, errOut bytes.Buffer
			if _, err := dump.Run([]string{p}, opts, &out, &errOut); err != nil {
				var fe *dump.FatalError
				if !errors.As(err, &fe) {
					t.Fatalf("text dump: %T %v", err, err)
				}
			}
		}
		js := base
		js.JSON = true
		var out, errOut bytes.Buffer
		if _, err := dump.Run([]string{p}, js, &out, &errOut); err != nil {
			t.Fatalf("JSON dump: %T %v", err, err)
		}
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 64<<20)
		lines := 0
		for sc.Scan() {
			lines++
			var obj map[string]any
			if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
				t.Fatalf("JSON line %d is not an object: %v\n%.300s", lines, err, sc.Bytes())
			}
			if _, ok := obj["type"].(string); !ok {
				t.Fatalf("JSON line %d has no type: %.300s", lines, sc.Bytes())
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		if lines == 0 {
			t.Fatal("no JSON output")
		}
	})
}

package inspect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// FuzzParseRetentionConfig: any text parses or fails cleanly; what parses
// keeps retention values in range.
func FuzzParseRetentionConfig(f *testing.F) {
	f.Add([]byte("retention.ms=1000\nretention.bytes=-1\n"))
	f.Add([]byte("Dynamic configs for topic t are:\n  cleanup.policy=compact sensitive=false synonyms={}\n"))
	f.Add([]byte("log.retention.hours=168\nmin.cleanable.dirty.ratio=0.5\n# c\n"))
	f.Add([]byte("retention.ms=99999999999999999999\n"))
	// The retention.ms and retention.bytes pairs Kafka's oracle ran with.
	files, _ := filepath.Glob("testdata/kafka-retention/*.json")
	seen := map[string]bool{}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var k kafkaRetention
		if err := json.Unmarshal(data, &k); err != nil {
			f.Fatal(err)
		}
		for _, c := range k.Cases {
			cfg := "retention.ms=" + strconv.FormatInt(c.RetentionMs, 10) + "\nretention.bytes=" + strconv.FormatInt(c.RetentionBytes, 10) + "\n"
			if !seen[cfg] {
				seen[cfg] = true
				f.Add([]byte(cfg))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseRetentionConfig(data, DefaultRetentionConfig())
		if err != nil {
			return
		}
		_ = cfg.policy("delete")
	})
}

// FuzzDiffLogs: a replica whose only segment holds arbitrary bytes is
// compared with a real one without a panic, and a replica is never both
// behind and diverged.
func FuzzDiffLogs(f *testing.F) {
	for _, name := range []string{"v2-none", "v2-gzip", "v1-snappy", "v0-none", "corrupt-crc-flipped", "corrupt-cut-mid-record"} {
		data, err := os.ReadFile(genLog(name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	ref := genLog("v2-none")
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "t-0")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := Diff([]string{filepath.Dir(ref), dir}, DiffOptions{Leader: -1, MaxBatchBytes: 1 << 20})
		if err != nil {
			return
		}
		for _, r := range rep.Replicas {
			if r.Behind && r.Diverged {
				t.Fatalf("%s: behind and diverged", r.Dir)
			}
		}
	})
}

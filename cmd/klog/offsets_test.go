package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOffsetsTime runs klog offsets --time on Kafka-written partitions; the
// expected answers are Kafka 4.3.1's (partition/testdata/kafka-listoffsets,
// clean_open and unclean_open).
func TestOffsetsTime(t *testing.T) {
	cases := []struct {
		name, fixture string
		args          []string
		want          string
	}{
		{"max-timestamp is a COMMIT marker", "v2-transactions", []string{"--time", "max-timestamp", "--json"},
			`{"type":"offsets","topic":"orders","partition":0,"dir":"DIR","offset":5,"timestamp":1700000000005,"leaderEpoch":1}` + "\n"},
		{"earliest without a leader-epoch-checkpoint", "v2-transactions", []string{"--time", "earliest", "--json"},
			`{"type":"offsets","topic":"orders","partition":0,"dir":"DIR","offset":0,"timestamp":-1,"leaderEpoch":-1}` + "\n"},
		{"latest read_committed is the last stable offset", "unifiedlog-producer/topic-0", []string{"--time", "latest", "--isolation", "read_committed", "--json"},
			`{"type":"offsets","topic":"orders","partition":0,"dir":"DIR","offset":48,"timestamp":-1,"leaderEpoch":3}` + "\n"},
		{"latest read_uncommitted", "unifiedlog-producer/topic-0", []string{"--time", "latest"}, "orders:0:49\n"},
		{"a timestamp", "unifiedlog-producer/topic-0", []string{"--time", "1700001000017", "--json"},
			`{"type":"offsets","topic":"orders","partition":0,"dir":"DIR","offset":16,"timestamp":1700001000020,"leaderEpoch":1}` + "\n"},
		{"RFC 3339", "unifiedlog-producer/topic-0", []string{"--time", "2023-11-14T22:30:00.017Z"}, "orders:0:16\n"},
		{"past every record", "unifiedlog-producer/topic-0", []string{"--time", "1700001000049"}, "orders:0:\n"},
		{"past every record, json", "unifiedlog-producer/topic-0", []string{"--time", "1700001000049", "--json"},
			`{"type":"offsets","topic":"orders","partition":0,"dir":"DIR","offset":-1,"timestamp":-1,"leaderEpoch":-1}` + "\n"},
		{"preallocated time index as found", "v2-active-segment-unclosed", []string{"--time", "max-timestamp"}, "orders:0:\n"},
		{"preallocated time index rebuilt", "v2-active-segment-unclosed", []string{"--time", "max-timestamp", "--rebuild-indexes"}, "orders:0:8\n"},
		{"v0 has no max timestamp", "unifiedlog-v0/topic-0", []string{"--time", "max-timestamp"}, "orders:0:\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := fixturePartition(t, c.fixture)
			setMtimes(t, dir, 1577836800000) // as the oracle ran
			code, out, errs := klog(t, append(append([]string{"offsets"}, c.args...), dir)...)
			if want := strings.ReplaceAll(c.want, "DIR", dir); code != ExitOK || out != want {
				t.Errorf("exit %d\n got %q\nwant %q\n%s", code, out, want, errs)
			}
		})
	}
}

// TestOffsetsModTime: a segment without time index entries is aged by its
// .log's modification time (set here with os.Chtimes).
func TestOffsetsModTime(t *testing.T) {
	dir := fixturePartition(t, "unifiedlog-producer/topic-0")
	if err := os.Truncate(filepath.Join(dir, "00000000000000000000.timeindex"), 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mtime int64
		want  string
	}{
		{1700001000009, "orders:0:16\n"}, // older than T: segment 0 is passed over
		{1700001000010, "orders:0:8\n"},  // not older: it is searched
	} {
		at := time.UnixMilli(c.mtime)
		if err := os.Chtimes(filepath.Join(dir, "00000000000000000000.log"), at, at); err != nil {
			t.Fatal(err)
		}
		code, out, errs := klog(t, "offsets", "--time", "1700001000010", dir)
		if code != ExitOK || out != c.want {
			t.Errorf("mtime %d: exit %d %q %s, want %q", c.mtime, code, out, errs, c.want)
		}
	}
}

func TestOffsetsUsage(t *testing.T) {
	dir := fixturePartition(t, "v2-none")
	for _, args := range [][]string{
		{"offsets", "--time", "yesterday", dir},
		{"offsets", "--time", "-5", dir},
		{"offsets", "--isolation", "serializable", dir},
		{"offsets"},
	} {
		if code, _, _ := klog(t, args...); code != ExitTrouble {
			t.Errorf("%v: exit %d, want %d", args, code, ExitTrouble)
		}
	}
}

// TestOffsetsNoPartition: a directory holding no partition directory is
// exit 2 with its name on stderr, never a silent exit 0; the other paths
// are still answered.
func TestOffsetsNoPartition(t *testing.T) {
	dir := fixturePartition(t, "v2-none")
	empty := t.TempDir()
	code, out, errs := klog(t, "offsets", empty)
	if code != ExitTrouble || out != "" || !strings.Contains(errs, empty+": no partition directory found") {
		t.Errorf("empty dir: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = klog(t, "offsets", empty, dir)
	if code != ExitTrouble || strings.Count(out, "\n") != 1 || !strings.Contains(errs, "no partition directory found") {
		t.Errorf("empty dir and a partition: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func setMtimes(t *testing.T, dir string, ms int64) {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(ms)
	for _, de := range des {
		if err := os.Chtimes(filepath.Join(dir, de.Name()), at, at); err != nil {
			t.Fatal(err)
		}
	}
}

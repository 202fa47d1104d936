package inspect

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/replicate"
	"github.com/klog-dev/klog/verify"
)

// snapshotBroker copies a broker's partition directory and its log dir's
// replication-offset-checkpoint, as an operator would collect them.
func snapshotBroker(t *testing.T, b *replicate.Broker, dst string) string {
	t.Helper()
	pd := filepath.Join(dst, "broker-"+strconv.Itoa(int(b.ID)), filepath.Base(b.Dir))
	if err := os.MkdirAll(pd, 0o755); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(b.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		copyFile(t, filepath.Join(b.Dir, de.Name()), filepath.Join(pd, de.Name()))
	}
	cp := filepath.Join(filepath.Dir(b.Dir), partition.ReplicationCheckpoint)
	if _, err := os.Stat(cp); err == nil {
		copyFile(t, cp, filepath.Join(filepath.Dir(pd), partition.ReplicationCheckpoint))
	}
	return pd
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func values(n int, prefix string) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(prefix + strconv.Itoa(i))
	}
	return out
}

// TestDiffReplicateCrash runs klog replicate's crash/restart scenarios,
// snapshots every broker just before the old leader restarts, diffs the
// snapshots with the new leader as leader, and checks that the truncation
// diff names for each replica is the truncation replicate then performs.
func TestDiffReplicateCrash(t *testing.T) {
	cases := []struct {
		name string
		// acksOne are batches (of 2 records) the old leader takes with
		// acks=1 before it crashes; after are batches the new leader
		// takes afterwards; crashes is how many leaders crash in turn.
		acksOne, after, crashes int
		stopThird               bool
		wantDiverged            bool
	}{
		{name: "acks=1 batch lost on the old leader", acksOne: 1, after: 1, crashes: 1, wantDiverged: true},
		{name: "several acks=1 batches lost", acksOne: 3, after: 2, crashes: 1, wantDiverged: true},
		{name: "nothing after the election", acksOne: 2, after: 0, crashes: 1, wantDiverged: true},
		{name: "clean election: nothing above the high watermark", acksOne: 0, after: 2, crashes: 1, wantDiverged: false},
		{name: "two elections in a row", acksOne: 1, after: 1, crashes: 2, wantDiverged: true},
		{name: "stopped follower is only behind", acksOne: 0, after: 3, crashes: 0, stopThird: true, wantDiverged: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := replicate.New(replicate.Config{Dir: t.TempDir(), Topic: "orders", Brokers: []int32{1, 2, 3}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Preload(5); err != nil {
				t.Fatal(err)
			}
			all := c.Produce(values(2, "all-"), replicate.AcksAll)
			for i := 0; i < 5 && !all.Done; i++ {
				c.Step()
			}
			if tc.stopThird {
				c.Stop(3)
			}
			var crashed []int32
			for k := 0; k < tc.crashes; k++ {
				for i := 0; i < tc.acksOne; i++ {
					c.Produce(values(2, "one-"), replicate.AcksLeader)
				}
				crashed = append(crashed, c.Leader().ID)
				if _, err := c.CrashLeader(); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < tc.after; i++ {
				c.Produce(values(2, "after-"), replicate.AcksLeader)
				c.Step()
			}
			snap := t.TempDir()
			var dirs []string
			leader := -1
			for i, b := range c.Brokers() {
				dirs = append(dirs, snapshotBroker(t, b, snap))
				if b == c.Leader() {
					leader = i
				}
			}
			rep, err := Diff(dirs, DiffOptions{Leader: leader})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Diverged != tc.wantDiverged {
				t.Errorf("diverged %v, want %v", rep.Diverged, tc.wantDiverged)
			}
			withRecords, err := Diff(dirs, DiffOptions{Leader: leader, Records: true})
			if err != nil {
				t.Fatal(err)
			}
			// The records the old leaders lose are the acks=1 ones.
			for _, id := range crashed {
				r := withRecords.Replicas[indexOf(c, id)]
				var lost int64
				for _, b := range r.ExtraBatches {
					for _, rec := range b.RecordList {
						if *r.TruncateTo <= rec.Offset {
							lost++
							if !strings.HasPrefix(string(rec.Value), "one-") {
								t.Errorf("broker %d loses offset %d %q, not an acks=1 record", id, rec.Offset, rec.Value)
							}
						}
					}
				}
				if lost != r.LostRecords {
					t.Errorf("broker %d: %d records listed above the truncation, %d lost", id, lost, r.LostRecords)
				}
			}
			inferred, err := Diff(dirs, DiffOptions{Leader: -1})
			if err != nil {
				t.Fatal(err)
			}
			if tc.crashes > 0 && inferred.Leader != rep.Leader {
				t.Errorf("inferred leader %s, want %s", inferred.Leader, rep.Leader)
			}
			// What replicate does: restart the stopped brokers, which
			// truncate by the leader-epoch rule.
			restart := crashed
			if tc.stopThird {
				restart = append(restart, 3)
			}
			for _, id := range restart {
				b := c.Broker(id)
				r := &rep.Replicas[indexOf(c, id)]
				before := r.LogEndOffset
				if err := c.Restart(id); err != nil {
					t.Fatal(err)
				}
				if r.TruncateTo == nil || *r.TruncateTo != b.LEO() {
					t.Errorf("broker %d: diff says truncate to %v, replicate truncated %d -> %d", id, r.TruncateTo, before, b.LEO())
				}
				if r.LostRecords != before-b.LEO() {
					t.Errorf("broker %d: diff says %d records lost, replicate removed %d", id, r.LostRecords, before-b.LEO())
				}
			}
			if tc.wantDiverged && rep.DivergentOffset == nil {
				t.Errorf("no divergent offset")
			}
			if tc.stopThird {
				r := rep.Replicas[2]
				if !r.Behind || r.Diverged {
					t.Errorf("stopped follower: behind %v diverged %v, want behind only", r.Behind, r.Diverged)
				}
			}
		})
	}
}

func indexOf(c *replicate.Cluster, id int32) int {
	for i, b := range c.Brokers() {
		if b.ID == id {
			return i
		}
	}
	return -1
}

// twoReplicas builds the same hand-made partition twice (epoch-less, no
// leader-epoch-checkpoint) and returns both directories.
func twoReplicas(t *testing.T) (string, string) {
	t.Helper()
	segs := []seg{{3, 1700000000000, true}, {4, 1700000001000, true}, {2, 1700000002000, true}}
	a, _ := buildPartition(t, segs, 1700000000000)
	b, _ := buildPartition(t, segs, 1700000000000)
	return a, b
}

func TestDiffCases(t *testing.T) {
	cases := []struct {
		name      string
		edit      func(t *testing.T, b string)
		identical bool
		diverged  bool
		common    int64
		divergent int64 // -1: none
		problems  bool
	}{
		{"identical", nil, true, false, 8, -1, false},
		{"log start differs after retention: not diverged", func(t *testing.T, b string) {
			os.Remove(filepath.Join(b, partition.FileName(0, partition.LogSuffix)))
		}, false, false, 8, -1, false},
		{"follower behind", func(t *testing.T, b string) {
			os.Remove(filepath.Join(b, partition.FileName(7, partition.LogSuffix)))
		}, false, false, 6, -1, false},
		{"a flipped CRC byte diverges", func(t *testing.T, b string) {
			p := filepath.Join(b, partition.FileName(3, partition.LogSuffix))
			data, _ := os.ReadFile(p)
			data[18] ^= 1
			os.WriteFile(p, data, 0o644)
		}, false, true, 2, 3, false},
		{"a cut tail is a finding", func(t *testing.T, b string) {
			p := filepath.Join(b, partition.FileName(7, partition.LogSuffix))
			data, _ := os.ReadFile(p)
			os.WriteFile(p, data[:len(data)-5], 0o644)
		}, false, false, 6, -1, true},
		{"a zero tail (preallocated) is not", func(t *testing.T, b string) {
			p := filepath.Join(b, partition.FileName(7, partition.LogSuffix))
			data, _ := os.ReadFile(p)
			os.WriteFile(p, append(data, make([]byte, 100)...), 0o644)
		}, true, false, 8, -1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := twoReplicas(t)
			if tc.edit != nil {
				tc.edit(t, b)
			}
			rep, err := Diff([]string{a, b}, DiffOptions{Leader: 0})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Identical != tc.identical || rep.Diverged != tc.diverged || rep.CommonOffset != tc.common {
				t.Errorf("identical %v diverged %v common %d, want %v %v %d", rep.Identical, rep.Diverged, rep.CommonOffset, tc.identical, tc.diverged, tc.common)
			}
			if (rep.DivergentOffset == nil) != (tc.divergent < 0) || (rep.DivergentOffset != nil && *rep.DivergentOffset != tc.divergent) {
				t.Errorf("divergent offset %v, want %d", rep.DivergentOffset, tc.divergent)
			}
			if got := len(rep.Replicas[1].Problems) > 0; got != tc.problems {
				t.Errorf("problems %v", rep.Replicas[1].Problems)
			}
			// Every problem here is the data's: a finding, never trouble.
			n, first, trouble := rep.Findings()
			if trouble || (n > 0) != tc.problems || (n > 0) != (first != nil) {
				t.Errorf("Findings() = %d, %+v, trouble %v", n, first, trouble)
			}
			if n > 0 && (first.Kind != verify.KindTruncated || first.Offset != 7 || !strings.HasSuffix(first.Path, "00000000000000000007.log")) {
				t.Errorf("first finding %+v, want a truncated batch in a .log", first)
			}
			if rep.Replicas[0].EpochSource != "batches" {
				t.Errorf("epoch source %s", rep.Replicas[0].EpochSource)
			}
		})
	}
}

// TestDiffLegacyReplicas: v1 batches carry no leader epoch, so a follower
// without a checkpoint truncates to its high watermark (0 here) and fetches
// everything again: nothing is lost and nothing diverged.
func TestDiffLegacyReplicas(t *testing.T) {
	var dirs []string
	for i := 0; i < 2; i++ {
		d := filepath.Join(t.TempDir(), "t-0")
		os.MkdirAll(d, 0o755)
		copyFile(t, genLog("v1-none"), filepath.Join(d, "00000000000000000000.log"))
		dirs = append(dirs, d)
	}
	rep, err := Diff(dirs, DiffOptions{Leader: 0})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Replicas[1]
	if !rep.Identical || rep.Diverged || r.TruncateTo == nil || *r.TruncateTo != 0 || r.LostRecords != 0 || len(r.Epochs) != 0 {
		t.Fatalf("identical %v diverged %v truncate %v lost %d epochs %v", rep.Identical, rep.Diverged, r.TruncateTo, r.LostRecords, r.Epochs)
	}
}

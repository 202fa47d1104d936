package serve

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestStateDirBounded: a hostile client (kmsg over loopback) commits
// under hundreds of group ids, then 4000-byte metadata over and over
// under one of them, to a read-only server with a 256 KiB, 16-group state
// directory. The directory never holds more than the cap (compaction
// keeps the updates of the groups it took), new groups past the bound are
// refused COORDINATOR_NOT_AVAILABLE, and a normal consumer group that was
// there before still commits; a restarted server loads the compacted
// state.
func TestStateDirBounded(t *testing.T) {
	dir := fixtureLogDir(t, "multi-0", "multi-1", "multi-2", "none-0")
	state := t.TempDir()
	const maxBytes, maxGroups = 256 << 10, 16
	cfg := Config{LogDir: dir, StateDir: state, StateMaxBytes: maxBytes, StateMaxGroups: maxGroups}
	srv, addr := startServer(t, cfg)
	normal := stableMember(t, addr, "normal", "multi")
	defer normal.Close()

	commit := func(w *wire, group string, meta string) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.Generation = 8, group, -1
		for _, topic := range []string{"multi", "none"} {
			rt := kmsg.OffsetCommitRequestTopic{Topic: topic}
			for p := int32(0); p < 3 && (topic == "multi" || p == 0); p++ {
				rt.Partitions = append(rt.Partitions, kmsg.OffsetCommitRequestTopicPartition{Partition: p, Offset: 1, LeaderEpoch: -1, Metadata: kmsg.StringPtr(meta)})
			}
			req.Topics = append(req.Topics, rt)
		}
		return w.do(req).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	}
	checkSize := func(when string) {
		t.Helper()
		if n := treeSize(t, state); n > maxBytes {
			t.Fatalf("%s: the state dir holds %d bytes, over its %d", when, n, maxBytes)
		}
	}
	w := dial(t, addr)
	taken, refused := 0, 0
	for i := 0; i < 300; i++ {
		switch code := commit(w, "hostile-"+strconv.Itoa(i), ""); code {
		case 0:
			taken++
		case kerr.CoordinatorNotAvailable.Code:
			refused++
		default:
			t.Fatalf("hostile-%d: error %d", i, code)
		}
		checkSize("hostile-" + strconv.Itoa(i))
	}
	t.Logf("%d new groups taken, %d refused", taken, refused)
	if taken != maxGroups-1 || refused != 300-taken {
		t.Errorf("%d new groups taken, %d refused; want %d taken (the bound, less the normal group)", taken, refused, maxGroups-1)
	}
	// Updates of a group it took: 300 commits of 16 KB, 5 MB in all,
	// fit 256 KiB by compaction.
	meta := strings.Repeat("m", 4000)
	for i := 0; i < 300; i++ {
		if code := commit(w, "hostile-0", meta); code != 0 {
			t.Fatalf("update %d of hostile-0: error %d", i, code)
		}
		checkSize("update " + strconv.Itoa(i))
	}
	// A new group is still refused, whatever it commits.
	if code := commit(w, "late", meta); code != kerr.CoordinatorNotAvailable.Code {
		t.Errorf("a new group past the bound: error %d", code)
	}
	// The normal group commits as before.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var cerr error
	normal.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{"multi": {0: {Epoch: -1, Offset: 2}}},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, _ *kmsg.OffsetCommitResponse, err error) { cerr = err })
	if cerr != nil {
		t.Fatalf("the normal group's commit: %v", cerr)
	}
	adm := kadm.NewClient(mustKgo(t, addr))
	defer adm.Close()
	if o, err := adm.FetchOffsets(ctx, "normal"); err != nil || o["multi"][0].At != 2 {
		t.Errorf("the normal group's offset: %v %v", o["multi"][0], err)
	}
	normal.Close()
	// A restart loads the compacted state.
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	_, addr2 := startServer(t, cfg)
	adm2 := kadm.NewClient(mustKgo(t, addr2))
	defer adm2.Close()
	for group, want := range map[string]int64{"normal": 2, "hostile-0": 1} {
		if o, err := adm2.FetchOffsets(ctx, group); err != nil || o["multi"][0].At != want {
			t.Errorf("%s after the restart: %v %v, want %d", group, o["multi"][0], err, want)
		}
	}
}

func treeSize(t *testing.T, dir string) int64 {
	var n int64
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	return n
}

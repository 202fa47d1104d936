package serve

import (
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/fetch"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKgoPartitionConsumer: a franz-go partition consumer reads through
// klog serve exactly the records `klog dump --json --deep-iteration` shows
// (read_uncommitted), and exactly what package fetch's consumer (`klog
// fetch --isolation read_committed`) gives for read_committed, for every
// codec, legacy magic, multi-segment and transactional partition, and the
// log dir's bytes are unchanged.
func TestKgoPartitionConsumer(t *testing.T) {
	dir := fixtureLogDir(t)
	before := hashTree(t, dir)
	_, addr := startServer(t, Config{LogDir: dir})
	for name := range fixtureTopics {
		topic, part := name[:len(name)-2], int32(name[len(name)-1]-'0')
		t.Run(name, func(t *testing.T) {
			pd := filepath.Join(dir, name)
			want := dumpRecords(t, pd)
			got := consumeKgo(t, addr, topic, part, kgo.ReadUncommitted(), len(want))
			sameRecs(t, "read_uncommitted vs dump", got, want)
			wantRC := fetchRecords(t, pd, fetch.ReadCommitted)
			if len(wantRC) == 0 {
				return
			}
			gotRC := consumeKgo(t, addr, topic, part, kgo.ReadCommitted(), len(wantRC))
			sameRecs(t, "read_committed vs klog fetch", gotRC, wantRC)
		})
	}
	if after := hashTree(t, dir); after != before {
		t.Fatalf("read-only serve changed the log dir")
	}
}

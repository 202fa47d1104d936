package serve

import (
	"context"
	"encoding/hex"
	"strconv"
	"testing"
	"time"

	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/objstore"
	"github.com/klog-dev/klog/tiered"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const tieredFixtures = "../tiered/testdata/kafka-written"

// TestRemoteTierConsume: an unmodified client (franz-go) consumes a
// tiered partition from its earliest offset: offsets 8-28 come from the
// remote tier (LocalTieredStorage, and Aiven's zstd + AES-GCM objects),
// 29-33 from the local tail; ListOffsets answers -2, -4 and -5 as a broker
// with tiered storage does.
func TestRemoteTierConsume(t *testing.T) {
	keys, err := tiered.ReadPrivateKey(tieredFixtures + "/aiven/keys/private.pem")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, store, logdir string }{
		{"local-tiered", "/local-tiered/remote", "/local-tiered/broker-logdir"},
		{"aiven-zstd-encrypted", "/aiven/zstd-encrypted/storage", "/aiven/zstd-encrypted/broker-logdir"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := objstore.NewDir(tieredFixtures + c.store)
			if err != nil {
				t.Fatal(err)
			}
			logDir := t.TempDir()
			klogtest.CopyLogDir(t, tieredFixtures+c.logdir, logDir)
			_, addr := startServer(t, Config{LogDir: logDir, Remote: &tiered.Remote{Store: st, Keys: tiered.KeyRing{"key1": keys}}})
			recs := consumeKgo(t, addr, "orders", 0, kgo.ReadUncommitted(), 25)
			want := int64(8)
			for _, r := range recs {
				if want == 19 {
					want++ // the ABORT marker is not a record
				}
				if r.Offset != want || r.Key != hex.EncodeToString([]byte("order-"+strconv.FormatInt(r.Offset, 10))) {
					t.Fatalf("record %d (key %s), want offset %d", r.Offset, r.Key, want)
				}
				want++
			}
			if want != 34 {
				t.Errorf("consumed up to %d, want 33", want-1)
			}
			cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			for _, q := range []struct {
				ts   int64
				want int64
			}{{-2, 8}, {-4, 29}, {-5, 28}, {-1, 34}, {1700000015500, 16}, {1700000030500, 31}} {
				req := kmsg.NewPtrListOffsetsRequest()
				rt := kmsg.NewListOffsetsRequestTopic()
				rt.Topic = "orders"
				rp := kmsg.NewListOffsetsRequestTopicPartition()
				rp.Timestamp = q.ts
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				resp, err := req.RequestWith(ctx, cl)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				p := resp.Topics[0].Partitions[0]
				if p.ErrorCode != 0 || p.Offset != q.want {
					t.Errorf("ListOffsets %d = offset %d (error %d), want %d", q.ts, p.Offset, p.ErrorCode, q.want)
				}
			}
		})
	}
}

// TestRemoteTierKcat: librdkafka (kcat -C -o beginning -e) replays a
// tiered partition, remote segments first, from an unmodified client.
func TestRemoteTierKcat(t *testing.T) {
	kcat := needClient(t, "kcat", "-V")
	st, err := objstore.NewDir(tieredFixtures + "/local-tiered/remote")
	if err != nil {
		t.Fatal(err)
	}
	logDir := t.TempDir()
	klogtest.CopyLogDir(t, tieredFixtures+"/local-tiered/broker-logdir", logDir)
	_, addr := startServer(t, Config{LogDir: logDir, Remote: &tiered.Remote{Store: st}})
	got := runClient(t, "", kcat, "-C", "-b", addr, "-t", "orders", "-p", "0", "-o", "beginning", "-e", "-q", "-f", `%o %k\n`)
	var want string
	for o := 8; o <= 33; o++ {
		if o == 19 {
			continue // the ABORT marker
		}
		want += strconv.Itoa(o) + " order-" + strconv.Itoa(o) + "\n"
	}
	if got != want {
		t.Errorf("kcat read:\n%s\nwant:\n%s", got, want)
	}
}

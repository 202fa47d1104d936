package kraft

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
	it "github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/partition"
)

// logBuilder writes a __cluster_metadata segment or snapshot from records
// in Kafka's JSON (the --cluster-metadata-decoder payload), one batch per
// call, with real offsets, epochs and CRCs.
type logBuilder struct {
	t     *testing.T
	buf   []byte
	next  int64
	epoch int32
	c     format.Compressor
}

func (lb *logBuilder) batch(records ...string) *logBuilder {
	lb.t.Helper()
	recs := make([]format.Record, len(records))
	for i, js := range records {
		v, err := it.EncodeMetadataJSON([]byte(js))
		if err != nil {
			lb.t.Fatalf("%v: %s", err, js)
		}
		recs[i] = format.Record{Offset: lb.next + int64(i), Timestamp: 1700000000000 + lb.next + int64(i), Value: v}
	}
	lb.append(recs, false)
	return lb
}

func (lb *logBuilder) append(recs []format.Record, control bool) {
	lb.t.Helper()
	h := format.Batch{BaseOffset: lb.next, PartitionLeaderEpoch: lb.epoch, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	if control {
		h.Attributes = 1 << 5
	}
	format.PrepareBatch(&h, recs)
	var err error
	if lb.buf, err = lb.c.AppendBatch(lb.buf, &h, recs); err != nil {
		lb.t.Fatal(err)
	}
	lb.next += int64(len(recs))
}

// leaderChange appends a LEADER_CHANGE control batch.
func (lb *logBuilder) leaderChange(leader int32, voters ...int32) *logBuilder {
	v := binary.BigEndian.AppendUint16(nil, 0)
	v = binary.BigEndian.AppendUint32(v, uint32(leader))
	for range 2 { // voters, granting voters
		v = binary.AppendUvarint(v, uint64(len(voters)+1))
		for _, id := range voters {
			v = binary.BigEndian.AppendUint32(v, uint32(id))
			v = append(v, 0) // tags
		}
	}
	v = append(v, 0)
	lb.append([]format.Record{{Offset: lb.next, Timestamp: 1700000000000, Key: format.AppendControlKey(nil, format.ControlLeaderChange), Value: v}}, true)
	return lb
}

func (lb *logBuilder) write(path string) {
	lb.t.Helper()
	if err := os.WriteFile(path, lb.buf, 0o644); err != nil {
		lb.t.Fatal(err)
	}
}

func newLog(t *testing.T, base int64) *logBuilder { return &logBuilder{t: t, next: base, epoch: 3} }

const (
	topicOrders = `{"type":"TOPIC_RECORD","version":0,"data":{"name":"orders","topicId":"pcgBguOASiq3ujkTrGu_Qw"}}`
	broker1     = `{"type":"REGISTER_BROKER_RECORD","version":3,"data":{"brokerId":1,"isMigratingZkBroker":false,"incarnationId":"rRet3rr1S5G6-IfoHo2Eow","brokerEpoch":10,"endPoints":[{"name":"PLAINTEXT","host":"b1","port":9092,"securityProtocol":0}],"features":[],"rack":null,"fenced":true,"inControlledShutdown":false,"logDirs":["DuF3GEJ3RHuB62-zMzajeA"]}}`
)

func partitionRec(p, leader int, replicas string) string {
	return `{"type":"PARTITION_RECORD","version":0,"data":{"partitionId":` + itoa(int32(p)) + `,"topicId":"pcgBguOASiq3ujkTrGu_Qw","replicas":` + replicas +
		`,"isr":` + replicas + `,"removingReplicas":[],"addingReplicas":[],"leader":` + itoa(int32(leader)) + `,"leaderEpoch":0,"partitionEpoch":0}}`
}

func change(p int, fields string) string {
	if fields != "" {
		fields = "," + fields
	}
	return `{"type":"PARTITION_CHANGE_RECORD","version":1,"data":{"partitionId":` + itoa(int32(p)) + `,"topicId":"pcgBguOASiq3ujkTrGu_Qw"` + fields + `}}`
}

func load(t *testing.T, dir string, opts Options) *Image {
	t.Helper()
	im, err := Load(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return im
}

func metaDir(t *testing.T) string {
	d := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestPartitionChangeSemantics: PartitionRegistration.merge, record by
// record: a leader bumps the leader epoch, every change the partition
// epoch, absent fields keep their value, directories default to MIGRATING.
func TestPartitionChangeSemantics(t *testing.T) {
	t.Parallel()
	type want struct {
		leader, leaderEpoch, partitionEpoch int32
		isr, replicas                       string
		lrs                                 string
		dirs                                int
	}
	tests := []struct {
		name    string
		changes []string
		want    want
	}{
		{"no change", nil, want{1, 0, 0, "1,2,3", "1,2,3", "RECOVERED", 3}},
		{"isr shrink keeps the leader epoch", []string{change(0, `"isr":[1,2]`)}, want{1, 0, 1, "1,2", "1,2,3", "RECOVERED", 3}},
		{"a new leader bumps both epochs", []string{change(0, `"leader":2`)}, want{2, 1, 1, "1,2,3", "1,2,3", "RECOVERED", 3}},
		{"the same leader again still bumps the leader epoch", []string{change(0, `"leader":1`), change(0, `"leader":1`)}, want{1, 2, 2, "1,2,3", "1,2,3", "RECOVERED", 3}},
		{"no leader", []string{change(0, `"leader":-1,"isr":[]`)}, want{-1, 1, 1, "", "1,2,3", "RECOVERED", 3}},
		{"unclean election", []string{change(0, `"leader":3,"isr":[3],"leaderRecoveryState":1`)}, want{3, 1, 1, "3", "1,2,3", "RECOVERING", 3}},
		{"recovered", []string{change(0, `"leader":3,"isr":[3],"leaderRecoveryState":1`), change(0, `"leaderRecoveryState":0`)}, want{3, 1, 2, "3", "1,2,3", "RECOVERED", 3}},
		{"reassignment", []string{change(0, `"replicas":[1,2,3,4],"addingReplicas":[4]`), change(0, `"replicas":[2,3,4],"addingReplicas":[],"isr":[2,3,4],"leader":2`)},
			want{2, 1, 2, "2,3,4", "2,3,4", "RECOVERED", 3}},
		{"an empty change still bumps the partition epoch", []string{change(0, "")}, want{1, 0, 1, "1,2,3", "1,2,3", "RECOVERED", 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := metaDir(t)
			lb := newLog(t, 0).batch(topicOrders, partitionRec(0, 1, "[1,2,3]"))
			for _, c := range tc.changes {
				lb.batch(c)
			}
			lb.write(filepath.Join(d, partition.FileName(0, ".log")))
			im := load(t, d, Options{UpTo: -1})
			if im.ProblemCount != 0 {
				t.Fatalf("problems: %v", im.Problems)
			}
			p := im.Topic("orders").Partition(0)
			got := want{p.Leader, p.LeaderEpoch, p.PartitionEpoch, ints(p.Isr), ints(p.Replicas), p.LeaderRecoveryState, len(p.Directories)}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			for _, dir := range p.Directories {
				if dir != Migrating {
					t.Errorf("directory %v, want MIGRATING", dir)
				}
			}
		})
	}
}

// TestReplayProblems: what Kafka's loader throws on becomes a problem, the
// record is not applied, and the replay goes on.
func TestReplayProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		record string
		want   string
	}{
		{"change of an unknown partition", change(9, `"leader":1`), "Unable to find partition pcgBguOASiq3ujkTrGu_Qw:9"},
		{"fence at the wrong epoch", `{"type":"FENCE_BROKER_RECORD","version":0,"data":{"id":1,"epoch":9}}`, "did not match the current broker epoch, 10"},
		{"unfence of an unknown broker", `{"type":"UNFENCE_BROKER_RECORD","version":0,"data":{"id":7,"epoch":1}}`, "broker 7, but that broker was not registered"},
		{"removal of an unknown topic", `{"type":"REMOVE_TOPIC_RECORD","version":0,"data":{"topicId":"DuF3GEJ3RHuB62-zMzajeA"}}`, "no such topic found"},
		{"removal of an unknown ACL", `{"type":"REMOVE_ACCESS_CONTROL_ENTRY_RECORD","version":0,"data":{"id":"DuF3GEJ3RHuB62-zMzajeA"}}`, "Failed to find existing ACL"},
		{"ELR of an unknown topic", `{"type":"CLEAR_ELR_RECORD","version":0,"data":{"topicName":"nope"}}`, "no such topic found"},
		{"end without begin", `{"type":"END_TRANSACTION_RECORD","version":0,"data":{}}`, "without having seen a BeginTransactionRecord"},
		{"directories that do not match the replicas", change(0, `"replicas":[1,2],"directories":["DuF3GEJ3RHuB62-zMzajeA"]`), "do not match"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := metaDir(t)
			newLog(t, 0).batch(broker1, topicOrders, partitionRec(0, 1, "[1]")).batch(tc.record).
				batch(change(0, `"leader":1`)).write(filepath.Join(d, partition.FileName(0, ".log")))
			im := load(t, d, Options{UpTo: -1})
			if im.ProblemCount != 1 || !strings.Contains(im.Problems[0].Message, tc.want) || im.Problems[0].Offset != 3 {
				t.Fatalf("problems %v, want one at offset 3 saying %q", im.Problems, tc.want)
			}
			if p := im.Topic("orders").Partition(0); p.LeaderEpoch != 1 {
				t.Errorf("the replay did not go on after the problem: %+v", p)
			}
		})
	}
}

// TestReplayEverything: each part of the image from its records.
func TestReplayEverything(t *testing.T) {
	t.Parallel()
	d := metaDir(t)
	newLog(t, 0).
		batch(`{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":27}}`,
			`{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"group.version","featureLevel":1}}`,
			`{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"share.version","featureLevel":1}}`,
			broker1,
			`{"type":"REGISTER_CONTROLLER_RECORD","version":0,"data":{"controllerId":3000,"incarnationId":"rRet3rr1S5G6-IfoHo2Eow","zkMigrationReady":false,"endPoints":[{"name":"CONTROLLER","host":"c","port":9093,"securityProtocol":0}],"features":[]}}`).
		batch(`{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"share.version","featureLevel":0}}`,
			`{"type":"UNFENCE_BROKER_RECORD","version":0,"data":{"id":1,"epoch":10}}`,
			`{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":2,"data":{"brokerId":1,"brokerEpoch":10,"inControlledShutdown":1,"logDirs":["pcgBguOASiq3ujkTrGu_Qw","DuF3GEJ3RHuB62-zMzajeA"]}}`,
			topicOrders, partitionRec(0, 1, "[1]"), partitionRec(1, 1, "[1]"),
			`{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":2,"resourceName":"orders","name":"retention.ms","value":"1000"}}`,
			`{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":4,"resourceName":"","name":"min.insync.replicas","value":"1"}}`,
			`{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":4,"resourceName":"1","name":"log.cleaner.threads","value":"2"}}`,
			`{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":4,"resourceName":"1","name":"log.cleaner.threads","value":null}}`,
			`{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[{"entityType":"user","entityName":"alice"},{"entityType":"client-id","entityName":null}],"key":"producer_byte_rate","value":1024.0,"remove":false}}`,
			`{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[{"entityType":"user","entityName":"bob"}],"key":"consumer_byte_rate","value":5.0,"remove":false}}`,
			`{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[{"entityType":"user","entityName":"bob"}],"key":"consumer_byte_rate","value":0.0,"remove":true}}`,
			`{"type":"PRODUCER_IDS_RECORD","version":0,"data":{"brokerId":1,"brokerEpoch":10,"nextProducerId":1000}}`,
			`{"type":"PRODUCER_IDS_RECORD","version":0,"data":{"brokerId":1,"brokerEpoch":10,"nextProducerId":2000}}`,
			`{"type":"ACCESS_CONTROL_ENTRY_RECORD","version":0,"data":{"id":"pcgBguOASiq3ujkTrGu_Qw","resourceType":2,"resourceName":"orders","patternType":3,"principal":"User:alice","host":"*","operation":3,"permissionType":3}}`,
			`{"type":"ACCESS_CONTROL_ENTRY_RECORD","version":0,"data":{"id":"DuF3GEJ3RHuB62-zMzajeA","resourceType":2,"resourceName":"orders","patternType":3,"principal":"User:bob","host":"*","operation":4,"permissionType":2}}`,
			`{"type":"REMOVE_ACCESS_CONTROL_ENTRY_RECORD","version":0,"data":{"id":"DuF3GEJ3RHuB62-zMzajeA"}}`,
			`{"type":"DELEGATION_TOKEN_RECORD","version":0,"data":{"owner":"User:a","requester":"User:a","renewers":[],"issueTimestamp":1,"maxTimestamp":3,"expirationTimestamp":2,"tokenId":"t1"}}`,
			`{"type":"USER_SCRAM_CREDENTIAL_RECORD","version":0,"data":{"name":"alice","mechanism":2,"salt":"c2FsdA==","storedKey":"a2V5","serverKey":"c2tleQ==","iterations":8192}}`).
		leaderChange(3000, 3000).
		write(filepath.Join(d, partition.FileName(0, ".log")))
	im := load(t, d, Options{UpTo: -1})
	if im.ProblemCount != 0 {
		t.Fatalf("problems: %v", im.Problems)
	}
	if im.Features.MetadataVersion != 27 || im.Features.MetadataVersionName != "4.1-IV1" || len(im.Features.Finalized) != 1 || im.Features.Finalized["group.version"] != 1 {
		t.Errorf("features %+v", im.Features)
	}
	b := im.Broker(1)
	if b == nil || b.Fenced || !b.InControlledShutdown || len(b.Directories) != 2 || b.Directories[0].String() != "pcgBguOASiq3ujkTrGu_Qw" {
		t.Errorf("broker %+v (directories sorted as Uuid.compareTo: pcgB... has its top bit set, a negative long)", b)
	}
	if len(im.Controllers) != 1 || im.Controllers[0].ID != 3000 || im.Quorum.Leader != 3000 || im.Quorum.LeaderEpoch != 3 {
		t.Errorf("controllers %+v, quorum %+v", im.Controllers, im.Quorum)
	}
	if len(im.Configs) != 2 || im.Configs[0].ResourceName != "" || im.Configs[1].ResourceType != "TOPIC" || im.Configs[1].Configs["retention.ms"] != "1000" {
		t.Errorf("configs %+v (BROKER:1 left when its only key was removed)", im.Configs)
	}
	if len(im.ClientQuotas) != 1 || im.ClientQuotas[0].Name != "clientId(<default>)_user(alice)" || im.ClientQuotas[0].Quotas["producer_byte_rate"] != 1024 {
		t.Errorf("quotas %+v", im.ClientQuotas)
	}
	if pid := im.ProducerIDs; pid.NextProducerID != 2000 || len(pid.Blocks) != 1 || pid.Blocks[0].FirstProducerID != 1000 || pid.Blocks[0].Size != 1000 {
		t.Errorf("producer ids %+v", pid)
	}
	if len(im.ACLs) != 1 || im.ACLs[0].Principal != "User:alice" || im.ACLs[0].Operation != "READ" || im.ACLs[0].PermissionType != "ALLOW" || im.ACLs[0].PatternType != "LITERAL" {
		t.Errorf("acls %+v", im.ACLs)
	}
	if len(im.Tokens) != 1 || len(im.Scram) != 1 || im.Scram[0].Mechanism != "SCRAM-SHA-512" || im.Scram[0].Iterations != 8192 {
		t.Errorf("tokens %+v, scram %+v", im.Tokens, im.Scram)
	}
	if p := im.Provenance; p.LastContainedOffset != 25 || p.LastContainedEpoch != 3 || p.Records != 26 || p.Batches != 3 {
		t.Errorf("provenance %+v", p)
	}

	// The tree names what the image holds.
	tree := im.Tree()
	for path, want := range map[string]string{
		"/topics/orders/id":                                                "pcgBguOASiq3ujkTrGu_Qw",
		"/topicIds/pcgBguOASiq3ujkTrGu_Qw":                                 "orders",
		"/configs/TOPIC:orders/retention.ms":                               "1000",
		"/configs/BROKER/min.insync.replicas":                              "1",
		"/features/metadataVersion":                                        "4.1-IV1 (level 27)",
		"/features/finalized_group.version":                                "1",
		"/producerIds/nextProducerId":                                      "2000",
		"/scram/SCRAM-SHA-512/alice":                                       `{"name":"alice","mechanism":"SCRAM-SHA-512","iterations":8192}`,
		"/clientQuotas/clientId(<default>)_user(alice)/producer_byte_rate": "1024",
	} {
		ms, err := tree.Find(path)
		if err != nil || len(ms) != 1 || valueText(ms[0].Node.Value) != want {
			t.Errorf("%s: %v %v, want %s", path, ms, err, want)
		}
	}
	if ms, err := tree.Find("/topics/*/?"); err != nil || len(ms) != 2 {
		t.Errorf("glob: %v %v", ms, err)
	}
	if _, err := tree.Find("/topics/nope"); err != ErrNoNode {
		t.Errorf("missing path: %v", err)
	}
}

// TestRemoveTopicAndElr: RemoveTopicRecord takes the topic's configs with
// it; ClearElrRecord clears ELRs through merge.
func TestRemoveTopicAndElr(t *testing.T) {
	t.Parallel()
	d := metaDir(t)
	newLog(t, 0).batch(topicOrders, partitionRec(0, 1, "[1,2]"),
		`{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":2,"resourceName":"orders","name":"retention.ms","value":"1000"}}`,
		`{"type":"TOPIC_RECORD","version":0,"data":{"name":"keep","topicId":"DuF3GEJ3RHuB62-zMzajeA"}}`,
		`{"type":"PARTITION_RECORD","version":2,"data":{"partitionId":0,"topicId":"DuF3GEJ3RHuB62-zMzajeA","replicas":[1,2],"isr":[1],"removingReplicas":[],"addingReplicas":[],"leader":1,"leaderEpoch":4,"partitionEpoch":6,"directories":["AAAAAAAAAAAAAAAAAAAAAA","AAAAAAAAAAAAAAAAAAAAAA"],"eligibleLeaderReplicas":[2],"lastKnownElr":[]}}`).
		batch(`{"type":"REMOVE_TOPIC_RECORD","version":0,"data":{"topicId":"pcgBguOASiq3ujkTrGu_Qw"}}`,
			`{"type":"CLEAR_ELR_RECORD","version":0,"data":{"topicName":""}}`).
		write(filepath.Join(d, partition.FileName(0, ".log")))
	im := load(t, d, Options{UpTo: -1})
	if im.ProblemCount != 0 || im.Topic("orders") != nil || len(im.Configs) != 0 || len(im.Topics) != 1 {
		t.Fatalf("after removal: topics %v configs %v problems %v", im.Topics, im.Configs, im.Problems)
	}
	p := im.Topic("keep").Partition(0)
	if len(p.EligibleLeaderReplicas) != 0 || p.PartitionEpoch != 7 || p.LeaderEpoch != 4 {
		t.Errorf("after ClearElr: %+v", p)
	}
}

// TestMetadataTransactions: KIP-868 records count at their end, never
// when aborted, and not yet when the replay stops inside one.
func TestMetadataTransactions(t *testing.T) {
	t.Parallel()
	begin := `{"type":"BEGIN_TRANSACTION_RECORD","version":0,"data":{"name":"create"}}`
	end := `{"type":"END_TRANSACTION_RECORD","version":0,"data":{}}`
	abort := `{"type":"ABORT_TRANSACTION_RECORD","version":0,"data":{"reason":"failed"}}`
	tests := []struct {
		name      string
		batches   [][]string
		upTo      int64
		topic     bool
		pending   int64
		problems  int
		maxRecord int
	}{
		{"committed across batches", [][]string{{begin, topicOrders}, {partitionRec(0, 1, "[1]"), end}}, -1, true, -1, 0, 0},
		{"aborted", [][]string{{begin, topicOrders}, {partitionRec(0, 1, "[1]"), abort}}, -1, false, -1, 0, 0},
		{"stopped inside", [][]string{{begin, topicOrders}, {partitionRec(0, 1, "[1]"), end}}, 2, false, 0, 0, 0},
		{"too large", [][]string{{begin, topicOrders}, {partitionRec(0, 1, "[1]"), end}}, -1, false, -1, 1, 1},
		{"begin inside a transaction", [][]string{{begin, topicOrders, begin}, {end}}, -1, true, -1, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := metaDir(t)
			lb := newLog(t, 0)
			for _, b := range tc.batches {
				lb.batch(b...)
			}
			lb.write(filepath.Join(d, partition.FileName(0, ".log")))
			im := load(t, d, Options{UpTo: tc.upTo, MaxTransactionRecords: tc.maxRecord})
			if (im.Topic("orders") != nil) != tc.topic || im.Provenance.PendingTransaction != tc.pending || im.ProblemCount != tc.problems {
				t.Errorf("topic %v pending %d problems %v; want topic %v pending %d problems %d",
					im.Topic("orders") != nil, im.Provenance.PendingTransaction, im.Problems, tc.topic, tc.pending, tc.problems)
			}
		})
	}
}

// TestSnapshotAndLog: the latest snapshot at or before --offset, then the
// log after it; a log that starts after the snapshot's end is a gap.
func TestSnapshotAndLog(t *testing.T) {
	t.Parallel()
	d := metaDir(t)
	// The log holds offsets 0-5; a snapshot ends at 3 (holds 0-2) and says
	// the partition's leader is broker 1 at leader epoch 5, which the log
	// before it does not say: the image must come from the snapshot.
	newLog(t, 0).batch(topicOrders, partitionRec(0, 1, "[1,2]"), change(0, `"leader":2`)).
		batch(change(0, `"leader":1`)).batch(change(0, `"isr":[1]`)).batch(change(0, `"leader":2`)).
		write(filepath.Join(d, partition.FileName(0, ".log")))
	snap := newLog(t, 0)
	snap.batch(topicOrders, `{"type":"PARTITION_RECORD","version":0,"data":{"partitionId":0,"topicId":"pcgBguOASiq3ujkTrGu_Qw","replicas":[1,2],"isr":[1,2],"removingReplicas":[],"addingReplicas":[],"leader":1,"leaderEpoch":5,"partitionEpoch":5}}`)
	snap.write(filepath.Join(d, "00000000000000000003-0000000002.checkpoint"))
	os.WriteFile(filepath.Join(d, "00000000000000000005-0000000002.checkpoint.part"), []byte("partial"), 0o644)

	im := load(t, d, Options{UpTo: -1})
	p := im.Topic("orders").Partition(0)
	// From the snapshot's epoch 5: offset 3 (leader 1) 6, offset 4 (isr) 6,
	// offset 5 (leader 2) 7.
	if im.ProblemCount != 0 || p.LeaderEpoch != 7 || p.PartitionEpoch != 8 || p.Leader != 2 || im.Provenance.SnapshotEndOffset != 3 || im.Provenance.LastContainedOffset != 5 {
		t.Errorf("from the snapshot: %+v %+v %v", p, im.Provenance, im.Problems)
	}
	// --offset 1 is before the snapshot's end: the log from its start.
	im = load(t, d, Options{UpTo: 1})
	if p := im.Topic("orders").Partition(0); p.LeaderEpoch != 0 || im.Provenance.Snapshot != "" || im.Provenance.LastContainedOffset != 1 {
		t.Errorf("--offset 1: %+v %+v", p, im.Provenance)
	}
	// --offset 2 is the snapshot's last offset: the snapshot alone.
	im = load(t, d, Options{UpTo: 2})
	if p := im.Topic("orders").Partition(0); p.LeaderEpoch != 5 || im.Provenance.LastContainedOffset != 2 {
		t.Errorf("--offset 2: %+v %+v", p, im.Provenance)
	}
	// --no-snapshot: the log from offset 0.
	im = load(t, d, Options{UpTo: -1, NoSnapshot: true})
	if p := im.Topic("orders").Partition(0); p.LeaderEpoch != 3 || im.Provenance.Snapshot != "" {
		t.Errorf("--no-snapshot: %+v", p)
	}
	// The snapshot file by itself.
	im = load(t, filepath.Join(d, "00000000000000000003-0000000002.checkpoint"), Options{UpTo: -1})
	if p := im.Topic("orders").Partition(0); p.LeaderEpoch != 5 || im.Provenance.LastContainedOffset != 2 || im.Provenance.LastContainedEpoch != 2 {
		t.Errorf("snapshot file: %+v %+v", p, im.Provenance)
	}

	// A log that starts at 10 after a snapshot ending at 3: a gap.
	g := metaDir(t)
	newLog(t, 10).batch(change(0, `"leader":2`)).write(filepath.Join(g, partition.FileName(10, ".log")))
	snap.write(filepath.Join(g, "00000000000000000003-0000000002.checkpoint"))
	im = load(t, g, Options{UpTo: -1})
	if im.ProblemCount != 1 || !strings.Contains(im.Problems[0].Message, "offsets 3 to 9 are not in the image") {
		t.Errorf("gap: %v", im.Problems)
	}
}

// TestCorruptLog: the replay stops at a batch whose CRC does not match,
// as log recovery truncates there, and says so.
func TestCorruptLog(t *testing.T) {
	t.Parallel()
	d := metaDir(t)
	lb := newLog(t, 0).batch(topicOrders, partitionRec(0, 1, "[1]"))
	good := len(lb.buf)
	lb.batch(change(0, `"leader":2`)).batch(change(0, `"leader":1`))
	lb.buf[good+len(lb.buf[good:])/4] ^= 0xff // inside the second batch
	lb.buf = append(lb.buf, 0, 0, 0, 1, 2)    // and a torn tail nobody reaches
	lb.write(filepath.Join(d, partition.FileName(0, ".log")))
	im := load(t, d, Options{UpTo: -1})
	if im.ProblemCount != 1 || !strings.Contains(im.Problems[0].Message, "CRC mismatch") || im.Topic("orders").Partition(0).LeaderEpoch != 0 {
		t.Errorf("problems %v, partition %+v", im.Problems, im.Topic("orders").Partition(0))
	}
	if im.Provenance.LastContainedOffset != 1 {
		t.Errorf("provenance %+v", im.Provenance)
	}
}

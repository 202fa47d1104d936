package cluster

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
	it "github.com/klog-dev/klog/internaltopic"
)

const (
	classicG1 = `{"type":"2","data":{"group":"g1"}}`
	// g1: a consumer group of two members; m1 holds orders-0 and orders-1.
	classicG1Value = `{"version":"3","data":{"protocolType":"consumer","generation":4,"protocol":"range","leader":"m1","currentStateTimestamp":1700000000100,"members":[` +
		`{"memberId":"m1","groupInstanceId":null,"clientId":"c1","clientHost":"/10.0.0.1","rebalanceTimeout":300000,"sessionTimeout":45000,"subscription":{"topics":["orders"],"userData":null,"ownedPartitions":[],"generationId":3,"rackId":null},"assignment":{"assignedPartitions":[{"topic":"orders","partitions":[0,1]}],"userData":null}},` +
		`{"memberId":"m2","groupInstanceId":"static-2","clientId":"c2","clientHost":"/10.0.0.2","rebalanceTimeout":300000,"sessionTimeout":45000,"subscription":{"topics":["orders"],"userData":null,"ownedPartitions":[],"generationId":3,"rackId":null},"assignment":{"assignedPartitions":[{"topic":"orders","partitions":[2]}],"userData":null}}]}}`
)

// offsetsLogDir writes a log dir with __consumer_offsets-N from the
// records and topic orders (3 partitions: 100, 60 and 10 records), and a
// replication-offset-checkpoint saying HW 90 for orders-0.
func offsetsLogDir(t *testing.T, n int, fill func(s *segBuilder)) string {
	t.Helper()
	ld := t.TempDir()
	s := newSeg(t)
	fill(s)
	s.write(filepath.Join(ld, OffsetsTopic+"-"+itoa(n)))
	newSeg(t).data(100, -1, -1, false).write(filepath.Join(ld, "orders-0"))
	newSeg(t).data(60, -1, -1, false).write(filepath.Join(ld, "orders-1"))
	newSeg(t).data(10, -1, -1, false).write(filepath.Join(ld, "orders-2"))
	writeHW(t, ld, format.OffsetEntry{Topic: "orders", Partition: 0, Offset: 90})
	return ld
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestGroupsClassic: a classic group's metadata, committed offsets (the
// last commit wins), a tombstone, lag against the partitions beside it,
// and who holds each partition.
func TestGroupsClassic(t *testing.T) {
	t.Parallel()
	ld := offsetsLogDir(t, 4, func(s *segBuilder) {
		s.coord(it.Offsets, -1, kv{classicG1, classicG1Value})
		s.coord(it.Offsets, -1, offsetJSON("g1", "orders", 0, 42), offsetJSON("g1", "orders", 1, 7), offsetJSON("g1", "orders", 2, 3))
		s.coord(it.Offsets, -1, offsetJSON("g1", "orders", 0, 80))
		s.coord(it.Offsets, -1, offsetTombstone("g1", "orders", 2))
		s.coord(it.Offsets, -1, offsetJSON("simple", "orders", 1, 60))
	})
	rep := groupsOf(t, GroupsOptions{}, ld)
	if rep.ProblemCount != 0 || len(rep.Groups) != 2 || rep.OffsetsPartitions != 50 {
		t.Fatalf("report %+v, problems %v", rep, rep.Problems)
	}
	g := rep.GroupByID("g1")
	if g.Type != GroupClassic || g.ProtocolType != "consumer" || g.State != "Stable" || g.Generation != 4 || g.Protocol != "range" ||
		g.Leader != "m1" || len(g.Members) != 2 || g.Partition != 4 {
		t.Errorf("g1: %+v", g)
	}
	if m := g.Members[1]; m.GroupInstanceID == nil || *m.GroupInstanceID != "static-2" || m.SessionTimeoutMs != 45000 ||
		len(m.Subscription) != 1 || len(m.Assignment) != 1 || m.Assignment[0].Partitions[0] != 2 {
		t.Errorf("m2: %+v", m)
	}
	if len(g.Offsets) != 2 {
		t.Fatalf("offsets %+v", g.Offsets)
	}
	// orders-0: committed 80, HW from the checkpoint 90: lag 10; orders-1:
	// no checkpoint entry, HW = the log end 60: lag 53.
	o0, o1 := g.Offsets[0], g.Offsets[1]
	if o0.Offset != 80 || *o0.LogEndOffset != 90 || *o0.Lag != 10 || o0.ConsumerID != "m1" || o0.Host != "/10.0.0.1" || o0.RecordOffset != 4 ||
		o1.Offset != 7 || *o1.LogEndOffset != 60 || *o1.Lag != 53 || o0.LeaderEpoch != 2 || o0.Metadata != "m" || o0.CommitTimestamp != 1700000000500 {
		t.Errorf("offsets %+v %+v", o0, o1)
	}
	if len(g.DeletedOffsets) != 1 || g.DeletedOffsets[0].Partition != 2 || g.DeletedOffsets[0].LastOffset != 3 || g.DeletedOffsets[0].TombstoneOffset != 5 {
		t.Errorf("deleted %+v", g.DeletedOffsets)
	}
	s := rep.GroupByID("simple")
	if s.Type != GroupClassic || s.ProtocolType != "" || s.State != "Empty" || len(s.Offsets) != 1 || *s.Offsets[0].Lag != 0 {
		t.Errorf("simple: %+v", s)
	}
	// The tables as kafka-consumer-groups prints them.
	var b bytes.Buffer
	if err := WriteGroupOffsets(&b, rep, false); err != nil {
		t.Fatal(err)
	}
	want := `
GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID
g1              orders          0          80              90              10              m1              /10.0.0.1       c1
g1              orders          1          7               60              53              m1              /10.0.0.1       c1
g1              orders          2          -               -               -               m2              /10.0.0.2       c2

Consumer group 'simple' has no active members.

GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID
simple          orders          1          60              60              0               -               -               -
`
	if b.String() != want {
		t.Errorf("offsets table:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestGroupsTransactionalOffsets: offsets committed in a transaction
// count at its COMMIT marker, never at ABORT, stay pending without a
// marker, and a commit made after them wins (OffsetMetadataManager
// compares record offsets).
func TestGroupsTransactionalOffsets(t *testing.T) {
	t.Parallel()
	ld := offsetsLogDir(t, 7, func(s *segBuilder) {
		s.coord(it.Offsets, 9, offsetJSON("tx", "orders", 0, 5)) // offset 0
		s.coord(it.Offsets, 10, offsetJSON("tx", "orders", 1, 6))
		s.coord(it.Offsets, 11, offsetJSON("tx", "orders", 2, 7))
		s.coord(it.Offsets, -1, offsetJSON("tx", "orders", 0, 50)) // offset 3: after producer 9's
		s.marker(9, 0, true)                                       // producer 9's 5 is older than 50: skipped
		s.marker(10, 0, false)
		s.coord(it.Offsets, 12, offsetJSON("tx", "orders", 1, 8))
		s.marker(12, 0, true)
	})
	g := groupsOf(t, GroupsOptions{}, ld).GroupByID("tx")
	if len(g.Offsets) != 2 || g.Offsets[0].Offset != 50 || g.Offsets[0].ProducerID != -1 || g.Offsets[1].Offset != 8 || g.Offsets[1].ProducerID != 12 {
		t.Errorf("offsets %+v", g.Offsets)
	}
	if len(g.PendingOffsets) != 1 || g.PendingOffsets[0].Partition != 2 || g.PendingOffsets[0].ProducerID != 11 {
		t.Errorf("pending %+v", g.PendingOffsets)
	}
}

// TestGroupsModern: KIP-848 consumer groups, share and Streams groups,
// their states from the epochs, topic ids resolved through the
// partitions' partition.metadata.
func TestGroupsModern(t *testing.T) {
	t.Parallel()
	const tid = "pcgBguOASiq3ujkTrGu_Qw"
	member := func(g, m string, epoch int, state int) []kv {
		mk := `{"type":"%d","data":{"groupId":"` + g + `","memberId":"` + m + `"}}`
		return []kv{
			{strings.Replace(mk, "%d", "5", 1), `{"version":"0","data":{"instanceId":null,"rackId":null,"clientId":"c-` + m + `","clientHost":"/h","subscribedTopicNames":["orders"],"subscribedTopicRegex":null,"rebalanceTimeoutMs":5000,"serverAssignor":"uniform"}}`},
			{strings.Replace(mk, "%d", "7", 1), `{"version":"0","data":{"topicPartitions":[{"topicId":"` + tid + `","partitions":[0]}]}}`},
			{strings.Replace(mk, "%d", "8", 1), `{"version":"0","data":{"memberEpoch":` + itoa(epoch) + `,"previousMemberEpoch":1,"state":` + itoa(state) + `,"assignedPartitions":[{"topicId":"` + tid + `","partitions":[0]}],"partitionsPendingRevocation":[]}}`},
		}
	}
	ld := offsetsLogDir(t, 1, func(s *segBuilder) {
		s.coord(it.Offsets, -1, kv{`{"type":"3","data":{"groupId":"stable"}}`, `{"version":"0","data":{"epoch":3}}`},
			kv{`{"type":"6","data":{"groupId":"stable"}}`, `{"version":"0","data":{"assignmentEpoch":3}}`})
		s.coord(it.Offsets, -1, member("stable", "a", 3, 0)...)
		s.coord(it.Offsets, -1, kv{`{"type":"3","data":{"groupId":"reconciling"}}`, `{"version":"0","data":{"epoch":3}}`},
			kv{`{"type":"6","data":{"groupId":"reconciling"}}`, `{"version":"0","data":{"assignmentEpoch":3}}`})
		s.coord(it.Offsets, -1, member("reconciling", "b", 2, 1)...)
		s.coord(it.Offsets, -1, kv{`{"type":"3","data":{"groupId":"assigning"}}`, `{"version":"0","data":{"epoch":4}}`},
			kv{`{"type":"6","data":{"groupId":"assigning"}}`, `{"version":"0","data":{"assignmentEpoch":3}}`})
		s.coord(it.Offsets, -1, member("assigning", "c", 3, 0)...)
		// A member that left: its current assignment's tombstone (epoch
		// -1), then its subscription's: the group is Empty.
		s.coord(it.Offsets, -1, kv{`{"type":"3","data":{"groupId":"left"}}`, `{"version":"0","data":{"epoch":2}}`})
		s.coord(it.Offsets, -1, member("left", "d", 2, 0)...)
		s.coord(it.Offsets, -1, kv{`{"type":"8","data":{"groupId":"left","memberId":"d"}}`, ""},
			kv{`{"type":"7","data":{"groupId":"left","memberId":"d"}}`, ""}, kv{`{"type":"5","data":{"groupId":"left","memberId":"d"}}`, ""})
		s.coord(it.Offsets, -1, kv{`{"type":"11","data":{"groupId":"share"}}`, `{"version":"0","data":{"epoch":1,"metadataHash":0}}`})
		s.coord(it.Offsets, -1, kv{`{"type":"17","data":{"groupId":"streams"}}`, `{"version":"0","data":{"epoch":1,"metadataHash":0,"assignmentConfigs":[]}}`})
		s.coord(it.Offsets, -1, kv{`{"type":"19","data":{"groupId":"streams","memberId":"s1"}}`, `{"version":"0","data":{"instanceId":null,"rackId":null,"clientId":"sc","clientHost":"/h","rebalanceTimeoutMs":1,"topologyEpoch":1,"processId":"p","userEndpoint":null,"clientTags":[]}}`})
		// Deleting a group: its metadata's tombstone.
		s.coord(it.Offsets, -1, kv{`{"type":"3","data":{"groupId":"gone"}}`, `{"version":"0","data":{"epoch":1}}`})
		s.coord(it.Offsets, -1, kv{`{"type":"3","data":{"groupId":"gone"}}`, ""})
	})
	// orders-0 has topic id tid.
	writeTopicID(t, filepath.Join(ld, "orders-0"), tid)
	rep := groupsOf(t, GroupsOptions{}, ld)
	for id, want := range map[string]string{"stable": "Stable", "reconciling": "Reconciling", "assigning": "Assigning", "left": "Empty",
		"share": "Empty", "streams": "NotReady", "gone": "Dead"} {
		g := rep.GroupByID(id)
		if g == nil || g.State != want {
			t.Errorf("%s: %+v, want state %s", id, g, want)
		}
	}
	m := rep.GroupByID("stable").Members[0]
	if len(m.Assignment) != 1 || m.Assignment[0].Topic != "orders" || m.Assignment[0].TopicID != tid || m.MemberEpoch != 3 ||
		m.MemberState != "STABLE" || len(m.TargetAssignment) != 1 || *m.ServerAssignor != "uniform" {
		t.Errorf("member %+v", m)
	}
	if g := rep.GroupByID("share"); g.Type != GroupShare || g.GroupEpoch != 1 {
		t.Errorf("share %+v", g)
	}
	// --group limits the report.
	if r := groupsOf(t, GroupsOptions{Groups: []string{"stable"}}, ld); len(r.Groups) != 1 {
		t.Errorf("--group stable: %d groups", len(r.Groups))
	}
}

// TestGroupsReplicas: of two brokers' replicas of one __consumer_offsets
// partition, the longer is read; lag takes the highest high watermark.
func TestGroupsReplicas(t *testing.T) {
	t.Parallel()
	a := offsetsLogDir(t, 3, func(s *segBuilder) { s.coord(it.Offsets, -1, offsetJSON("g", "orders", 2, 1)) })
	b := offsetsLogDir(t, 3, func(s *segBuilder) {
		s.coord(it.Offsets, -1, offsetJSON("g", "orders", 2, 1))
		s.coord(it.Offsets, -1, offsetJSON("g", "orders", 2, 4))
	})
	newSeg(t).data(30, -1, -1, false).write(filepath.Join(a, "orders-2"))
	rep := groupsOf(t, GroupsOptions{}, a, b)
	if len(rep.Read) != 1 || rep.Read[0].Path != filepath.Join(b, OffsetsTopic+"-3") || len(rep.Read[0].Skipped) != 1 {
		t.Fatalf("read %+v", rep.Read)
	}
	if o := rep.GroupByID("g").Offsets[0]; o.Offset != 4 || *o.LogEndOffset != 30 || *o.Lag != 26 {
		t.Errorf("offset %+v", o)
	}
}

// TestGroupsDamaged: a batch whose CRC does not match is a problem and is
// not replayed; a record the serde rejects is a problem; the rest is read.
func TestGroupsDamaged(t *testing.T) {
	t.Parallel()
	ld := offsetsLogDir(t, 0, func(s *segBuilder) {
		s.coord(it.Offsets, -1, offsetJSON("g", "orders", 0, 1))
		at := len(s.buf)
		s.coord(it.Offsets, -1, offsetJSON("g", "orders", 0, 2))
		s.buf[at+len(s.buf[at:])-3] ^= 0xff
		s.batch(format.Batch{}, []format.Record{{Key: []byte{0, 1, 0}, Value: []byte{0, 3}}})
		s.coord(it.Offsets, -1, offsetJSON("g", "orders", 1, 9))
	})
	rep := groupsOf(t, GroupsOptions{}, ld)
	g := rep.GroupByID("g")
	if rep.ProblemCount != 2 || len(g.Offsets) != 2 || g.Offsets[0].Offset != 1 || g.Offsets[1].Offset != 9 {
		t.Errorf("problems %v, offsets %+v", rep.Problems, g.Offsets)
	}
}

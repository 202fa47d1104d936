package cluster

import (
	"bytes"
	"testing"

	it "github.com/klog-dev/klog/internaltopic"
)

// FuzzGroupReplay feeds coordinator records (valid or not, in any order,
// some in transactions) to the groups replay: no panic, and the report
// always renders.
func FuzzGroupReplay(f *testing.F) {
	var seed []byte
	for _, r := range []kv{{classicG1, classicG1Value}, offsetJSON("g1", "orders", 0, 4), offsetTombstone("g1", "orders", 0),
		{`{"type":"3","data":{"groupId":"cg"}}`, `{"version":"0","data":{"epoch":3}}`},
		{`{"type":"8","data":{"groupId":"cg","memberId":"m"}}`, `{"version":"0","data":{"memberEpoch":4,"previousMemberEpoch":3,"state":0,"assignedPartitions":[{"topicId":"pcgBguOASiq3ujkTrGu_Qw","partitions":[0]}],"partitionsPendingRevocation":[]}}`},
		{`{"type":"5","data":{"groupId":"cg","memberId":"m"}}`, ""}, {`{"type":"2","data":{"group":"g1"}}`, ""}} {
		var val []byte
		if r.value != "" {
			val = []byte(r.value)
		}
		k, v, err := it.EncodeCoordinatorJSON(it.Offsets, []byte(r.key), val)
		if err != nil {
			f.Fatal(err)
		}
		seed = append(append(append(seed, byte(len(k))), k...), byte(len(v)))
		seed = append(seed, v...)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		rep := &GroupsReport{}
		rd := &groupReplay{rep: rep, groups: map[string]*Group{}, topicNames: map[[16]byte]string{}}
		for off := int64(0); len(data) > 1; off++ {
			kn := min(int(data[0]), len(data)-1)
			key := data[1 : 1+kn]
			data = data[1+kn:]
			var val []byte
			if len(data) > 0 {
				vn := min(int(data[0]), len(data)-1)
				if vn > 0 {
					val = data[1 : 1+vn]
				}
				data = data[1+vn:]
			}
			pid := int64(-1)
			if off%3 == 1 {
				pid = off % 2
			}
			rec, err := it.DecodeGroupRecord(key, val)
			if err == nil {
				rd.replay(off, off, pid, rec)
			}
			if off%5 == 4 {
				rd.endTransaction(off%2, off%10 == 4)
			}
		}
		for _, g := range rd.groups {
			g.finish(rd.topicNames, 50)
			rep.Groups = append(rep.Groups, g)
		}
		var b bytes.Buffer
		for _, w := range []func() error{
			func() error { return WriteGroupOffsets(&b, rep, true) }, func() error { return WriteGroupMembers(&b, rep, true) },
			func() error { return WriteGroupStates(&b, rep) }, func() error { return WriteGroupDeleted(&b, rep) },
			func() error { return WriteGroupsJSON(&b, rep) },
		} {
			if err := w(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

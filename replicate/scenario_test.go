package replicate

import (
	"context"
	"reflect"
	"strconv"
	"testing"
	"time"
)

func TestRunScenario(t *testing.T) {
	cases := []struct {
		name string
		sc   Scenario
		hw   int64
	}{
		{"acks=all with a consumer", Scenario{Records: 3, Acks: AcksAll, Group: "g", CrashLeaderAt: -1}, 3},
		{"a follower stopped and restarted", Scenario{Records: 2, Acks: AcksLeader, CrashLeaderAt: -1,
			Stops: map[int][]int32{0: {3}}, Restarts: map[int][]int32{4: {3}}}, 2},
		{"the leader crashes", Scenario{Records: 2, ProduceEvery: 2, Acks: AcksAll, CrashLeaderAt: 3}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := newCluster(t, Config{})
			ticks := 0
			c.sc.AfterTick = func() { ticks++ }
			res, err := cl.Run(context.Background(), c.sc)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Calls) != c.sc.Records || !allDone(res.Calls) {
				t.Errorf("calls %+v", res.Calls)
			}
			if cl.HighWatermark() != c.hw || cl.Leader().LEO() != c.hw {
				t.Errorf("hw %d leo %d, want %d", cl.HighWatermark(), cl.Leader().LEO(), c.hw)
			}
			if ticks == 0 || ticks >= DefaultMaxTicks {
				t.Errorf("%d ticks", ticks)
			}
			if c.sc.Group != "" && (len(res.ConsumerRows) == 0 || res.ConsumerRows[len(res.ConsumerRows)-1].Position != c.hw) {
				t.Errorf("consumer rows %+v", res.ConsumerRows)
			}
			header, rows := cl.Table(res, c.sc.Group != "")
			if len(rows) == 0 || len(rows[0]) != len(header) {
				t.Errorf("table %v %v", header, rows)
			}
		})
	}
}

func TestParseAtAndAcks(t *testing.T) {
	got, err := ParseAt([]string{"2@5", "3@5", "2@9"})
	if want := map[int][]int32{5: {2, 3}, 9: {2}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseAt = %v, %v", got, err)
	}
	for _, bad := range []string{"2", "x@1", "2@-1", "2@y"} {
		if _, err := ParseAt([]string{bad}); err == nil {
			t.Errorf("ParseAt(%q) accepted", bad)
		}
	}
	for s, want := range map[string]Acks{"0": AcksNone, "1": AcksLeader, "all": AcksAll, "-1": AcksAll} {
		if a, err := ParseAcks(s); err != nil || a != want {
			t.Errorf("ParseAcks(%q) = %v, %v", s, a, err)
		}
	}
	if _, err := ParseAcks("2"); err == nil {
		t.Errorf("ParseAcks(2) accepted")
	}
}

// TestRunVirtualClockConsumer pins the README's "Broker 3 fetches slowly"
// walkthrough (klog replicate --step): on the virtual clock the consumer
// fetches once per tick, in step with replication, so its first fetch is
// the third moment and the run never sleeps. New fills in Config.Now, so
// the scenario must not take Now != nil for a real clock.
func TestRunVirtualClockConsumer(t *testing.T) {
	// Ticks of a second (the README's 10ms scaled up, the same six ticks
	// of follower delay), so a run that slept would take 18 s: a bound far
	// above a loaded machine's scheduling noise can tell.
	cl := newCluster(t, Config{Tick: time.Second, FollowerDelay: map[int32]time.Duration{3: 6 * time.Second}})
	if err := cl.Preload(7); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := cl.Run(context.Background(), Scenario{Records: 6, Acks: AcksAll, Group: "readers", CrashLeaderAt: -1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.ConsumerRows {
		got = append(got, strconv.Itoa(r.Moment)+":"+strconv.FormatInt(r.Position, 10))
	}
	if want := []string{"2:7", "15:9", "17:13"}; !reflect.DeepEqual(got, want) {
		t.Errorf("consumer rows (moment:position) %v, want %v", got, want)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a virtual-clock run took %v: it slept", d)
	}
}

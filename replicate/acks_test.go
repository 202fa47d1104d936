package replicate

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestAcksAllAfterISRShrinks: an acks=all batch appended while the ISR was
// full, whose followers then stop, is answered when the shrunk ISR lets the
// high watermark pass it, with NOT_ENOUGH_REPLICAS_AFTER_APPEND, never with
// success; with a produce timeout shorter than replica.lag.time.max it is
// answered REQUEST_TIMED_OUT first.
func TestAcksAllAfterISRShrinks(t *testing.T) {
	for _, c := range []struct {
		name    string
		timeout time.Duration
		want    error
		code    int
	}{
		{"ISR shrinks before the timeout", 60 * time.Second, ErrNotEnoughReplicasAfterAppend, codeNotEnoughReplicasAfterAppend},
		{"the timeout comes first", 2 * time.Second, ErrRequestTimedOut, codeRequestTimedOut},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, err := New(Config{Dir: filepath.Join(t.TempDir(), "c"), Topic: "t", Brokers: []int32{1, 2, 3}, MinInsyncReplicas: 2,
				ProduceTimeout: c.timeout})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			for i := 0; i < 3; i++ {
				cl.Step()
			}
			cl.Stop(2)
			cl.Stop(3)
			call := cl.Produce([][]byte{[]byte("v")}, AcksAll)
			if call.Err != nil {
				t.Fatalf("appended with a full ISR: %v", call.Err)
			}
			for i := 0; i < int(70*time.Second/(10*time.Millisecond)) && !call.Done; i++ {
				cl.Step()
			}
			if !call.Done || !errors.Is(call.Err, c.want) {
				t.Fatalf("answer: done %v, err %v; want %v", call.Done, call.Err, c.want)
			}
			last := cl.RPCs()[len(cl.RPCs())-1]
			resp := last.Response.(map[string]any)["responses"].([]any)[0].(map[string]any)["partitionResponses"].([]any)[0].(map[string]any)
			if resp["errorCode"] != c.code {
				t.Errorf("response errorCode %v, want %d", resp["errorCode"], c.code)
			}
		})
	}
}

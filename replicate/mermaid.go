package replicate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// WriteMermaid writes the run's RPCs as a Mermaid sequence diagram
// (https://mermaid.js.org/syntax/sequenceDiagram.html), the way the
// replication texts draw it: the producer, the leader and the followers,
// the consumer and its group coordinator; ProduceRequest and its response,
// each follower's FetchRequest (its fetch offset) and the FetchResponse
// with the high watermark it carries, the consumer's fetches and its
// OffsetCommit. A note marks each tick, and the controller's LeaderAndIsr
// when the leader crashes and a follower is elected. Requests
// are drawn at the tick they were sent and responses at the tick they were
// answered (the tick plus the RPC's time), so a produce waiting for
// acks=all is answered where the high watermark reaches it. tick is the
// run's tick length (Config.Tick).
func (c *Cluster) WriteMermaid(w io.Writer, tick time.Duration) error {
	bw := bufio.NewWriter(w)
	id := func(b int32) string { return "B" + strconv.Itoa(int(b)) }
	consumer, commits := false, false
	for _, r := range c.rpcs {
		consumer = consumer || r.ClientID == "consumer"
		commits = commits || r.APIKeyName == "OFFSET_COMMIT"
	}
	bw.WriteString("sequenceDiagram\n")
	bw.WriteString("    participant P as producer\n")
	for _, b := range c.brokers {
		role := "follower " + c.Name(b.ID)
		if b.ID == c.brokers[0].ID {
			role = "leader"
		}
		fmt.Fprintf(bw, "    participant %s as broker %d (%s)\n", id(b.ID), b.ID, role)
	}
	last := id(c.brokers[len(c.brokers)-1].ID)
	if consumer {
		bw.WriteString("    participant C as consumer\n")
		last = "C"
	}
	if commits {
		bw.WriteString("    participant G as group coordinator\n")
		last = "G"
	}
	type event struct {
		tick int64
		seq  int
		text string
	}
	var evs []event
	add := func(t int64, seq int, text string) { evs = append(evs, event{t, seq, text}) }
	// The first broker leads until the controller's LeaderAndIsr names
	// another (the log is in the order things happened).
	leader := id(c.brokers[0].ID)
	for i, r := range c.rpcs {
		answered := r.Tick
		if tick > 0 && r.TotalTimeMs > 0 {
			answered += int64(math.Round(r.TotalTimeMs / float64(tick.Milliseconds())))
		}
		req, resp := jsonMap(r.Request), jsonMap(r.Response)
		switch r.APIKeyName {
		case "PRODUCE":
			add(r.Tick, 2*i, fmt.Sprintf("P->>%s: ProduceRequest acks=%v", leader, req["acks"]))
			if r.Response != nil {
				pr := first(first(resp, "responses"), "partitionResponses")
				text := fmt.Sprintf("%s-->>P: ProduceResponse baseOffset=%v", leader, pr["baseOffset"])
				if ec, _ := pr["errorCode"].(float64); ec != 0 {
					text += fmt.Sprintf(" errorCode=%v", pr["errorCode"])
				}
				add(answered, 2*i+1, text)
			}
		case "FETCH":
			from, offset := "C", req["fetchOffset"]
			if r.ClientID != "consumer" {
				b, ok := fetcherBroker(r.ClientID)
				if !ok {
					continue
				}
				from = id(b)
				offset = first(first(req, "topics"), "partitions")["fetchOffset"]
			}
			add(r.Tick, 2*i, fmt.Sprintf("%s->>%s: FetchRequest fetchOffset=%v", from, leader, offset))
			fr := first(resp, "responses")
			text := fmt.Sprintf("%s-->>%s: FetchResponse HW=%v, %v bytes", leader, from, fr["highWatermark"], fr["recordsSizeInBytes"])
			if ec, _ := fr["errorCode"].(float64); ec != 0 {
				text += fmt.Sprintf(", errorCode=%v", fr["errorCode"])
			}
			add(answered, 2*i+1, text)
		case "LEADER_AND_ISR":
			l, _ := req["leader"].(float64)
			leader = id(int32(l))
			add(r.Tick, 2*i, fmt.Sprintf("Note over %s: LeaderAndIsr: leader at epoch %v, ISR %v", leader, req["leaderEpoch"], isrText(req["isr"])))
		case "OFFSET_COMMIT":
			p := first(first(req, "topics"), "partitions")
			add(r.Tick, 2*i, fmt.Sprintf("C->>G: OffsetCommit group=%v offset=%v", mermaidText(fmt.Sprint(req["groupId"])), p["committedOffset"]))
			rp := first(first(resp, "topics"), "partitions")
			add(answered, 2*i+1, fmt.Sprintf("G-->>C: OffsetCommitResponse errorCode=%v", rp["errorCode"]))
		}
	}
	sort.SliceStable(evs, func(i, j int) bool {
		if evs[i].tick != evs[j].tick {
			return evs[i].tick < evs[j].tick
		}
		return evs[i].seq < evs[j].seq
	})
	t := int64(-1)
	for _, e := range evs {
		if e.tick != t {
			t = e.tick
			fmt.Fprintf(bw, "    Note over P,%s: tick %d\n", last, t)
		}
		bw.WriteString("    " + e.text + "\n")
	}
	return bw.Flush()
}

// isrText is an ISR list ("2 3").
func isrText(v any) string {
	a, _ := v.([]any)
	var out []string
	for _, x := range a {
		out = append(out, fmt.Sprint(x))
	}
	return strings.Join(out, " ")
}

// jsonMap is v as JSON objects are read (numbers float64), nil when it is
// not an object.
func jsonMap(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// first is the first object of m's array field k (nil when none).
func first(m map[string]any, k string) map[string]any {
	a, _ := m[k].([]any)
	if len(a) == 0 {
		return nil
	}
	o, _ := a[0].(map[string]any)
	return o
}

// fetcherBroker reads "broker-N-fetcher".
func fetcherBroker(client string) (int32, bool) {
	s, ok := strings.CutPrefix(client, "broker-")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, "-fetcher")
	n, err := strconv.ParseInt(s, 10, 32)
	return int32(n), ok && err == nil
}

// mermaidText keeps a name from ending a message or starting a comment or
// an entity (Mermaid reads ";", "#" and "%%" itself).
func mermaidText(s string) string {
	return strings.NewReplacer(";", ",", "#", "", "%", "", "\n", " ").Replace(s)
}

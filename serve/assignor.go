package serve

import (
	"bytes"
	"sort"
)

// The server-side assignors of KIP-848 (group.consumer.assignors):
// uniform, the default, and range. Both answer for every member of the
// group given what each subscribes to (topic ids of the subscription
// metadata) and the partition counts; they are deterministic (members and
// topics are taken in order), so a target assignment depends on the group
// alone.

// memberSubscription is one member's subscribed topic ids.
type memberSubscription struct {
	id     string
	topics map[[16]byte]bool
}

// assign runs the named assignor (an unknown name is the default's).
// members are in member id order; prev is the previous target.
func assign(name string, members []memberSubscription, topics map[[16]byte]int32, prev map[string]assignment) map[string]assignment {
	if name == "range" {
		return rangeAssign(members, topics)
	}
	return uniformAssign(members, topics, prev)
}

func sortedTopicIDs(topics map[[16]byte]int32) [][16]byte {
	ids := make([][16]byte, 0, len(topics))
	for id := range topics {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
	return ids
}

// uniformAssign is the uniform assignor's contract (UniformAssignor):
// every subscribed partition to one member subscribed to its topic, the
// members' counts as even as their subscriptions allow, and partitions
// staying where the previous target had them. It keeps each partition with
// its previous owner while that member still subscribes to it, gives the
// rest to the least loaded subscriber, then moves partitions from the most
// to the least loaded member that can take them until no move evens the
// counts further (each move lowers the sum of squared counts, so it ends).
func uniformAssign(members []memberSubscription, topics map[[16]byte]int32, prev map[string]assignment) map[string]assignment {
	out := make(map[string]assignment, len(members))
	count := make([]int, len(members))
	index := make(map[string]int, len(members))
	for i, m := range members {
		out[m.id] = assignment{}
		index[m.id] = i
	}
	prevOwner := map[topicPart]int{}
	for id, a := range prev {
		i, ok := index[id]
		if !ok {
			continue
		}
		for t, ps := range a {
			for _, p := range ps {
				prevOwner[topicPart{t, p}] = i
			}
		}
	}
	owner := map[topicPart]int{}
	ids := sortedTopicIDs(topics)
	for _, t := range ids {
		for p := int32(0); p < topics[t]; p++ {
			k := topicPart{t, p}
			if i, ok := prevOwner[k]; ok && members[i].topics[t] {
				owner[k] = i
				count[i]++
			}
		}
	}
	for _, t := range ids {
		for p := int32(0); p < topics[t]; p++ {
			k := topicPart{t, p}
			if _, ok := owner[k]; ok {
				continue
			}
			best := -1
			for i, m := range members {
				if m.topics[t] && (best < 0 || count[i] < count[best]) {
					best = i
				}
			}
			if best >= 0 {
				owner[k] = best
				count[best]++
			}
		}
	}
	// Even out: the most loaded member that holds a partition a member
	// with at least two fewer can take gives its highest such partition
	// to the least loaded of those. A pass without a move ends it.
	held := make([][]topicPart, len(members))
	for _, t := range ids {
		for p := int32(0); p < topics[t]; p++ {
			if i, ok := owner[topicPart{t, p}]; ok {
				held[i] = append(held[i], topicPart{t, p})
			}
		}
	}
	order := make([]int, len(members))
	for moved := true; moved; {
		moved = false
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return count[order[a]] > count[order[b]] })
		for _, from := range order {
			for h := len(held[from]) - 1; h >= 0 && !moved; h-- {
				k := held[from][h]
				to := -1
				for j, m := range members {
					if j != from && m.topics[k.id] && count[j] < count[from]-1 && (to < 0 || count[j] < count[to]) {
						to = j
					}
				}
				if to < 0 {
					continue
				}
				owner[k] = to
				held[from] = append(held[from][:h:h], held[from][h+1:]...)
				held[to] = append(held[to], k)
				count[from]--
				count[to]++
				moved = true
			}
			if moved {
				break
			}
		}
	}
	for k, i := range owner {
		out[members[i].id].add(k.id, k.p)
	}
	return out
}

// rangeAssign is the range assignor (RangeAssignor): each topic's
// partitions in contiguous ranges over its subscribers in member id
// order, the first ones one partition more when they do not divide
// evenly.
func rangeAssign(members []memberSubscription, topics map[[16]byte]int32) map[string]assignment {
	out := make(map[string]assignment, len(members))
	for _, m := range members {
		out[m.id] = assignment{}
	}
	for _, t := range sortedTopicIDs(topics) {
		var subs []string
		for _, m := range members {
			if m.topics[t] {
				subs = append(subs, m.id)
			}
		}
		if len(subs) == 0 {
			continue
		}
		n := int(topics[t])
		per, extra := n/len(subs), n%len(subs)
		p := 0
		for i, id := range subs {
			k := per
			if i < extra {
				k++
			}
			for j := 0; j < k; j++ {
				out[id].add(t, int32(p))
				p++
			}
		}
	}
	return out
}

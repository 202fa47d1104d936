package dump

import (
	"sort"
	"unicode/utf16"
)

// Kafka's end-of-run summaries keep one entry per file in a java.util.HashMap
// keyed by the file's absolute path, and print them in the map's iteration
// order. That order is deterministic: entries are visited bucket by bucket,
// where the bucket is the spread String.hashCode masked by the table size,
// and in insertion order within a bucket. javaHashMapOrder reproduces it so
// multi-file summaries come out in Kafka's order too.
func javaHashMapOrder(keys []string) []string {
	n := len(keys)
	capacity := 16
	for n > capacity*3/4 {
		capacity *= 2
	}
	type slot struct {
		key    string
		bucket int
		seq    int
	}
	slots := make([]slot, n)
	for i, k := range keys {
		h := javaStringHash(k)
		h ^= h >> 16
		slots[i] = slot{k, int(h & uint32(capacity-1)), i}
	}
	sort.SliceStable(slots, func(i, j int) bool { return slots[i].bucket < slots[j].bucket })
	out := make([]string, n)
	for i, s := range slots {
		out[i] = s.key
	}
	return out
}

// javaStringHash is String.hashCode over the UTF-16 code units of s.
func javaStringHash(s string) uint32 {
	var h uint32
	for _, r := range s {
		if r >= 0x10000 {
			a, b := utf16.EncodeRune(r)
			h = 31*h + uint32(a)
			h = 31*h + uint32(b)
			continue
		}
		h = 31*h + uint32(r)
	}
	return h
}

package fetch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/produce"
)

// A Consumer reads a partition directory as a Kafka consumer reads a
// partition through a broker: bounded by the high watermark (here the log
// end offset: the log dir has no replication-offset-checkpoint), with
// position and lag. The consumer starts at the log start, with Kafka's
// consumer defaults for the byte limits.
func ExampleConsumer() {
	tmp, _ := os.MkdirTemp("", "klog-example")
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "orders-0")
	a, err := produce.Open(dir, produce.Options{})
	if err != nil {
		panic(err)
	}
	a.Append(&produce.Batch{Records: []format.Record{{Value: []byte("a")}, {Value: []byte("b")}}})
	a.Close()

	c, err := fetch.NewConsumer(dir, fetch.ConsumerConfig{MaxBytes: fetch.DefaultMaxBytes, PartitionMaxBytes: fetch.DefaultPartitionMaxBytes})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	recs, _, err := c.Poll(context.Background())
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		fmt.Printf("offset %d: %s\n", r.Offset, r.Value)
	}
	fmt.Println("position", c.Position(), "lag", c.Lag())
	// Output:
	// offset 0: a
	// offset 1: b
	// position 2 lag 0
}

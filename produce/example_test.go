package produce_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/produce"
)

// An Appender writes batches to a partition directory as a broker's log
// does: offsets, indexes, segment rolls and producer state. The zero
// Options are the broker's defaults.
func ExampleAppender() {
	tmp, _ := os.MkdirTemp("", "klog-example")
	defer os.RemoveAll(tmp)
	a, err := produce.Open(filepath.Join(tmp, "orders-0"), produce.Options{})
	if err != nil {
		panic(err)
	}
	for _, vals := range [][]string{{"a", "b"}, {"c"}} {
		b := &produce.Batch{}
		for _, v := range vals {
			b.Records = append(b.Records, format.Record{Value: []byte(v)})
		}
		r, err := a.Append(b)
		if err != nil {
			panic(err)
		}
		fmt.Printf("offsets %d..%d at position %d\n", r.BaseOffset, r.LastOffset, r.Position)
	}
	fmt.Println("log end offset:", a.LogEndOffset())
	if err := a.Close(); err != nil {
		panic(err)
	}
	// Output:
	// offsets 0..1 at position 0
	// offsets 2..2 at position 77
	// log end offset: 3
}

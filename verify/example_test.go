package verify_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/produce"
	"github.com/klog-dev/klog/verify"
)

// Files checks files, partition directories or log directories and yields
// each file's findings as data. Here one byte of a record is flipped: the
// batch's CRC-32C no longer matches.
func ExampleFiles() {
	tmp, _ := os.MkdirTemp("", "klog-example")
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "orders-0")
	a, err := produce.Open(dir, produce.Options{})
	if err != nil {
		panic(err)
	}
	a.Append(&produce.Batch{Records: []format.Record{{Value: []byte("hello")}}})
	a.Close()
	seg := filepath.Join(dir, "00000000000000000000.log")
	data, _ := os.ReadFile(seg)
	data[len(data)-3] ^= 0xff // inside the value
	os.WriteFile(seg, data, 0o644)

	findings := 0
	for f, err := range verify.Files(context.Background(), []string{seg}, verify.Options{}) {
		if err != nil {
			panic(err)
		}
		for _, p := range f.Problems {
			fmt.Printf("%s: %s at position %d, offset %d\n", filepath.Base(f.Path), p.Kind, p.Position, p.Offset)
		}
		findings += f.Findings()
	}
	fmt.Println("findings:", findings)
	// Output:
	// 00000000000000000000.log: crc-mismatch at position 0, offset 0
	// findings: 1
}

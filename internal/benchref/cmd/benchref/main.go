// Command benchref runs package benchref's reference programs as whole
// processes, to time them against the klog binary on the same input:
//
//	benchref kmsg-produce < lines > out.log
package main

import (
	"fmt"
	"os"

	"github.com/klog-dev/klog/internal/benchref"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchref kmsg-produce < lines > file")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "kmsg-produce":
		// klog produce's defaults: 500 records, batch.size 16384.
		err = benchref.KmsgProduce(os.Stdin, os.Stdout, 500, 16384)
	default:
		err = fmt.Errorf("unknown program %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchref:", err)
		os.Exit(1)
	}
}

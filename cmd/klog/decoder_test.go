package main

import (
	"os"
	"testing"
)

// TestDumpDecoderFlags: each decoder flag selects its decoder, implies
// --print-data-log, and the first of offsets, transaction-log and
// cluster-metadata wins when several are given, as in kafka-dump-log.
func TestDumpDecoderFlags(t *testing.T) {
	offsets := segments(t, "kafka-written", "coordinator", "__consumer_offsets-0", "00000000000000000000.log")
	txn := segments(t, "kafka-written", "coordinator", "__transaction_state-0", "00000000000000000000.log")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"offsets", []string{"dump", "--offsets-decoder", offsets}, offsets + ".decoder.txt"},
		{"transaction log", []string{"dump", "--transaction-log-decoder", "--files", txn}, txn + ".decoder.txt"},
		{"offsets wins", []string{"dump", "--cluster-metadata-decoder", "--transaction-log-decoder", "--offsets-decoder", offsets}, offsets + ".decoder.txt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := klog(t, c.args...)
			if code != ExitOK {
				t.Fatalf("exit %d, stderr: %s", code, errs)
			}
			want, err := os.ReadFile(c.want)
			if err != nil {
				t.Fatal(err)
			}
			// The oracle was taken with the bare file name.
			if got, w := dropDumpingLine(out), dropDumpingLine(string(want)); got != w {
				t.Errorf("stdout differs from %s:\n%s", c.want, clip(got))
			}
		})
	}
}

func dropDumpingLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[i+1:]
		}
	}
	return s
}

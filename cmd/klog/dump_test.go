package main

import (
	"regexp"
	"testing"
)

// kafkaDumpLogOptions is every option kafka-dump-log.sh --help of Kafka
// 4.3.1 lists: DumpLogSegments.DumpLogSegmentsOptions
// (tools/src/main/java/org/apache/kafka/tools/DumpLogSegments.java) declares
// the first fifteen with parser.accepts, and CommandDefaultOptions
// (server-common/.../server/util/CommandDefaultOptions.java) adds help and
// version.
var kafkaDumpLogOptions = []string{
	"print-data-log", "verify-index-only", "index-sanity-check", "files", "max-message-size", "max-bytes",
	"deep-iteration", "value-decoder-class", "key-decoder-class", "offsets-decoder", "transaction-log-decoder",
	"cluster-metadata-decoder", "remote-log-metadata-decoder", "share-group-state-decoder", "skip-record-metadata",
	"help", "version",
}

// TestDumpHelpListsKafkaDumpLogOptions keeps klog dump --help in step with
// kafka-dump-log.sh --help: every Kafka option is a dump option, listed.
func TestDumpHelpListsKafkaDumpLogOptions(t *testing.T) {
	code, out, errs := klog(t, "dump", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, o := range kafkaDumpLogOptions {
		if !regexp.MustCompile(`(?m)^\s+--` + regexp.QuoteMeta(o) + `\b`).MatchString(out) {
			t.Errorf("klog dump --help does not list --%s", o)
		}
		if o != "help" && lookupFlag(dumpCommand.Flags, "--"+o) == nil {
			t.Errorf("--%s is not a dump flag", o)
		}
	}
}

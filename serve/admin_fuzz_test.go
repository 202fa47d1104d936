package serve

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The admin keys' fuzz targets (fuzz_test.go's fuzzKey), listed here so
// that TestEveryKeyFuzzed sees them.
func init() {
	fuzzedKeys = append(fuzzedKeys, 15, 16, 19, 20, 21, 23, 32, 33, 35, 37, 42, 43, 44, 45, 46, 47, 60, 61, 65, 66)
}

func FuzzDescribeGroups(f *testing.F) { fuzzKey(f, 15) }
func FuzzListGroups(f *testing.F)     { fuzzKey(f, 16) }
func FuzzDeleteGroups(f *testing.F)   { fuzzKey(f, 42) }
func FuzzOffsetDelete(f *testing.F)   { fuzzKey(f, 47) }

func FuzzOffsetForLeaderEpoch(f *testing.F) { fuzzKey(f, 23) }
func FuzzDescribeCluster(f *testing.F)      { fuzzKey(f, 60) }

func FuzzDescribeConfigs(f *testing.F)         { fuzzKey(f, 32) }
func FuzzIncrementalAlterConfigs(f *testing.F) { fuzzKey(f, 44) }
func FuzzAlterConfigs(f *testing.F)            { fuzzKey(f, 33) }

func FuzzCreateTopics(f *testing.F)     { fuzzKey(f, 19) }
func FuzzDeleteTopics(f *testing.F)     { fuzzKey(f, 20) }
func FuzzCreatePartitions(f *testing.F) { fuzzKey(f, 37) }

func FuzzDeleteRecords(f *testing.F)     { fuzzKey(f, 21) }
func FuzzDescribeLogDirs(f *testing.F)   { fuzzKey(f, 35) }
func FuzzDescribeProducers(f *testing.F) { fuzzKey(f, 61) }

func FuzzElectLeaders(f *testing.F)                { fuzzKey(f, 43) }
func FuzzAlterPartitionReassignments(f *testing.F) { fuzzKey(f, 45) }
func FuzzListPartitionReassignments(f *testing.F)  { fuzzKey(f, 46) }

func FuzzDescribeTransactions(f *testing.F) { fuzzKey(f, 65) }
func FuzzListTransactions(f *testing.F)     { fuzzKey(f, 66) }

// Seeds with their filters set: a transaction's id, states known and not,
// producer ids and a duration.
func init() {
	moreSeedRequests = append(moreSeedRequests,
		&kmsg.DescribeTransactionsRequest{TransactionalIDs: []string{"i", "", "unknown"}},
		&kmsg.ListTransactionsRequest{Version: 1, StateFilters: []string{"Ongoing", "CompleteCommit", "Nope"},
			ProducerIDFilters: []int64{1, -1}, DurationFilterMillis: 0})
}

package tiered

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/format"
)

// Layout is how a remote storage manager names and writes a segment's
// objects.
type Layout string

// The layouts klog reads.
const (
	// LayoutKafka is Kafka's LocalTieredStorage
	// (storage/src/test/java/org/apache/kafka/server/log/remote/storage/
	// LocalTieredStorage.java, RemoteTopicPartitionDirectory.java,
	// RemoteLogSegmentFileset.java):
	// <topic>-<partition>-<topicId>/<start offset>-<segment id>.<suffix>,
	// plain Kafka files, one per suffix.
	LayoutKafka Layout = "kafka"
	// LayoutAiven is Aiven's tiered-storage-for-apache-kafka
	// (core/.../ObjectKeyFactory.java):
	// <prefix><topic>-<topicId>/<partition>/<20-digit start offset>-<segment
	// id>.{log,indexes,rsm-manifest}, the .log in chunks transformed one
	// by one, described by the JSON manifest.
	LayoutAiven Layout = "aiven"
)

// Suffixes of LayoutKafka (RemoteLogSegmentFileType); the transaction
// index is optional (RemoteLogManager passes none when the segment has
// no .txnindex file).
const (
	SuffixLog             = ".log"
	SuffixIndex           = ".index"
	SuffixTimeIndex       = ".timeindex"
	SuffixTxnIndex        = ".txnindex"
	SuffixSnapshot        = ".snapshot"
	SuffixEpochCheckpoint = ".leader_epoch_checkpoint"
	// LayoutAiven's (ObjectKeyFactory.Suffix).
	SuffixIndexes  = ".indexes"
	SuffixManifest = ".rsm-manifest"
)

// kafkaSuffixes and aivenSuffixes are each layout's files, mandatory
// first, in the order Kafka's RemoteLogSegmentFileType lists them.
var (
	kafkaSuffixes = []string{SuffixLog, SuffixIndex, SuffixTimeIndex, SuffixSnapshot, SuffixEpochCheckpoint, SuffixTxnIndex}
	aivenSuffixes = []string{SuffixLog, SuffixIndexes, SuffixManifest}
)

// Suffixes lists the layout's artifacts; mandatory reports whether the
// storage manager always writes one.
func (l Layout) Suffixes() []string {
	if l == LayoutAiven {
		return aivenSuffixes
	}
	return kafkaSuffixes
}

// Mandatory reports whether every segment of the layout has an object with
// suffix.
func (l Layout) Mandatory(suffix string) bool {
	return !(l == LayoutKafka && suffix == SuffixTxnIndex)
}

func knownSuffix(l Layout, s string) bool {
	for _, x := range l.Suffixes() {
		if x == s {
			return true
		}
	}
	return false
}

// Uuid is a Kafka Uuid (a topic id, a remote segment id).
type Uuid [16]byte

// String is Kafka's Uuid.toString: URL-safe base64 without padding.
func (u Uuid) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// ParseUuid reads a Uuid as Kafka prints it (22 characters).
func ParseUuid(s string) (Uuid, bool) {
	var u Uuid
	if len(s) != format.TopicIDLen {
		return u, false
	}
	n, err := base64.RawURLEncoding.Decode(u[:], []byte(s))
	return u, err == nil && n == len(u)
}

// TopicPartition names a partition with its topic id, as remote storage
// does (TopicIdPartition).
type TopicPartition struct {
	TopicID   Uuid
	Topic     string
	Partition int32
}

// String is Kafka's "topic-partition".
func (tp TopicPartition) String() string {
	return tp.Topic + "-" + strconv.FormatInt(int64(tp.Partition), 10)
}

// Name is what an object key says about the segment it belongs to.
type Name struct {
	Layout    Layout
	Partition TopicPartition
	// StartOffset and SegmentID are from the file name.
	StartOffset int64
	SegmentID   Uuid
	// Base is the key without its suffix: every artifact of the segment
	// is Base+suffix.
	Base string
	// Suffix is the artifact (".log", ".indexes", ...).
	Suffix string
	// Prefix is LayoutAiven's key.prefix, the part before
	// "<topic>-<topicId>/"; for LayoutKafka, the part before the
	// partition directory.
	Prefix string
}

// ParseKey reads an object key of either layout; ok is false for a key
// that is neither.
func ParseKey(key string) (n Name, ok bool) {
	slash := strings.LastIndexByte(key, '/')
	if slash < 0 {
		return n, false
	}
	file, dir := key[slash+1:], key[:slash]
	start, id, suffix, ok := parseFileName(file)
	if !ok {
		return n, false
	}
	n = Name{StartOffset: start, SegmentID: id, Suffix: suffix, Base: key[:len(key)-len(suffix)]}
	parentAt := strings.LastIndexByte(dir, '/') + 1
	parent := dir[parentAt:]
	// LayoutKafka: the file sits in <topic>-<partition>-<topicId>.
	if knownSuffix(LayoutKafka, suffix) {
		if tp, ok := parseKafkaDir(parent); ok {
			n.Layout, n.Partition, n.Prefix = LayoutKafka, tp, dir[:parentAt]
			return n, true
		}
	}
	// LayoutAiven: <prefix><topic>-<topicId>/<partition>/<file>, with a
	// 20-digit offset (NumberFormat with 20 minimum digits).
	if !knownSuffix(LayoutAiven, suffix) || strings.IndexByte(file, '-') != 20 {
		return n, false
	}
	part, err := strconv.ParseInt(parent, 10, 32)
	if err != nil || part < 0 || strconv.FormatInt(part, 10) != parent || parentAt == 0 {
		return n, false
	}
	topicDir := dir[:parentAt-1]
	topicAt := strings.LastIndexByte(topicDir, '/') + 1
	topic, tid, ok := splitTopicID(topicDir[topicAt:])
	if !ok {
		return n, false
	}
	n.Layout, n.Partition, n.Prefix = LayoutAiven, TopicPartition{TopicID: tid, Topic: topic, Partition: int32(part)}, topicDir[:topicAt]
	return n, true
}

// parseFileName reads "<offset>-<22-character id><suffix>", Kafka's
// RemoteLogSegmentFileset pattern (\d+-)([a-zA-Z0-9_-]{22})(\.[a-z_-]+),
// with '-' allowed in the suffix for Aiven's .rsm-manifest.
func parseFileName(file string) (start int64, id Uuid, suffix string, ok bool) {
	dash := strings.IndexByte(file, '-')
	if dash <= 0 || len(file) < dash+1+format.TopicIDLen+2 {
		return 0, id, "", false
	}
	for i := 0; i < dash; i++ {
		if file[i] < '0' || file[i] > '9' {
			return 0, id, "", false
		}
	}
	start, err := strconv.ParseInt(file[:dash], 10, 64)
	if err != nil {
		return 0, id, "", false
	}
	id, ok = ParseUuid(file[dash+1 : dash+1+format.TopicIDLen])
	suffix = file[dash+1+format.TopicIDLen:]
	if !ok || suffix[0] != '.' {
		return 0, id, "", false
	}
	for _, c := range suffix[1:] {
		if !(c >= 'a' && c <= 'z' || c == '_' || c == '-') {
			return 0, id, "", false
		}
	}
	return start, id, suffix, true
}

// parseKafkaDir reads RemoteTopicPartitionDirectory's name,
// <topic>-<partition>-<topicId>.
func parseKafkaDir(s string) (TopicPartition, bool) {
	rest, tid, ok := splitTopicID(s)
	if !ok {
		return TopicPartition{}, false
	}
	dash := strings.LastIndexByte(rest, '-')
	if dash <= 0 {
		return TopicPartition{}, false
	}
	part, err := strconv.ParseInt(rest[dash+1:], 10, 32)
	if err != nil || part < 0 || !legalTopic(rest[:dash]) {
		return TopicPartition{}, false
	}
	return TopicPartition{TopicID: tid, Topic: rest[:dash], Partition: int32(part)}, true
}

// splitTopicID splits "<topic>-<topicId>".
func splitTopicID(s string) (string, Uuid, bool) {
	if len(s) < format.TopicIDLen+2 || s[len(s)-format.TopicIDLen-1] != '-' {
		return "", Uuid{}, false
	}
	id, ok := ParseUuid(s[len(s)-format.TopicIDLen:])
	topic := s[:len(s)-format.TopicIDLen-1]
	return topic, id, ok && legalTopic(topic)
}

// legalTopic is Kafka's Topic.LEGAL_CHARS, [a-zA-Z0-9._-]+, at most 249.
func legalTopic(s string) bool {
	if s == "" || len(s) > 249 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// FilenamePrefix is Kafka's LogFileUtils.filenamePrefixFromOffset: the
// offset in 20 digits.
func FilenamePrefix(offset int64) string {
	s := strconv.FormatInt(offset, 10)
	if len(s) >= 20 {
		return s
	}
	return strings.Repeat("0", 20-len(s)) + s
}

// KeyBase is the key of a segment's artifacts without the suffix, as its
// layout names it under prefix (LayoutKafka: the directory holding the
// partition directories; LayoutAiven: key.prefix).
func KeyBase(l Layout, prefix string, tp TopicPartition, start int64, id Uuid) string {
	if l == LayoutAiven {
		return prefix + tp.Topic + "-" + tp.TopicID.String() + "/" + strconv.FormatInt(int64(tp.Partition), 10) + "/" + FilenamePrefix(start) + "-" + id.String()
	}
	return prefix + tp.Topic + "-" + strconv.FormatInt(int64(tp.Partition), 10) + "-" + tp.TopicID.String() + "/" + FilenamePrefix(start) + "-" + id.String()
}

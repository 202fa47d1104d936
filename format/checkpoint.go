package format

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// Text checkpoint files (server-common/.../CheckpointFile.java): a version
// line, an entry-count line, then one entry per line, tokens separated by
// whitespace.

// CheckpointError is a checkpoint file Kafka would refuse to load. Line is
// 1-based (0 when the problem is not on one line).
type CheckpointError struct {
	Line int
	Msg  string
}

func (e *CheckpointError) Error() string {
	if e.Line > 0 {
		return "line " + strconv.Itoa(e.Line) + ": " + e.Msg
	}
	return e.Msg
}

// Unwrap classifies checkpoint errors as corrupt data.
func (e *CheckpointError) Unwrap() error { return ErrCorrupt }

// Checkpoint is a parsed text checkpoint: Version and the entry lines split
// into tokens.
type Checkpoint struct {
	Version int
	Entries [][]string
}

var checkpointSpace = regexp.MustCompile(`\s+`)

// ParseCheckpoint reads a checkpoint whose entries must each have width
// tokens, with Kafka's rules: an empty file, or one without a count line, is
// an empty list; the version must equal want; the number of entries must
// equal the count.
func ParseCheckpoint(data []byte, want, width int) (*Checkpoint, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	cp := &Checkpoint{Version: want}
	if !sc.Scan() {
		return cp, sc.Err()
	}
	v, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
	if err != nil || v != want {
		return nil, &CheckpointError{Line: 1, Msg: "Unrecognised version:" + sc.Text() + ", expected version: " + strconv.Itoa(want)}
	}
	if !sc.Scan() {
		return cp, sc.Err()
	}
	n, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
	if err != nil || n < 0 {
		return nil, &CheckpointError{Line: 2, Msg: "Malformed line in checkpoint file: " + sc.Text()}
	}
	line := 2
	for sc.Scan() {
		line++
		toks := checkpointSpace.Split(sc.Text(), -1)
		if len(toks) != width {
			return nil, &CheckpointError{Line: line, Msg: "Malformed line in checkpoint file: " + sc.Text()}
		}
		cp.Entries = append(cp.Entries, toks)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(cp.Entries) != n {
		return nil, &CheckpointError{Msg: "Expected [" + strconv.Itoa(n) + "] entries in checkpoint file, but found only [" + strconv.Itoa(len(cp.Entries)) + "]"}
	}
	return cp, nil
}

// EpochEntry is a leader-epoch-checkpoint entry.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// ParseLeaderEpochCheckpoint reads a leader-epoch-checkpoint (version 0,
// "<epoch> <startOffset>" lines).
func ParseLeaderEpochCheckpoint(data []byte) ([]EpochEntry, error) {
	cp, err := ParseCheckpoint(data, 0, 2)
	if err != nil {
		return nil, err
	}
	out := make([]EpochEntry, 0, len(cp.Entries))
	for i, e := range cp.Entries {
		ep, err1 := strconv.ParseInt(e[0], 10, 32)
		off, err2 := strconv.ParseInt(e[1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, &CheckpointError{Line: i + 3, Msg: "Malformed line in checkpoint file: " + strings.Join(e, " ")}
		}
		out = append(out, EpochEntry{Epoch: int32(ep), StartOffset: off})
	}
	return out, nil
}

// AppendLeaderEpochCheckpoint appends a leader-epoch-checkpoint's text as
// Kafka writes it (LeaderEpochCheckpointFile's formatter over
// CheckpointFile): the version 0, the entry count, then one
// "<epoch> <startOffset>" line per entry. ParseLeaderEpochCheckpoint reads it
// back.
func AppendLeaderEpochCheckpoint(dst []byte, entries []EpochEntry) []byte {
	dst = append(dst, "0\n"...)
	dst = strconv.AppendInt(dst, int64(len(entries)), 10)
	dst = append(dst, '\n')
	for _, e := range entries {
		dst = strconv.AppendInt(dst, int64(e.Epoch), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, e.StartOffset, 10)
		dst = append(dst, '\n')
	}
	return dst
}

// OffsetEntry is an entry of replication-offset-checkpoint,
// recovery-point-offset-checkpoint, log-start-offset-checkpoint or
// cleaner-offset-checkpoint.
type OffsetEntry struct {
	Topic     string
	Partition int32
	Offset    int64
}

// ParseOffsetCheckpoint reads an offset checkpoint (version 0,
// "<topic> <partition> <offset>" lines), keeping file order.
func ParseOffsetCheckpoint(data []byte) ([]OffsetEntry, error) {
	cp, err := ParseCheckpoint(data, 0, 3)
	if err != nil {
		return nil, err
	}
	out := make([]OffsetEntry, 0, len(cp.Entries))
	for i, e := range cp.Entries {
		p, err1 := strconv.ParseInt(e[1], 10, 32)
		off, err2 := strconv.ParseInt(e[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, &CheckpointError{Line: i + 3, Msg: "Malformed line in checkpoint file: " + strings.Join(e, " ")}
		}
		out = append(out, OffsetEntry{Topic: e[0], Partition: int32(p), Offset: off})
	}
	return out, nil
}

// AppendOffsetCheckpoint writes an offset checkpoint's text.
func AppendOffsetCheckpoint(dst []byte, entries []OffsetEntry) []byte {
	dst = append(dst, "0\n"...)
	dst = strconv.AppendInt(dst, int64(len(entries)), 10)
	dst = append(dst, '\n')
	for _, e := range entries {
		dst = append(dst, e.Topic...)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(e.Partition), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, e.Offset, 10)
		dst = append(dst, '\n')
	}
	return dst
}

// PartitionMetadata is a partition.metadata file: "version: 0\ntopic_id: <id>".
type PartitionMetadata struct {
	Version int
	// TopicID is Kafka's Uuid.toString(): 22 characters of URL-safe base64.
	TopicID string
}

// ParsePartitionMetadata reads partition.metadata (PartitionMetadataReadBuffer):
// lines split on ":\s+", exactly two parts each, any version >= 0, and a
// topic id that is 16 bytes of base64url and not all zero.
func ParsePartitionMetadata(data []byte) (PartitionMetadata, error) {
	var m PartitionMetadata
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) < 2 {
		return m, &CheckpointError{Msg: "partition.metadata needs a version line and a topic_id line"}
	}
	sep := regexp.MustCompile(`:\s+`)
	v := sep.Split(lines[0], -1)
	if len(v) != 2 || v[0] != "version" {
		return m, &CheckpointError{Line: 1, Msg: "Malformed line in partition metadata file: " + lines[0]}
	}
	ver, err := strconv.Atoi(v[1])
	if err != nil || ver < 0 {
		return m, &CheckpointError{Line: 1, Msg: "Invalid version in partition metadata file: " + v[1]}
	}
	t := sep.Split(lines[1], -1)
	if len(t) != 2 || t[0] != "topic_id" {
		return m, &CheckpointError{Line: 2, Msg: "Malformed line in partition metadata file: " + lines[1]}
	}
	id, err := base64.RawURLEncoding.DecodeString(t[1])
	if err != nil || len(id) != 16 {
		return m, &CheckpointError{Line: 2, Msg: "Invalid topic id in partition metadata file: " + t[1]}
	}
	if bytes.Equal(id, make([]byte, 16)) {
		return m, &CheckpointError{Line: 2, Msg: "Invalid topic id in partition metadata file: the all-zero id"}
	}
	return PartitionMetadata{Version: ver, TopicID: t[1]}, nil
}

// AppendPartitionMetadata appends partition.metadata's content the way
// Kafka writes it (PartitionMetadata.encode): "version: V\ntopic_id: ID",
// with no newline after the id.
func AppendPartitionMetadata(dst []byte, m PartitionMetadata) []byte {
	dst = append(dst, "version: "...)
	dst = strconv.AppendInt(dst, int64(m.Version), 10)
	dst = append(dst, "\ntopic_id: "...)
	return append(dst, m.TopicID...)
}

// TopicIDLen is the length of a topic id as Kafka prints it
// (Uuid.toString): 16 bytes in URL-safe base64 without padding.
const TopicIDLen = 22

// ParseTopicID reads a topic id as Kafka prints it: exactly TopicIDLen
// characters of URL-safe base64 in the one spelling Uuid.toString gives
// (the last character's four unused bits zero), and not the all-zero id,
// which Kafka reserves for "no id" and its partition.metadata reader
// refuses.
func ParseTopicID(s string) ([16]byte, error) {
	var id [16]byte
	if len(s) != TopicIDLen {
		return id, errors.New("topic id " + strconv.Quote(s) + " is " + strconv.Itoa(len(s)) +
			" characters; Kafka's are " + strconv.Itoa(TopicIDLen) + " of URL-safe base64")
	}
	n, err := base64.RawURLEncoding.Strict().Decode(id[:], []byte(s))
	if err != nil {
		// Valid base64 whose last character carries bits past the 16
		// bytes: the same id in a spelling Kafka never prints; say which.
		if m, lerr := base64.RawURLEncoding.Decode(id[:], []byte(s)); lerr == nil && m == len(id) {
			return [16]byte{}, errors.New("topic id " + strconv.Quote(s) + " sets bits past the 16 bytes in its last character; Kafka prints that id as " +
				FormatTopicID(id))
		}
	}
	if err != nil || n != len(id) {
		return [16]byte{}, errors.New("topic id " + strconv.Quote(s) + " is not " + strconv.Itoa(TopicIDLen) +
			" characters of URL-safe base64 as Kafka prints a Uuid")
	}
	if id == ([16]byte{}) {
		return id, errors.New("topic id " + s + " is the all-zero id, which Kafka reserves for none")
	}
	return id, nil
}

// FormatTopicID is Kafka's Uuid.toString: URL-safe base64 without padding.
func FormatTopicID(id [16]byte) string {
	return base64.RawURLEncoding.EncodeToString(id[:])
}

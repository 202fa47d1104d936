package partition

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
)

// ReadTopicID reads the topic id of the partition directory dir from its
// partition.metadata (PartitionMetadataFile.read). ok is false when there
// is no such file; a file that does not parse is an error.
func ReadTopicID(dir string) (id [16]byte, ok bool, err error) {
	path := filepath.Join(dir, PartitionMetadata)
	data, err := safeio.ReadFile(path, safeio.MaxCheckpointBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return id, false, nil
	}
	if err != nil {
		return id, false, err
	}
	m, err := format.ParsePartitionMetadata(data)
	if err != nil {
		return id, false, fmt.Errorf("%s: %w", path, err)
	}
	// ParsePartitionMetadata has checked it is 16 bytes of base64 and not
	// zero, read as leniently as Kafka's Uuid.fromString: it may be spelt
	// in a way toString would not (ParseTopicID refuses those).
	if n, err := base64.RawURLEncoding.Decode(id[:], []byte(m.TopicID)); err != nil || n != len(id) {
		return [16]byte{}, false, errors.New(path + ": topic id " + m.TopicID + " is not 16 bytes of URL-safe base64")
	}
	return id, true, nil
}

// SiblingTopicID is the topic id another partition of dir's topic in the
// same log directory records: the topic is dir's name minus its last
// "-N", its partitions are the directories <topic>-<M> beside it, and the
// lowest-numbered one with a readable partition.metadata answers. ok is
// false when none has one (or dir's name is not <topic>-<N>).
func SiblingTopicID(dir string) (id [16]byte, ok bool, err error) {
	dir = filepath.Clean(dir)
	topic, self, named := ParseDirName(filepath.Base(dir))
	if !named {
		return id, false, nil
	}
	logDir := filepath.Dir(dir)
	ents, err := os.ReadDir(logDir)
	if err != nil {
		return id, false, err
	}
	best := int32(-1)
	for _, e := range ents {
		t, n, isPart := ParseDirName(e.Name())
		if !isPart || t != topic || n == self || !e.IsDir() || (best >= 0 && n > best) {
			continue
		}
		// A sibling's unreadable file is its problem (klog verify says
		// so), not a reason to refuse to create this partition.
		if b, found, err := ReadTopicID(filepath.Join(logDir, e.Name())); err == nil && found {
			id, best = b, n
		}
	}
	return id, best >= 0, nil
}

// NewTopicID returns a fresh topic id by the rules of Kafka's
// Uuid.randomUuid: a random version 4, variant 2 UUID (as
// java.util.UUID.randomUUID makes), never the reserved zero id or
// METADATA_TOPIC_ID (1), and never one whose printed form starts with "-",
// which a command line would take for a flag.
func NewTopicID() ([16]byte, error) { return newTopicID(rand.Reader) }

func newTopicID(r io.Reader) ([16]byte, error) {
	var id [16]byte
	for {
		if _, err := io.ReadFull(r, id[:]); err != nil {
			return [16]byte{}, err
		}
		id[6] = id[6]&0x0f | 0x40 // version 4
		id[8] = id[8]&0x3f | 0x80 // variant 2 (Leach-Salz)
		if id == ([16]byte{}) || id == metadataTopicID || format.FormatTopicID(id)[0] == '-' {
			continue
		}
		return id, nil
	}
}

// metadataTopicID is Kafka's Uuid.METADATA_TOPIC_ID (ONE_UUID), reserved for
// __cluster_metadata.
var metadataTopicID = [16]byte{15: 1}

// TopicIDMismatchError is EnsureTopicID's answer when partition.metadata
// already records another topic id than the one asked for.
type TopicIDMismatchError struct {
	Path       string // the partition.metadata file
	Have, Want [16]byte
}

func (e *TopicIDMismatchError) Error() string {
	return e.Path + " records topic id " + format.FormatTopicID(e.Have) + ", not " + format.FormatTopicID(e.Want) +
		" (klog never rewrites it)"
}

// EnsureTopicID gives the partition directory dir a partition.metadata,
// as a broker writes one when it creates a partition's log
// (PartitionMetadataFile.maybeFlush): never over an existing one.
//
//   - If dir has one, it is kept; want (if not zero) must be its id, else
//     the error is a *TopicIDMismatchError.
//   - Else if want is not zero, it is written.
//   - Else if create, the id of the topic's other partitions in the same
//     log directory (SiblingTopicID) is written, or a NewTopicID.
//   - Else nothing is written: klog does not invent an id for a partition
//     it did not create.
//
// The returned id is the one dir now records (zero when it records none).
// The file goes through WriteFileAtomic; the caller holds dir's lock.
func EnsureTopicID(dir string, want [16]byte, create bool, opts WriteOptions) ([16]byte, error) {
	have, ok, err := ReadTopicID(dir)
	if err != nil {
		return have, err
	}
	if ok {
		if want != ([16]byte{}) && want != have {
			return have, &TopicIDMismatchError{Path: filepath.Join(dir, PartitionMetadata), Have: have, Want: want}
		}
		return have, nil
	}
	id := want
	if id == ([16]byte{}) {
		if !create {
			return id, nil
		}
		if id, ok, err = SiblingTopicID(dir); err != nil {
			return [16]byte{}, err
		}
		if !ok {
			if id, err = NewTopicID(); err != nil {
				return [16]byte{}, err
			}
		}
	}
	data := format.AppendPartitionMetadata(nil, format.PartitionMetadata{Version: 0, TopicID: format.FormatTopicID(id)})
	if err := WriteFileAtomic(filepath.Join(dir, PartitionMetadata), data, opts); err != nil {
		return [16]byte{}, err
	}
	return id, nil
}

package tiered

import (
	"bytes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Manifest is the Aiven plugin's .rsm-manifest, version 1
// (core/.../manifest/SegmentManifestV1.java and what its Jackson mapper
// writes: RemoteStorageManagerUtils.getObjectMapper).
type Manifest struct {
	Version    string              `json:"version"`
	ChunkIndex ChunkIndexJSON      `json:"chunkIndex"`
	Indexes    SegmentIndexes      `json:"segmentIndexes"`
	Compressed bool                `json:"compression"`
	Encryption *ManifestEncryption `json:"encryption,omitempty"`
	// Segment is the remote log segment metadata the plugin wrote for
	// reading people (it does not read it back).
	Segment *ManifestSegment `json:"remoteLogSegmentMetadata,omitempty"`

	chunks  *ChunkIndex
	keyOnce sync.Once
	aead    cipher.AEAD
	keyErr  error
}

// ChunkIndexJSON is the manifest's chunkIndex: "fixed"
// (FixedSizeChunkIndex: every transformed chunk the same size but the last,
// as encryption alone gives) or "variable" (VariableSizeChunkIndex: the
// transformed sizes listed, as compression gives).
type ChunkIndexJSON struct {
	Type                      string `json:"type"`
	OriginalChunkSize         int32  `json:"originalChunkSize"`
	OriginalFileSize          int32  `json:"originalFileSize"`
	TransformedChunkSize      int32  `json:"transformedChunkSize,omitempty"`
	FinalTransformedChunkSize int32  `json:"finalTransformedChunkSize,omitempty"`
	// TransformedChunks is base64 of a zstd frame holding
	// ChunkSizesBinaryCodec's encoding of the sizes
	// (TransformedChunksSerializer).
	TransformedChunks string `json:"transformedChunks,omitempty"`
}

// SegmentIndexes are where each index sits in the .indexes object
// (SegmentIndexesV1); Transaction is nil when the segment had none.
type SegmentIndexes struct {
	Offset           *IndexRange `json:"offset"`
	Timestamp        *IndexRange `json:"timestamp"`
	ProducerSnapshot *IndexRange `json:"producerSnapshot"`
	LeaderEpoch      *IndexRange `json:"leaderEpoch"`
	Transaction      *IndexRange `json:"transaction"`
}

// IndexRange is one index in the .indexes object (SegmentIndexV1): its
// transformed bytes.
type IndexRange struct {
	Position int32 `json:"position"`
	Size     int32 `json:"size"`
}

// ManifestEncryption is SegmentEncryptionMetadataV1: the data key wrapped
// with the key pair named before the ':' ("key1:<base64>",
// EncryptedDataKey.serialize) and the AES-GCM additional data (base64).
type ManifestEncryption struct {
	DataKey string `json:"dataKey"`
	AAD     []byte `json:"aad"`
}

// ManifestSegment is the part of the metadata the manifest repeats.
type ManifestSegment struct {
	SegmentID struct {
		TopicIDPartition struct {
			TopicID        string `json:"topicId"`
			TopicPartition struct {
				Topic     string `json:"topic"`
				Partition int32  `json:"partition"`
			} `json:"topicPartition"`
		} `json:"topicIdPartition"`
		ID string `json:"id"`
	} `json:"remoteLogSegmentId"`
	StartOffset         int64            `json:"startOffset"`
	EndOffset           int64            `json:"endOffset"`
	MaxTimestampMs      int64            `json:"maxTimestampMs"`
	BrokerID            int32            `json:"brokerId"`
	EventTimestampMs    int64            `json:"eventTimestampMs"`
	SegmentLeaderEpochs map[string]int64 `json:"segmentLeaderEpochs"`
	TxnIdxEmpty         bool             `json:"txnIdxEmpty"`
}

// Limits on what a manifest may make klog hold. The plugin itself refuses a
// decoded chunk-size list over 10 MiB (TransformedChunksDeserializer.
// MAX_DECOMPRESSED_SIZE).
const (
	MaxManifestBytes     = 32 << 20
	maxChunkSizesEncoded = 10 << 20
	// MaxChunkBytes bounds one chunk (original or transformed) klog holds
	// in memory; the plugin's chunk.size is 4 MiB by default.
	MaxChunkBytes = 64 << 20
)

// ErrManifest marks a manifest that cannot be read or that contradicts
// itself.
var ErrManifest = errors.New("invalid manifest")

type manifestError struct{ msg string }

func (e *manifestError) Error() string { return e.msg }
func (e *manifestError) Unwrap() error { return ErrManifest }

func manifestErr(msg string) error { return &manifestError{msg: msg} }

// ParseManifest reads a .rsm-manifest and its chunk index.
func ParseManifest(data []byte) (*Manifest, error) {
	if len(data) > MaxManifestBytes {
		return nil, manifestErr("the manifest is " + strconv.Itoa(len(data)) + " bytes, over klog's " + strconv.Itoa(MaxManifestBytes) + "-byte limit")
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil {
		return nil, manifestErr("not the plugin's JSON manifest: " + err.Error())
	}
	if m.Version != "1" {
		return nil, manifestErr("manifest version " + strconv.Quote(m.Version) + ": klog reads version 1 (SegmentManifestV1)")
	}
	ix := m.Indexes
	if ix.Offset == nil || ix.Timestamp == nil || ix.ProducerSnapshot == nil || ix.LeaderEpoch == nil {
		return nil, manifestErr("segmentIndexes lacks one of offset, timestamp, producerSnapshot, leaderEpoch (all are required)")
	}
	for _, r := range []*IndexRange{ix.Offset, ix.Timestamp, ix.ProducerSnapshot, ix.LeaderEpoch, ix.Transaction} {
		if r != nil && (r.Position < 0 || r.Size < 0) {
			return nil, manifestErr("segmentIndexes has a negative position or size")
		}
	}
	if m.Encryption != nil {
		if _, _, err := splitDataKey(m.Encryption.DataKey); err != nil {
			return nil, err
		}
	}
	ci, err := newChunkIndex(m.ChunkIndex)
	if err != nil {
		return nil, err
	}
	m.chunks = ci
	return &m, nil
}

// Chunks is the manifest's chunk index.
func (m *Manifest) Chunks() *ChunkIndex { return m.chunks }

// ChunkIndex maps the original .log's bytes to the transformed object's
// chunks (AbstractChunkIndex).
type ChunkIndex struct {
	Type              string
	OriginalChunkSize int32
	OriginalFileSize  int32
	count             int
	fixed             int32   // fixed: transformedChunkSize
	final             int32   // fixed: finalTransformedChunkSize
	sizes             []int32 // variable: each transformed size
	starts            []int64 // variable: transformed position of each chunk
}

// Chunk is one chunk: where it sits in the original file and in the
// transformed object (Chunk.java).
type Chunk struct {
	ID                  int
	OriginalPosition    int64
	OriginalSize        int
	TransformedPosition int64
	TransformedSize     int
}

func newChunkIndex(j ChunkIndexJSON) (*ChunkIndex, error) {
	if j.OriginalChunkSize <= 0 {
		return nil, manifestErr("originalChunkSize must be positive, " + strconv.Itoa(int(j.OriginalChunkSize)) + " given")
	}
	if j.OriginalFileSize < 0 {
		return nil, manifestErr("originalFileSize must be non-negative")
	}
	if j.OriginalChunkSize > MaxChunkBytes {
		return nil, manifestErr("originalChunkSize " + strconv.Itoa(int(j.OriginalChunkSize)) + " is over klog's " + strconv.Itoa(MaxChunkBytes) + "-byte chunk limit")
	}
	ci := &ChunkIndex{Type: j.Type, OriginalChunkSize: j.OriginalChunkSize, OriginalFileSize: j.OriginalFileSize}
	want := int((int64(j.OriginalFileSize) + int64(j.OriginalChunkSize) - 1) / int64(j.OriginalChunkSize))
	switch j.Type {
	case "fixed":
		if j.TransformedChunkSize < 0 || j.FinalTransformedChunkSize < 0 {
			return nil, manifestErr("a fixed chunk index with a negative transformed size")
		}
		if j.TransformedChunkSize > MaxChunkBytes || j.FinalTransformedChunkSize > MaxChunkBytes {
			return nil, manifestErr("transformed chunks over klog's " + strconv.Itoa(MaxChunkBytes) + "-byte chunk limit")
		}
		ci.count, ci.fixed, ci.final = want, j.TransformedChunkSize, j.FinalTransformedChunkSize
	case "variable":
		sizes, err := decodeChunkSizes(j.TransformedChunks)
		if err != nil {
			return nil, err
		}
		if len(sizes) == 0 {
			return nil, manifestErr("a variable chunk index with no chunk")
		}
		if len(sizes) != max(want, 1) {
			return nil, manifestErr("the variable chunk index lists " + strconv.Itoa(len(sizes)) + " chunks; originalFileSize " +
				strconv.Itoa(int(j.OriginalFileSize)) + " in chunks of " + strconv.Itoa(int(j.OriginalChunkSize)) + " makes " + strconv.Itoa(want))
		}
		ci.count, ci.sizes = want, sizes
		ci.starts = make([]int64, len(sizes))
		var pos int64
		for i, s := range sizes {
			if s > MaxChunkBytes {
				return nil, manifestErr("chunk " + strconv.Itoa(i) + " is " + strconv.Itoa(int(s)) + " bytes transformed, over klog's " + strconv.Itoa(MaxChunkBytes) + "-byte chunk limit")
			}
			ci.starts[i] = pos
			pos += int64(s)
		}
	default:
		return nil, manifestErr("chunk index type " + strconv.Quote(j.Type) + ": klog reads \"fixed\" and \"variable\"")
	}
	return ci, nil
}

// Len is the number of chunks (0 for an empty file).
func (ci *ChunkIndex) Len() int { return ci.count }

// Chunk returns chunk i (0 <= i < Len).
func (ci *ChunkIndex) Chunk(i int) Chunk {
	c := Chunk{ID: i, OriginalPosition: int64(i) * int64(ci.OriginalChunkSize), OriginalSize: int(ci.OriginalChunkSize)}
	last := i == ci.count-1
	if last {
		c.OriginalSize = int(int64(ci.OriginalFileSize) - c.OriginalPosition)
	}
	if ci.sizes != nil {
		c.TransformedPosition, c.TransformedSize = ci.starts[i], int(ci.sizes[i])
		return c
	}
	c.TransformedPosition, c.TransformedSize = int64(i)*int64(ci.fixed), int(ci.fixed)
	if last {
		c.TransformedSize = int(ci.final)
	}
	return c
}

// TransformedSize is the size the .log object must have.
func (ci *ChunkIndex) TransformedSize() int64 {
	if ci.count == 0 {
		return 0
	}
	c := ci.Chunk(ci.count - 1)
	return c.TransformedPosition + int64(c.TransformedSize)
}

// ChunkAt is the chunk holding original byte pos (findChunkForOriginalOffset).
func (ci *ChunkIndex) ChunkAt(pos int64) (Chunk, bool) {
	if pos < 0 || pos >= int64(ci.OriginalFileSize) {
		return Chunk{}, false
	}
	return ci.Chunk(int(pos / int64(ci.OriginalChunkSize))), true
}

// decodeChunkSizes reads TransformedChunksDeserializer's form: base64 of a
// zstd frame (with its content size) of ChunkSizesBinaryCodec's bytes.
func decodeChunkSizes(s string) ([]int32, error) {
	compressed, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, manifestErr("transformedChunks is not base64: " + err.Error())
	}
	var hdr zstd.Header
	if err := hdr.Decode(compressed); err != nil {
		return nil, manifestErr("transformedChunks is not a zstd frame: " + err.Error())
	}
	if !hdr.HasFCS || hdr.FrameContentSize > maxChunkSizesEncoded {
		return nil, manifestErr("transformedChunks' zstd frame does not give a decompressed size of at most 10 MiB (the plugin refuses it too)")
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxChunkSizesEncoded), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	raw, err := d.DecodeAll(compressed, make([]byte, 0, hdr.FrameContentSize))
	if err != nil {
		return nil, manifestErr("transformedChunks' zstd frame: " + err.Error())
	}
	return decodeChunkSizesBinary(raw)
}

// decodeChunkSizesBinary is ChunkSizesBinaryCodec.decode: a 4-byte count;
// for one value, that value; for more, a 4-byte base, one byte of bytes per
// value, count-1 big-endian values over the base, and the last value in
// full 4 bytes. Values are never negative.
func decodeChunkSizesBinary(b []byte) ([]int32, error) {
	bad := func(msg string) error { return manifestErr("transformedChunks' chunk sizes: " + msg) }
	if len(b) < 4 {
		return nil, bad("shorter than the 4-byte count")
	}
	count := int64(int32(binary.BigEndian.Uint32(b)))
	b = b[4:]
	switch {
	case count < 0:
		return nil, bad("negative count " + strconv.FormatInt(count, 10))
	case count == 0:
		return nil, nil
	case count == 1:
		if len(b) < 4 {
			return nil, bad("the single value is cut short")
		}
		v := int32(binary.BigEndian.Uint32(b))
		if v < 0 {
			return nil, bad("negative size")
		}
		return []int32{v}, nil
	}
	if len(b) < 5 {
		return nil, bad("the base and bytes-per-value are cut short")
	}
	base := int32(binary.BigEndian.Uint32(b))
	per := int(b[4])
	b = b[5:]
	if per < 1 || per > 4 {
		return nil, bad(strconv.Itoa(per) + " bytes per value (1 to 4)")
	}
	if need := (count-1)*int64(per) + 4; int64(len(b)) != need {
		return nil, bad(strconv.Itoa(len(b)) + " bytes of values, " + strconv.FormatInt(need, 10) + " expected for " + strconv.FormatInt(count, 10) + " values")
	}
	out := make([]int32, 0, count)
	for i := int64(0); i < count-1; i++ {
		var v uint32
		for _, c := range b[:per] {
			v = v<<8 | uint32(c)
		}
		b = b[per:]
		s := int64(int32(v)) + int64(base)
		if per < 4 {
			s = int64(v) + int64(base)
		}
		if s < 0 || s > 1<<31-1 {
			return nil, bad("a size below zero or past 2^31-1")
		}
		out = append(out, int32(s))
	}
	last := int32(binary.BigEndian.Uint32(b))
	if last < 0 || base < 0 {
		return nil, bad("negative size")
	}
	return append(out, last), nil
}

// splitDataKey reads EncryptedDataKey.parse's "<key pair id>:<base64>".
func splitDataKey(s string) (id string, wrapped []byte, err error) {
	colon := strings.IndexByte(s, ':')
	if colon < 0 || strings.LastIndexByte(s, ':') != colon {
		return "", nil, manifestErr("malformed encrypted data key string (want <key pair id>:<base64>)")
	}
	id = s[:colon]
	if strings.TrimSpace(id) == "" {
		return "", nil, manifestErr("the encrypted data key names no key pair")
	}
	wrapped, err = base64.StdEncoding.DecodeString(s[colon+1:])
	if err != nil || len(wrapped) == 0 {
		return "", nil, manifestErr("the encrypted data key is not base64")
	}
	return id, wrapped, nil
}

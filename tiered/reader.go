package tiered

import (
	"context"
	"crypto/cipher"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/klog-dev/klog/objstore"
)

// Remote reads segments from a store: the objects of either layout, the
// Aiven manifests, chunks and indexes, decrypted with Keys.
type Remote struct {
	Store objstore.Store
	Keys  KeyRing
	// BlockSize is the size of one ranged read of a .log (rounded to
	// whole chunks for LayoutAiven); 0 means objstore.DefaultBlockSize.
	BlockSize int
	// Depth is how many blocks one reader keeps in flight; 0 means
	// objstore.DefaultDepth.
	Depth int
}

// Artifact is one object of a segment, with what was listed of it.
type Artifact struct {
	Suffix  string `json:"suffix"`
	Key     string `json:"key"`
	Size    int64  `json:"size"`
	Present bool   `json:"present"`
}

// Segment is one remote segment as the store holds it: the objects that
// share a key base.
type Segment struct {
	Name
	// Objects are the artifacts found, by suffix.
	Objects map[string]objstore.Object
}

// Key is the segment's object key with suffix.
func (s *Segment) Key(suffix string) string { return s.Base + suffix }

// Has reports whether the store holds the artifact.
func (s *Segment) Has(suffix string) bool { _, ok := s.Objects[suffix]; return ok }

// Missing lists the mandatory artifacts the store does not hold.
func (s *Segment) Missing() []string {
	var out []string
	for _, sfx := range s.Layout.Suffixes() {
		if s.Layout.Mandatory(sfx) && !s.Has(sfx) {
			out = append(out, sfx)
		}
	}
	return out
}

// ReadManifest reads and parses an Aiven segment's .rsm-manifest.
func (r *Remote) ReadManifest(ctx context.Context, key string) (*Manifest, error) {
	o, err := r.Store.Stat(ctx, key)
	if err != nil {
		return nil, err
	}
	if o.Size > MaxManifestBytes {
		return nil, manifestErr(r.Store.Location(key) + ": " + strconv.FormatInt(o.Size, 10) + " bytes, over klog's manifest limit")
	}
	data, err := readAll(ctx, r.Store, key, o.Size)
	if err != nil {
		return nil, err
	}
	m, err := ParseManifest(data)
	if err != nil {
		return nil, objectErr(r.Store.Location(key), -1, err)
	}
	return m, nil
}

// readAll reads a small object whole (size already bounded by the caller).
func readAll(ctx context.Context, st objstore.Store, key string, size int64) ([]byte, error) {
	buf := make([]byte, size)
	n, err := st.ReadAt(ctx, key, buf, 0)
	if err == io.EOF || err == nil && n < len(buf) {
		return nil, &objstore.ShortError{Location: st.Location(key), Want: size, Got: int64(n)}
	}
	if err != nil {
		return nil, err
	}
	return buf, nil
}

// ObjectError is a problem at a byte position of an object: a chunk that
// does not decrypt or decompress, a manifest that does not parse.
type ObjectError struct {
	Location string
	// Pos is the byte position in the object (-1: the object as a whole).
	Pos int64
	// Chunk is the chunk's id, or -1.
	Chunk int
	// OriginalPos is where the chunk's bytes sit in the original .log
	// (-1 when not a chunk).
	OriginalPos int64
	Err         error
}

func (e *ObjectError) Error() string {
	s := e.Location
	if e.Chunk >= 0 && e.OriginalPos >= 0 {
		s += ": chunk " + strconv.Itoa(e.Chunk) + " at byte " + strconv.FormatInt(e.Pos, 10) + " (original position " + strconv.FormatInt(e.OriginalPos, 10) + ")"
	} else if e.Pos >= 0 {
		s += " at byte " + strconv.FormatInt(e.Pos, 10)
	}
	return s + ": " + e.Err.Error()
}
func (e *ObjectError) Unwrap() error { return e.Err }

func objectErr(loc string, pos int64, err error) *ObjectError {
	return &ObjectError{Location: loc, Pos: pos, Chunk: -1, OriginalPos: -1, Err: err}
}

// LogReader is the original bytes of a remote .log.
type LogReader struct {
	*objstore.SeqReader
	// Manifest is LayoutAiven's (nil for LayoutKafka).
	Manifest *Manifest
}

// OpenLog reads seg's .log as the broker wrote it: the object itself
// (LayoutKafka), or its chunks fetched in ranged reads aligned to chunks,
// decrypted and decompressed (LayoutAiven, with the manifest m, read when
// nil). Close the reader.
func (r *Remote) OpenLog(ctx context.Context, seg *Segment, m *Manifest) (*LogReader, error) {
	key := seg.Key(SuffixLog)
	if seg.Layout == LayoutKafka {
		o, ok := seg.Objects[SuffixLog]
		if !ok {
			st, err := r.Store.Stat(ctx, key)
			if err != nil {
				return nil, err
			}
			o = st
		}
		return &LogReader{SeqReader: objstore.NewSeqReader(ctx, &objstore.ObjectBlocks{Store: r.Store, Key: key, Size: o.Size, BlockSize: r.blockSize()}, o.Size, r.Depth)}, nil
	}
	if m == nil {
		var err error
		if m, err = r.ReadManifest(ctx, seg.Key(SuffixManifest)); err != nil {
			return nil, err
		}
	}
	cb, err := r.chunkBlocks(m, key)
	if err != nil {
		return nil, &ObjectError{Location: r.Store.Location(seg.Key(SuffixManifest)), Pos: -1, Chunk: -1, OriginalPos: -1, Err: err}
	}
	depth := r.Depth
	if depth <= 0 && cb.Len() > 0 {
		// About 8 MiB read ahead, however large the chunks.
		_, n := cb.Range(0)
		depth = max(2, (8<<20)/max(n, 1))
	}
	return &LogReader{SeqReader: objstore.NewSeqReader(ctx, cb, int64(m.chunks.OriginalFileSize), min(depth, objstore.DefaultDepth)), Manifest: m}, nil
}

// aead is the manifest's data key, unwrapped once.
func (r *Remote) aead(m *Manifest) (cipher.AEAD, error) {
	m.keyOnce.Do(func() { m.aead, m.keyErr = r.Keys.dataKey(m.Encryption) })
	return m.aead, m.keyErr
}

func (r *Remote) blockSize() int {
	if r.BlockSize > 0 {
		return r.BlockSize
	}
	return objstore.DefaultBlockSize
}

// chunkBlocks serves an Aiven .log in blocks of whole chunks.
type chunkBlocks struct {
	store      objstore.Store
	key        string
	ci         *ChunkIndex
	aead       cipher.AEAD
	aad        []byte
	compressed bool
	per        int // chunks per block
	scratch    sync.Pool
}

func (r *Remote) chunkBlocks(m *Manifest, key string) (*chunkBlocks, error) {
	cb := &chunkBlocks{store: r.Store, key: key, ci: m.chunks, compressed: m.Compressed}
	if m.Encryption != nil {
		aead, err := r.aead(m)
		if err != nil {
			return nil, err
		}
		cb.aead, cb.aad = aead, m.Encryption.AAD
	}
	cb.per = max(1, r.blockSize()/int(m.chunks.OriginalChunkSize))
	return cb, nil
}

// Len implements objstore.Blocks.
func (cb *chunkBlocks) Len() int { return (cb.ci.Len() + cb.per - 1) / cb.per }

// Range implements objstore.Blocks.
func (cb *chunkBlocks) Range(i int) (int64, int) {
	first := cb.ci.Chunk(i * cb.per)
	last := cb.ci.Chunk(min((i+1)*cb.per, cb.ci.Len()) - 1)
	return first.OriginalPosition, int(last.OriginalPosition + int64(last.OriginalSize) - first.OriginalPosition)
}

var zstdDecoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxChunkBytes), zstd.WithDecoderLowmem(true))
	if err != nil {
		return err
	}
	return d
}}

// Fetch implements objstore.Blocks: one ranged read of the block's
// transformed chunks, then each chunk decrypted and decompressed into its
// place in dst (DefaultChunkManager.getChunk).
func (cb *chunkBlocks) Fetch(ctx context.Context, i int, dst []byte) error {
	firstID := i * cb.per
	lastID := min((i+1)*cb.per, cb.ci.Len()) - 1
	first, last := cb.ci.Chunk(firstID), cb.ci.Chunk(lastID)
	tlen := last.TransformedPosition + int64(last.TransformedSize) - first.TransformedPosition
	var buf []byte
	if p, _ := cb.scratch.Get().(*[]byte); p != nil {
		buf = *p
	}
	if int64(cap(buf)) < tlen {
		buf = make([]byte, tlen)
	}
	buf = buf[:tlen]
	defer cb.scratch.Put(&buf)
	n, err := cb.store.ReadAt(ctx, cb.key, buf, first.TransformedPosition)
	if n < len(buf) {
		if err == nil || err == io.EOF {
			return &ObjectError{Location: cb.store.Location(cb.key), Pos: first.TransformedPosition + int64(n), Chunk: -1, OriginalPos: -1,
				Err: errors.New("the object ends before the chunk index's transformed size " + strconv.FormatInt(cb.ci.TransformedSize(), 10))}
		}
		return err
	}
	return cb.detransformBlock(buf, dst, firstID, lastID)
}

// Stream implements objstore.Streamer: one request from block i's first
// chunk to the end of the object, each block's chunks detransformed as they
// arrive.
func (cb *chunkBlocks) Stream(ctx context.Context, i int) (objstore.BlockStream, error) {
	first := cb.ci.Chunk(i * cb.per)
	rc, err := cb.store.Stream(ctx, cb.key, first.TransformedPosition)
	if err != nil {
		return nil, err
	}
	return &chunkStream{cb: cb, rc: rc, next: i}, nil
}

type chunkStream struct {
	cb   *chunkBlocks
	rc   io.ReadCloser
	next int
	buf  []byte
}

func (s *chunkStream) Next(dst []byte) error {
	cb, i := s.cb, s.next
	s.next++
	firstID := i * cb.per
	lastID := min((i+1)*cb.per, cb.ci.Len()) - 1
	first, last := cb.ci.Chunk(firstID), cb.ci.Chunk(lastID)
	tlen := last.TransformedPosition + int64(last.TransformedSize) - first.TransformedPosition
	if int64(cap(s.buf)) < tlen {
		s.buf = make([]byte, tlen)
	}
	buf := s.buf[:tlen]
	if n, err := io.ReadFull(s.rc, buf); n < len(buf) {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return objectErr(cb.store.Location(cb.key), first.TransformedPosition+int64(n),
				errors.New("the object ends before the chunk index's transformed size "+strconv.FormatInt(cb.ci.TransformedSize(), 10)))
		}
		return err
	}
	return cb.detransformBlock(buf, dst, firstID, lastID)
}

func (s *chunkStream) Close() error { return s.rc.Close() }

// detransformBlock turns the transformed bytes of chunks firstID..lastID
// into dst.
func (cb *chunkBlocks) detransformBlock(buf, dst []byte, firstID, lastID int) error {
	first := cb.ci.Chunk(firstID)
	for id := firstID; id <= lastID; id++ {
		c := cb.ci.Chunk(id)
		raw := buf[c.TransformedPosition-first.TransformedPosition:][:c.TransformedSize]
		out := dst[c.OriginalPosition-first.OriginalPosition:][:c.OriginalSize]
		if err := cb.detransform(raw, out); err != nil {
			return &ObjectError{Location: cb.store.Location(cb.key), Pos: c.TransformedPosition, Chunk: c.ID, OriginalPos: c.OriginalPosition, Err: err}
		}
	}
	return nil
}

// ErrChunk marks a chunk whose bytes do not give its original size back
// (decompression fails or gives another size, a plain chunk of the wrong
// size).
var ErrChunk = errors.New("invalid chunk")

type chunkError struct{ msg string }

func (e *chunkError) Error() string { return e.msg }
func (e *chunkError) Unwrap() error { return ErrChunk }

// detransform turns one transformed chunk into out (of the chunk's
// original size): decrypt, then decompress, as the plugin's
// DetransformChunkEnumeration chain does.
func (cb *chunkBlocks) detransform(raw, out []byte) error {
	if cb.aead != nil {
		p, err := openChunk(cb.aead, cb.aad, raw, raw[ivSize:ivSize])
		if err != nil {
			return err
		}
		raw = p
	}
	if !cb.compressed {
		if len(raw) != len(out) {
			return &chunkError{msg: "the chunk holds " + strconv.Itoa(len(raw)) + " bytes; the chunk index says " + strconv.Itoa(len(out))}
		}
		copy(out, raw)
		return nil
	}
	var hdr zstd.Header
	if err := hdr.Decode(raw); err != nil {
		return &chunkError{msg: "not a zstd frame: " + err.Error()}
	}
	if !hdr.HasFCS || hdr.FrameContentSize != uint64(len(out)) {
		return &chunkError{msg: "the zstd frame does not give the chunk's original size " + strconv.Itoa(len(out)) + " (the plugin writes it in every frame)"}
	}
	d, ok := zstdDecoders.Get().(*zstd.Decoder)
	if !ok {
		return errors.New("zstd decoder unavailable")
	}
	defer zstdDecoders.Put(d)
	got, err := d.DecodeAll(raw, out[:0])
	if err != nil {
		return &chunkError{msg: "zstd: " + err.Error()}
	}
	if len(got) != len(out) {
		return &chunkError{msg: "the chunk decompresses to " + strconv.Itoa(len(got)) + " bytes, not its original " + strconv.Itoa(len(out))}
	}
	if len(got) > 0 && &got[0] != &out[0] {
		copy(out, got)
	}
	return nil
}

// MaxIndexBytes bounds an index klog reads whole (an encrypted index is one
// AES-GCM chunk, which only decrypts whole). Kafka's offset index is at most
// segment.index.bytes (10 MiB by default).
const MaxIndexBytes = 256 << 20

// Index names an index of a segment.
type Index string

// The indexes of a segment (RemoteStorageManager.IndexType).
const (
	IndexOffset      Index = "offset"
	IndexTimestamp   Index = "timestamp"
	IndexProducer    Index = "producerSnapshot"
	IndexLeaderEpoch Index = "leaderEpoch"
	IndexTransaction Index = "transaction"
)

// kafkaIndexSuffix is each index's LayoutKafka object.
var kafkaIndexSuffix = map[Index]string{
	IndexOffset: SuffixIndex, IndexTimestamp: SuffixTimeIndex, IndexProducer: SuffixSnapshot,
	IndexLeaderEpoch: SuffixEpochCheckpoint, IndexTransaction: SuffixTxnIndex,
}

// ReadIndex reads one index of seg whole: its own object (LayoutKafka) or
// its range of the .indexes object, decrypted (LayoutAiven, with the
// manifest). An index the segment does not have is nil with
// objstore.ErrNotExist.
func (r *Remote) ReadIndex(ctx context.Context, seg *Segment, m *Manifest, ix Index) ([]byte, error) {
	if seg.Layout == LayoutKafka {
		key := seg.Key(kafkaIndexSuffix[ix])
		o, err := r.Store.Stat(ctx, key)
		if err != nil {
			return nil, err
		}
		if o.Size > MaxIndexBytes {
			return nil, &ObjectError{Location: r.Store.Location(key), Pos: -1, Chunk: -1, OriginalPos: -1, Err: errors.New(strconv.FormatInt(o.Size, 10) + " bytes, over klog's index limit")}
		}
		return readAll(ctx, r.Store, key, o.Size)
	}
	var rg *IndexRange
	switch ix {
	case IndexOffset:
		rg = m.Indexes.Offset
	case IndexTimestamp:
		rg = m.Indexes.Timestamp
	case IndexProducer:
		rg = m.Indexes.ProducerSnapshot
	case IndexLeaderEpoch:
		rg = m.Indexes.LeaderEpoch
	case IndexTransaction:
		rg = m.Indexes.Transaction
	}
	key := seg.Key(SuffixIndexes)
	if rg == nil {
		return nil, objstore.ErrNotExist
	}
	if rg.Size == 0 {
		return []byte{}, nil
	}
	if int64(rg.Size) > MaxIndexBytes {
		return nil, &ObjectError{Location: r.Store.Location(key), Pos: int64(rg.Position), Chunk: -1, OriginalPos: -1, Err: errors.New("index over klog's index limit")}
	}
	buf := make([]byte, rg.Size)
	n, err := r.Store.ReadAt(ctx, key, buf, int64(rg.Position))
	if n < len(buf) {
		if err == nil || err == io.EOF {
			return nil, &ObjectError{Location: r.Store.Location(key), Pos: int64(rg.Position) + int64(n), Chunk: -1, OriginalPos: -1,
				Err: errors.New("the object ends inside the " + string(ix) + " index (the manifest puts it at " + strconv.Itoa(int(rg.Position)) + ", " + strconv.Itoa(int(rg.Size)) + " bytes)")}
		}
		return nil, err
	}
	if m.Encryption == nil {
		return buf, nil
	}
	aead, err := r.aead(m)
	if err != nil {
		return nil, &ObjectError{Location: r.Store.Location(seg.Key(SuffixManifest)), Pos: -1, Chunk: -1, OriginalPos: -1, Err: err}
	}
	out, err := openChunk(aead, m.Encryption.AAD, buf, buf[ivSize:ivSize])
	if err != nil {
		return nil, &ObjectError{Location: r.Store.Location(key), Pos: int64(rg.Position), Chunk: -1, OriginalPos: -1, Err: fmt.Errorf("the %s index: %w", string(ix), err)}
	}
	return out, nil
}

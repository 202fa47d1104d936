package partition

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"time"
)

// DefaultIndexCacheBytes bounds the process-wide index cache Logs share when
// LogOptions.IndexCache is nil.
const DefaultIndexCacheBytes = 64 << 20

// maxIndexBytes bounds an index file read into memory (Kafka's
// segment.index.bytes defaults to 10 MiB); it stays well inside the 256 MiB
// a reading command may use.
const maxIndexBytes = 64 << 20

var defaultIndexCache = NewIndexCache(DefaultIndexCacheBytes)

// IndexCache keeps the index files lookups have read, least recently used
// first out, within a byte budget; an entry is used only while its file's
// size and modification time are unchanged (the active segment's index
// grows, and Kafka's preallocated one fills without growing). One file
// larger than a quarter of the budget is read each time it is needed. It is
// safe for concurrent use.
type IndexCache struct {
	mu      sync.Mutex
	max     int64
	used    int64
	entries []*cachedIndex // least recently used first
}

type cachedIndex struct {
	path string
	size int64
	mod  time.Time
	data []byte
}

// NewIndexCache returns a cache holding at most maxBytes of index data.
func NewIndexCache(maxBytes int64) *IndexCache { return &IndexCache{max: maxBytes} }

// Bytes is how much index data the cache holds.
func (c *IndexCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

func (c *IndexCache) get(path string, size int64, mod time.Time) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.path != path {
			continue
		}
		if e.size != size || !e.mod.Equal(mod) {
			c.drop(i)
			return nil, false
		}
		copy(c.entries[i:], c.entries[i+1:])
		c.entries[len(c.entries)-1] = e
		return e.data, true
	}
	return nil, false
}

func (c *IndexCache) put(path string, size int64, mod time.Time, data []byte) {
	n := int64(len(data))
	if n > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.path == path {
			c.drop(i)
			break
		}
	}
	for c.used+n > c.max && len(c.entries) > 0 {
		c.drop(0)
	}
	c.entries = append(c.entries, &cachedIndex{path: path, size: size, mod: mod, data: data})
	c.used += n
}

func (c *IndexCache) drop(i int) {
	c.used -= int64(len(c.entries[i].data))
	c.entries = append(c.entries[:i], c.entries[i+1:]...)
}

// indexData is the content of an index file through the cache; a missing
// file reads as empty, as the broker creates it empty.
func (l *Log) indexData(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	var f File
	if !l.osFiles {
		var err error
		if f, err = l.opts.Open(path); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, nil
			}
			return nil, err
		}
		defer f.Close()
	}
	st, err := statFile(path, f)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	if data, ok := l.cache.get(path, st.Size(), st.ModTime()); ok {
		return data, nil
	}
	if st.Size() > maxIndexBytes {
		return nil, &LookupError{Path: path, Pos: -1, Err: errors.New("index file of " + strconv.FormatInt(st.Size(), 10) + " bytes is over the 64 MiB limit")}
	}
	if f == nil {
		if f, err = l.opts.Open(path); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, nil
			}
			return nil, err
		}
		defer f.Close()
	}
	buf := make([]byte, st.Size())
	if n, err := f.ReadAt(buf, 0); int64(n) < st.Size() {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, &LookupError{Path: path, Pos: int64(n), Err: err}
	}
	l.cache.put(path, st.Size(), st.ModTime(), buf)
	return buf, nil
}

// statFile stats an open file, or path when f is nil.
func statFile(path string, f File) (fs.FileInfo, error) {
	if f != nil {
		return f.Stat()
	}
	return os.Stat(path)
}

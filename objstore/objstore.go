// Package objstore reads objects where a remote tier keeps them: a local
// directory (Kafka's LocalTieredStorage, the Aiven plugin's file-system
// backend, a copy of a bucket) or any S3-compatible object store. It only
// reads: there is no call that writes, deletes or changes an object.
//
// A Store lists keys under a prefix (in pages, so memory does not grow with
// the listing) and reads byte ranges of an object (a ranged GET on S3, with
// bounded parallelism and retries with back-off). Readers built on it
// (SeqReader) stream an object in blocks with a bounded read-ahead, so no
// object is ever held whole in memory.
package objstore

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
)

// Object is one listed object.
type Object struct {
	// Key is the object's key: '/'-separated, relative to the store's
	// root (a bucket, or a directory).
	Key  string
	Size int64
}

// Store is where objects are read from. Its two implementations are Dir and
// S3.
type Store interface {
	// List calls fn for every object whose key starts with prefix. Keys
	// of one "directory" (one common prefix ending in '/') come
	// together; S3 lists in key order, Dir in depth-first name order.
	// An error from fn stops the listing and is returned.
	List(ctx context.Context, prefix string, fn func(Object) error) error
	// Stat returns the object's size; an absent object is an error that
	// errors.Is(err, fs.ErrNotExist).
	Stat(ctx context.Context, key string) (Object, error)
	// ReadAt reads len(p) bytes of the object from off. It returns fewer
	// only when the object ends first, with io.EOF (io.ReaderAt's rule).
	ReadAt(ctx context.Context, key string, p []byte, off int64) (int, error)
	// Stream reads the object from off to its end as one request (a
	// ranged GET bytes=off-), for sequential reads; a body that breaks
	// off is resumed where it stopped. Close it.
	Stream(ctx context.Context, key string, off int64) (io.ReadCloser, error)
	// Location names key for messages: a file path, or s3://bucket/key.
	Location(key string) string
}

// ErrNotExist is what reading an absent object returns; it is
// fs.ErrNotExist, so errors.Is works with either.
var ErrNotExist = fs.ErrNotExist

// notExist wraps fs.ErrNotExist with the location that is missing.
type notExist struct{ loc string }

func (e *notExist) Error() string { return e.loc + ": no such object" }
func (e *notExist) Unwrap() error { return fs.ErrNotExist }

// IsNotExist reports whether err says an object is absent.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// Location is a parsed --remote argument: an S3 bucket and key prefix, or a
// local directory.
type Location struct {
	// Bucket is set for s3:// locations.
	Bucket string
	// Prefix is the key prefix inside the bucket ("" or ending in '/').
	Prefix string
	// Dir is the local directory (for a location without a scheme, or
	// file://).
	Dir string
}

// ParseLocation reads "s3://bucket[/prefix]", "file:///dir" or a plain
// directory path.
func ParseLocation(s string) (Location, error) {
	switch {
	case strings.HasPrefix(s, "s3://"):
		rest := strings.TrimPrefix(s, "s3://")
		bucket, prefix, _ := strings.Cut(rest, "/")
		if bucket == "" {
			return Location{}, errors.New("no bucket in " + s + " (s3://BUCKET[/PREFIX])")
		}
		if prefix != "" && !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		return Location{Bucket: bucket, Prefix: prefix}, nil
	case strings.HasPrefix(s, "file://"):
		s = strings.TrimPrefix(s, "file://")
	case strings.Contains(s, "://"):
		return Location{}, errors.New("unknown scheme in " + s + " (s3://BUCKET[/PREFIX] or a directory)")
	}
	if s == "" {
		return Location{}, errors.New("empty location")
	}
	return Location{Dir: s}, nil
}

// String is the location as ParseLocation reads it.
func (l Location) String() string {
	if l.Bucket != "" {
		return "s3://" + l.Bucket + "/" + l.Prefix
	}
	return l.Dir
}

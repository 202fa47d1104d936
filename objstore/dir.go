package objstore

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Dir is a store over a local directory: a key is a path relative to Root,
// with '/' separators. It opens files read-only and never writes.
type Dir struct {
	Root string
}

// NewDir returns the store over root, which must be a directory.
func NewDir(root string) (*Dir, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: root, Err: errors.New("not a directory")}
	}
	return &Dir{Root: root}, nil
}

// path maps a key to its file, refusing keys that would leave Root.
func (d *Dir) path(key string) (string, error) {
	if key == "" || strings.HasPrefix(key, "/") || path.Clean(key) != key || key == ".." || strings.HasPrefix(key, "../") {
		return "", &fs.PathError{Op: "open", Path: key, Err: fs.ErrInvalid}
	}
	return filepath.Join(d.Root, filepath.FromSlash(key)), nil
}

// Location is the file's path.
func (d *Dir) Location(key string) string {
	p, err := d.path(key)
	if err != nil {
		return filepath.Join(d.Root, key)
	}
	return p
}

// List walks the directory under prefix's directory part, depth first in
// name order, and reports the regular files (and links to them) whose key
// starts with prefix. Symlinked directories are not followed.
func (d *Dir) List(ctx context.Context, prefix string, fn func(Object) error) error {
	start := d.Root
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		p, err := d.path(strings.TrimSuffix(prefix[:i+1], "/"))
		if err != nil {
			return err
		}
		start = p
	}
	err := filepath.WalkDir(start, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			if p == start && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll // nothing under that prefix
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, rerr := filepath.Rel(d.Root, p)
		if rerr != nil {
			return rerr
		}
		key := filepath.ToSlash(rel)
		if de.IsDir() {
			// Skip directories that cannot hold a matching key.
			if p != start && !strings.HasPrefix(key+"/", prefix) && !strings.HasPrefix(prefix, key+"/") {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		var size int64
		switch {
		case de.Type().IsRegular():
			info, err := de.Info()
			if err != nil {
				return err
			}
			size = info.Size()
		case de.Type()&fs.ModeSymlink != 0:
			info, err := os.Stat(p)
			if err != nil || !info.Mode().IsRegular() {
				return nil // a dangling link or one to a directory: not an object
			}
			size = info.Size()
		default:
			return nil
		}
		return fn(Object{Key: key, Size: size})
	})
	return err
}

// Stat returns the file's size.
func (d *Dir) Stat(ctx context.Context, key string) (Object, error) {
	p, err := d.path(key)
	if err != nil {
		return Object{}, err
	}
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Object{}, &notExist{loc: p}
		}
		return Object{}, err
	}
	if !st.Mode().IsRegular() {
		return Object{}, &fs.PathError{Op: "stat", Path: p, Err: errors.New("not a regular file")}
	}
	return Object{Key: key, Size: st.Size()}, nil
}

// ReadAt reads from the file at off.
func (d *Dir) ReadAt(ctx context.Context, key string, p []byte, off int64) (int, error) {
	fp, err := d.path(key)
	if err != nil {
		return 0, err
	}
	f, err := os.Open(fp)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, &notExist{loc: fp}
		}
		return 0, err
	}
	defer f.Close()
	n, err := f.ReadAt(p, off)
	if err == io.EOF && n == len(p) {
		err = nil
	}
	return n, err
}

// Stream reads the file from off.
func (d *Dir) Stream(ctx context.Context, key string, off int64) (io.ReadCloser, error) {
	fp, err := d.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(fp)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &notExist{loc: fp}
		}
		return nil, err
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

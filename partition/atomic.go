package partition

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/klog-dev/klog/internal/safeio"
)

// WriteOptions configures WriteFileAtomic. The zero value is the durable
// default.
type WriteOptions struct {
	// NoSync skips the file and directory fsyncs (produce's SyncNever):
	// the rename is still atomic for readers, but a crash may lose it.
	NoSync bool
	// Perm is the new file's permission bits (0: 0o644).
	Perm fs.FileMode
}

// WriteFileAtomic replaces path with data the way Kafka writes its
// checkpoint files (CheckpointFile / Utils.atomicMoveWithFallback): into a
// temporary file beside it, fsync, close, rename over path, fsync the
// directory. A reader, or the broker after a crash, sees the old file or
// the new one, never a part.
//
// It only ever replaces a regular file: a path that exists and is anything
// else (a character device, a FIFO, a directory, a symlink) is refused
// before anything is written (safeio.CheckReplaceable). The temporary file
// has a name of its own (path+".klog-<random>.tmp", never a name a user or
// Kafka uses, such as path+".tmp", and never ending in .prom) and is
// created exclusively without following a symlink; nothing but that file
// is ever removed. It is the one checkpoint writer: leader-epoch-checkpoint,
// producer snapshots, replication-offset-checkpoint, partition.metadata,
// consumer offsets and verify's state and metrics go through it.
func WriteFileAtomic(path string, data []byte, opts WriteOptions) error {
	return writeAtomic(path, opts, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// WriteAtomic is WriteFileAtomic for content too large to build in memory
// first (verify's --state file, its metrics): write streams it through a
// buffer into the temporary file.
func WriteAtomic(path string, opts WriteOptions, write func(io.Writer) error) error {
	return writeAtomic(path, opts, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 64<<10)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}

func writeAtomic(path string, opts WriteOptions, write func(*os.File) error) (err error) {
	perm := opts.Perm
	if perm == 0 {
		perm = 0o644
	}
	if err := safeio.CheckReplaceable(path); err != nil {
		return err
	}
	f, tmp, err := createTemp(path, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	err = write(f)
	if err == nil && !opts.NoSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if opts.NoSync {
		return nil
	}
	return SyncDir(filepath.Dir(path))
}

// createTemp creates path+".klog-<random>.tmp" exclusively (O_EXCL, no
// symlink followed) with perm, trying other names while one exists.
func createTemp(path string, perm fs.FileMode) (*os.File, string, error) {
	var rnd [8]byte
	for range 100 {
		if _, err := rand.Read(rnd[:]); err != nil {
			return nil, "", err
		}
		tmp := path + ".klog-" + hex.EncodeToString(rnd[:]) + ".tmp"
		f, err := safeio.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, tmp, err
	}
	return nil, "", &fs.PathError{Op: "create", Path: path + ".klog-*.tmp", Err: fs.ErrExist}
}

// SyncDir fsyncs a directory, making the creation, removal or rename of an
// entry in it durable (where the platform can: see syncDir).
func SyncDir(dir string) error { return syncDir(dir) }

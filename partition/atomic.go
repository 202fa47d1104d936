package partition

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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
// checkpoint files (CheckpointFile / Utils.atomicMoveWithFallback): into
// path+".tmp", fsync, close, rename over path, fsync the directory. A
// reader, or the broker after a crash, sees the old file or the new one,
// never a part. A stale .tmp from an earlier crash is removed first and the
// new one created exclusively, so a symlink planted there is not followed.
// It is the one checkpoint writer: leader-epoch-checkpoint, producer
// snapshots, replication-offset-checkpoint and consumer offsets go through
// it.
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
	tmp := path + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
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

// SyncDir fsyncs a directory, making the creation, removal or rename of an
// entry in it durable (where the platform can: see syncDir).
func SyncDir(dir string) error { return syncDir(dir) }

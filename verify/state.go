package verify

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// State is what earlier runs found clean, file by file: the --state file
// that makes a scheduled verify incremental. A file whose identity (device,
// inode, size, modification time) is unchanged since a run found it clean
// is not read again; a log that only grew is checked from where that run
// stopped, after re-reading the last batch it saw there (same position,
// same stored CRC, still valid) to prove the bytes before are the ones it
// checked; anything else, a new inode, a file that shrank or changed
// without growing, a last batch that differs, is checked in full. Bytes
// that rot in place change neither size nor mtime: a periodic Full run is
// what finds them. Files with findings are never recorded,
// so every run reports them again.
//
// The file is NDJSON: a header line {"type":"klog-verify-state",
// "version":1} and one {"type":"file",...} line per file (fileState). A
// State is read by Run's jobs concurrently and changed only by Update.
type State struct {
	// dirs holds the entries by directory, then by file name, so that a
	// piece of a run forgets its partitions' entries without a scan of
	// every entry (a log dir holds hundreds of thousands).
	dirs map[string]map[string]*fileState
	cwd  string
}

// split is filepath.Dir and Base of an absolute, clean path, without
// allocating.
func split(p string) (dir, name string) {
	i := strings.LastIndexByte(p, filepath.Separator)
	if i <= 0 {
		return p[:i+1], p[i+1:]
	}
	return p[:i], p[i+1:]
}

func (s *State) get(p string) (*fileState, bool) {
	d, n := split(p)
	e, ok := s.dirs[d][n]
	return e, ok
}

// put records e for path p. Keys are copies, so that an entry does not
// keep a whole path string (a report's, or a line of the state file) alive.
func (s *State) put(p string, e fileState) {
	d, n := split(p)
	m := s.dirs[d]
	if old := m[n]; old != nil {
		*old = e
		return
	}
	if m == nil {
		m = map[string]*fileState{}
		s.dirs[strings.Clone(d)] = m
	}
	m[strings.Clone(n)] = &e
}

// kindCode is a file kind in a state entry: a byte in memory (an entry
// holds no pointer, so the garbage collector never scans the hundreds of
// thousands of them), the kind's name in the file.
type kindCode uint8

var kindNames = [...]string{"log", "checkpoint", "index", "timeindex", "txnindex", "snapshot",
	"leader-epoch-checkpoint", "offset-checkpoint", "partition-metadata"}

func codeOf(kind string) (kindCode, bool) {
	for i, k := range kindNames {
		if k == kind {
			return kindCode(i), true
		}
	}
	return 0, false
}

func (k kindCode) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// MarshalText writes the kind's name.
func (k kindCode) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name.
func (k *kindCode) UnmarshalText(b []byte) error {
	c, ok := codeOf(string(b))
	if !ok {
		return errors.New("unknown kind " + strconv.Quote(string(b)))
	}
	*k = c
	return nil
}

// stateVersion is the version of the state file's format.
const stateVersion = 1

type stateHeader struct {
	Type    string `json:"type"`
	Version int    `json:"version"`
}

// fileID identifies a file's content for incremental runs.
type fileID struct {
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"inode"`
	Size    int64  `json:"size"`
	MtimeNs int64  `json:"mtimeNs"`
}

func idOf(st os.FileInfo) fileID {
	dev, ino := inode(st)
	return fileID{Dev: dev, Ino: ino, Size: st.Size(), MtimeNs: st.ModTime().UnixNano()}
}

// stateLine is one file's line in the state file.
type stateLine struct {
	Type string `json:"type"` // "file"
	Path string `json:"path"` // absolute
	fileState
}

// fileState is what the state knows of one file.
type fileState struct {
	Kind kindCode `json:"kind"`
	fileID
	// The report's counts for the file when it was found clean.
	Batches     int64 `json:"batches"`
	Records     int64 `json:"records"`
	FirstOffset int64 `json:"firstOffset"`
	LastOffset  int64 `json:"lastOffset"`
	ValidBytes  int64 `json:"validBytes"`
	// Logs: the position and stored CRC of the last batch (-1 without one).
	LastBatchPos int64 `json:"lastBatchPosition"`
	LastBatchCRC int64 `json:"lastBatchCrc"`
}

// NewState returns an empty state (every file is checked in full).
func NewState() *State {
	cwd, _ := os.Getwd()
	return &State{dirs: map[string]map[string]*fileState{}, cwd: cwd}
}

// LoadState reads a state file; a file that does not exist yet is an empty
// state (the first run).
func LoadState(path string) (*State, error) {
	s := NewState()
	// Never through a symlink, never a FIFO (whose open would wait): the
	// state file is a regular file klog wrote.
	f, _, err := safeio.OpenSource(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	bad := func(msg string) error {
		return errors.New(path + ": line " + strconv.Itoa(line) + ": " + msg + " (not a klog verify state file? remove it to start over)")
	}
	for sc.Scan() {
		line++
		if line == 1 {
			var h stateHeader
			if json.Unmarshal(sc.Bytes(), &h) != nil || h.Type != "klog-verify-state" {
				return nil, bad("no klog-verify-state header")
			}
			if h.Version != stateVersion {
				return nil, bad("version " + strconv.Itoa(h.Version) + ", this klog reads version " + strconv.Itoa(stateVersion))
			}
			continue
		}
		var l stateLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, bad(err.Error())
		}
		if l.Type != "file" || !filepath.IsAbs(l.Path) || filepath.Clean(l.Path) != l.Path {
			return nil, bad("not a file entry with an absolute path")
		}
		s.put(l.Path, l.fileState)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Len is the number of files the state records.
func (s *State) Len() int {
	n := 0
	for _, m := range s.dirs {
		n += len(m)
	}
	return n
}

func (s *State) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(s.cwd, p)
}

// incremental decides, before a file is read, whether the state lets this
// run skip it (true: f is filled from the state) or check only a log's
// appended bytes (v.resume is set).
func (v *verifier) incremental(f *FileReport, t task, st os.FileInfo) bool {
	s := v.opts.State
	if s == nil {
		return false
	}
	id := idOf(st)
	f.id = &id
	if v.opts.Full {
		return false
	}
	e, ok := s.get(s.abs(t.path))
	if !ok || e.Kind.String() != t.kind || e.Dev != id.Dev || e.Ino != id.Ino {
		return false
	}
	switch t.kind {
	case "log", "checkpoint":
	case "index", "timeindex":
		// An index is checked against its log: skip it only when both
		// are as they were.
		if e.fileID != id || !s.unchanged(t.log) {
			return false
		}
	case "txnindex", "snapshot", "leader-epoch-checkpoint", "offset-checkpoint", "partition-metadata":
		if e.fileID != id {
			return false
		}
	default:
		return false
	}
	if e.fileID == id {
		f.Skipped = true
		f.Batches, f.Records = e.Batches, e.Records
		f.FirstOffset, f.LastOffset, f.ValidBytes = e.FirstOffset, e.LastOffset, e.ValidBytes
		f.lastPos, f.lastCRC = e.LastBatchPos, e.LastBatchCRC
		return true
	}
	// A log that grew was appended to (Kafka never rewrites a segment in
	// place; a recovery that truncates and appends again shows as a last
	// batch that differs). Same size with another mtime: checked in full.
	if (t.kind == "log" || t.kind == "checkpoint") && id.Size > e.Size && id.Size >= e.ValidBytes && e.ValidBytes > 0 {
		v.resume = e
	}
	return false
}

// unchanged reports whether path is as the state recorded it.
func (s *State) unchanged(path string) bool {
	e, ok := s.get(s.abs(path))
	if !ok {
		return false
	}
	st, err := os.Stat(path)
	return err == nil && idOf(st) == e.fileID
}

// resumeScan moves sc to the end of what the state recorded as clean,
// after re-checking the last batch there; it returns the scan's previous
// last offset and whether no batch came before. When the batch is not the
// recorded one, sc is reset and the log is checked from the start.
func (v *verifier) resumeScan(f *FileReport, sc *format.Scanner, file io.ReaderAt, size int64) (int64, bool) {
	e := v.resume
	if e.LastBatchPos < 0 {
		v.resume = nil
		return -1, true
	}
	sc.SetPos(e.LastBatchPos)
	b, err := sc.Next()
	if err != nil || b.Pos != e.LastBatchPos || int64(b.CRC) != e.LastBatchCRC ||
		b.Pos+b.Size() != e.ValidBytes || b.LastOffset() != e.LastOffset || !b.Valid() {
		v.resume = nil
		sc.Reset(file, size)
		return -1, true
	}
	f.Batches, f.Records = e.Batches, e.Records
	f.FirstOffset, f.LastOffset = e.FirstOffset, e.LastOffset
	f.lastPos, f.lastCRC = b.Pos, int64(b.CRC)
	f.VerifiedFrom = e.ValidBytes
	return e.LastOffset, false
}

// doneIncremental records what this run itself checked of a log.
func (v *verifier) doneIncremental(f *FileReport) {
	f.scanned = f.Batches
	if v.resume != nil && f.VerifiedFrom > 0 {
		f.scanned = f.Batches - v.resume.Batches
	}
	v.resume = nil
}

// update records the clean files of a piece (checked or skipped by it) and
// forgets the files under the piece's paths that it did not find clean or
// did not find at all; files outside them keep their entries.
func (s *State) update(rep *piece) {
	files := map[string]bool{}
	for i := range rep.files {
		files[rep.files[i].Path] = true
	}
	for _, r := range rep.roots {
		a := s.abs(r)
		if files[r] {
			d, n := split(a)
			delete(s.dirs[d], n)
			continue
		}
		// A directory: a partition's entries are all in it; a log dir's
		// are in directories below it.
		delete(s.dirs, a)
		if _, _, ok := partition.ParseDirName(filepath.Base(a)); ok {
			continue
		}
		for d := range s.dirs {
			if under(d, []string{a}) {
				delete(s.dirs, d)
			}
		}
	}
	for i := range rep.files {
		f := &rep.files[i]
		if !f.OK || f.id == nil {
			continue
		}
		p := s.abs(f.Path)
		k, ok := codeOf(f.Kind)
		if !ok {
			continue
		}
		s.put(p, fileState{Kind: k, fileID: *f.id,
			Batches: f.Batches, Records: f.Records, FirstOffset: f.FirstOffset, LastOffset: f.LastOffset,
			ValidBytes: f.ValidBytes, LastBatchPos: f.lastPos, LastBatchCRC: f.lastCRC})
	}
}

// Save writes the state to path atomically: a temporary file in the same
// directory, synced, renamed over path, and the directory synced, so a
// crash leaves the old state or the new one, never a mix.
func (s *State) Save(path string) error {
	dirs := make([]string, 0, len(s.dirs))
	for d := range s.dirs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return writeAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		if err := enc.Encode(stateHeader{Type: "klog-verify-state", Version: stateVersion}); err != nil {
			return err
		}
		var names []string
		for _, d := range dirs {
			names = names[:0]
			for n := range s.dirs[d] {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				if err := enc.Encode(stateLine{Type: "file", Path: filepath.Join(d, n), fileState: *s.dirs[d][n]}); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// writeAtomic writes path through partition's atomic writer: a temporary
// file beside it (path+".klog-<random>.tmp", which node_exporter's textfile
// collector, reading only *.prom, never picks up half-written), fsync,
// rename and an fsync of the directory; a path that is not a regular file
// is refused.
func writeAtomic(path string, write func(io.Writer) error) error {
	return partition.WriteAtomic(path, partition.WriteOptions{}, write)
}

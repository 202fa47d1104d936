// Package archtest checks the shape of the module: imports point down the
// layers (format at the bottom, commands at the top), and commands stay
// thin. It has only tests.
package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/klog-dev/klog/"

// rank is each package's layer: a package may import only packages of a
// lower rank. Every package outside internal/ is listed
// (TestEveryPackageIsRanked): a new one gets its rank where it is added.
var rank = map[string]int{
	// internal/safeio (bounded reads, no-follow opens, the broker lock)
	// imports no klog package: every layer above format may use it.
	"internal/safeio": -1,
	// objstore (a read-only directory or S3 bucket) imports no klog
	// package either.
	"objstore": -1,
	// extdecode (an external decoder process) imports none either.
	"extdecode":     -1,
	"format":        0,
	"recordfmt":     0,
	"filter":        0,
	"partition":     1,
	"verify":        2,
	"redact":        2, // a copy safe to share: format, partition and safeio only
	"schema":        2,
	"recovery":      3,
	"ndjson":        3,
	"internaltopic": 3,
	"produce":       3,
	"fetch":         4, // its renderers write ndjson's records
	"kraft":         4,
	"search":        4,
	"payload":       3,
	"tiered":        4,
	"offsetstore":   4,
	"tail":          6, // its renderers write dump's batch lines and tables
	"replicate":     5,
	"inspect":       6,
	"cluster":       7,
	"report":        8, // gathers the other packages' answers into one page
	"dump":          5,
	"serve":         5,
	"cmd/klog":      9,
}

// imports lists the klog packages each non-test Go file of the module
// imports, by package directory.
func imports(t *testing.T) map[string]map[string]bool {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if out[pkg] == nil {
			out[pkg] = map[string]bool{}
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if strings.HasPrefix(p, module) {
				out[pkg][strings.TrimPrefix(p, module)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImportDirection: every import points to a lower layer.
func TestImportDirection(t *testing.T) {
	all := imports(t)
	var pkgs []string
	for p := range all {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		rp, known := rank[p]
		for dep := range all[p] {
			rd, depKnown := rank[dep]
			switch {
			case dep == "cmd/klog" || strings.HasPrefix(dep, "internal/") && dep != "internal/safeio" && !strings.HasPrefix(p, "internal/") && p != "cmd/klog":
				t.Errorf("%s imports %s", p, dep)
			case known && depKnown && rd >= rp:
				t.Errorf("%s (layer %d) imports %s (layer %d): imports must point down", p, rp, dep, rd)
			case known && !depKnown && rp < 3:
				t.Errorf("%s (layer %d) imports the unlisted package %s", p, rp, dep)
			}
		}
	}
	if len(all["format"]) != 0 {
		t.Errorf("format imports %v; it is the bottom layer", all["format"])
	}
}

// TestEveryPackageIsRanked: a package without a rank escapes
// TestImportDirection (it may import anything, and anything may import
// it), so each package outside internal/ has one.
func TestEveryPackageIsRanked(t *testing.T) {
	var pkgs []string
	for p := range imports(t) {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		if _, ok := rank[p]; !ok && !strings.HasPrefix(p, "internal/") && p != "." {
			t.Errorf("%s has no rank: add it to rank, above every package it imports", p)
		}
	}
}

// TestCommandsAreThin: no function in cmd/klog is longer than 80 lines;
// decoding, batching and scenarios belong in the packages.
func TestCommandsAreThin(t *testing.T) {
	fset := token.NewFileSet()
	dir := "../../cmd/klog"
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		name := de.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > 80 {
				t.Errorf("%s: %s is %d lines (at most 80)", name, fd.Name.Name, n)
			}
		}
	}
}

// TestOnlySafeioTakesTheBrokerLock: the broker's .lock has one home,
// internal/safeio (LockBroker, HoldBroker): POSIX record locks belong to the
// process and any close of the file drops them, so a second place that
// opened .lock or took a record lock could release the lock the process
// holds. Outside safeio no non-test file names ".lock" or calls the record
// lock system calls; produce's Windows writer lock is the one exception: it
// locks a file of its own (LockFileEx on .klog-<partition>.lock).
func TestOnlySafeioTakesTheBrokerLock(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := map[string]bool{"FcntlFlock": true, "F_SETLK": true, "F_SETLKW": true, "F_GETLK": true,
		"F_OFD_SETLK": true, "F_OFD_SETLKW": true, "F_OFD_GETLK": true, "LockFileEx": true}
	exempt := map[string]map[string]bool{"produce/lock_windows.go": {"LockFileEx": true, `".lock"`: true}}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "internal/safeio/") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if forbidden[n.Sel.Name] && !exempt[rel][n.Sel.Name] {
					t.Errorf("%s: %s: the broker's lock and record locks are taken in internal/safeio only", fset.Position(n.Pos()), n.Sel.Name)
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING && n.Value == `".lock"` && !exempt[rel][n.Value] {
					t.Errorf(`%s: ".lock": name the broker's lock file safeio.BrokerLockFile, and lock it through safeio`, fset.Position(n.Pos()))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestExitCodesHaveOneHome: cmd/klog builds an exitError only in exit.go,
// through the constructors that say what happened (usageError,
// troubleError, findingsError, fail); exitCode is the one mapping from an
// error to an exit code.
func TestExitCodesHaveOneHome(t *testing.T) {
	fset := token.NewFileSet()
	dir := "../../cmd/klog"
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		name := de.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || name == "exit.go" {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if cl, ok := n.(*ast.CompositeLit); ok {
				if id, ok := cl.Type.(*ast.Ident); ok && id.Name == "exitError" {
					t.Errorf("%s: an exitError literal outside exit.go (use usageError, troubleError, findingsError or fail)", fset.Position(cl.Pos()))
				}
			}
			return true
		})
	}
}

// TestOneCRCHome: only format/crc.go imports a CRC implementation; every
// other package (the recovery planner's streamed CRC included) checks
// checksums through format.
func TestOneCRCHome(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if (p == "hash/crc32" || p == "github.com/klauspost/crc32") && filepath.ToSlash(rel) != "format/crc.go" {
				t.Errorf("%s imports %s: checksums are computed in format/crc.go", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// goFiles calls fn with every non-test Go file of the module (its path
// relative to the module root, with slashes) parsed whole.
func goFiles(t *testing.T, fn func(rel string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fn(filepath.ToSlash(rel), fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// importName is the name file f uses for the package at path ("" when it
// does not import it).
func importName(f *ast.File, path string) string {
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == path {
			if im.Name != nil {
				return im.Name.Name
			}
			return filepath.Base(path)
		}
	}
	return ""
}

// TestOneWatcher: partition.Watcher is klog's one file system watcher (it
// reports a full inotify table as the limit to raise, and the Follower built
// on it keeps partition models current); no package outside partition
// starts an fsnotify watcher of its own.
func TestOneWatcher(t *testing.T) {
	goFiles(t, func(rel string, fset *token.FileSet, f *ast.File) {
		if strings.HasPrefix(rel, "partition/") {
			return
		}
		name := importName(f, "github.com/fsnotify/fsnotify")
		if name == "" {
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && (sel.Sel.Name == "NewWatcher" || sel.Sel.Name == "NewBufferedWatcher") {
					t.Errorf("%s: fsnotify.%s: watch through partition.Watcher (or a partition.Follower)", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	})
}

// segmentListingExempt are the files whose job is every file of a
// directory, not a partition's segments: the broker's recovery walk (swap,
// cleaned and deleted files included), kafka-dump-log's dump of a
// directory's files, the redacted copy of every file, and verify's check of
// every file, strays included.
var segmentListingExempt = map[string]string{
	"recovery/plan.go":   "LogLoader's walk of every file (swap, cleaned, deleted)",
	"dump/dir.go":        "kafka-dump-log's files of a directory argument, each dumped",
	"redact/redact.go":   "the copy of every file of a partition",
	"verify/classify.go": "verify checks every file, strays included",
}

// TestOnlyPartitionListsSegments: a partition's segments are listed in
// package partition only (partition.Open's Dir, partition.Log's segments):
// no function outside it both lists a directory (os.ReadDir, fs.ReadDir, a
// File's ReadDir, Readdir or Readdirnames, filepath.Glob) and picks
// segment files out of the listing (partition.ParseFileName,
// partition.LogSuffix, a ".log" literal), except in the files whose job is
// every file (segmentListingExempt).
func TestOnlyPartitionListsSegments(t *testing.T) {
	goFiles(t, func(rel string, fset *token.FileSet, f *ast.File) {
		if strings.HasPrefix(rel, "partition/") || segmentListingExempt[rel] != "" {
			return
		}
		fpName, partName := importName(f, "path/filepath"), importName(f, module+"partition")
		check := func(body *ast.BlockStmt) {
			var lists, picks token.Pos
			ast.Inspect(body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncLit:
					return false // checked on its own
				case *ast.SelectorExpr:
					x, _ := n.X.(*ast.Ident)
					switch {
					case n.Sel.Name == "ReadDir" || n.Sel.Name == "Readdir" || n.Sel.Name == "Readdirnames",
						x != nil && x.Name == fpName && n.Sel.Name == "Glob":
						lists = n.Pos()
					case x != nil && partName != "" && x.Name == partName && (n.Sel.Name == "ParseFileName" || n.Sel.Name == "LogSuffix"):
						picks = n.Pos()
					}
				case *ast.BasicLit:
					if n.Kind == token.STRING && n.Value == `".log"` {
						picks = n.Pos()
					}
				}
				return true
			})
			if lists.IsValid() && picks.IsValid() {
				t.Errorf("%s lists a directory and %s picks segment files from it: list a partition's segments through package partition (partition.Open, partition.Log)",
					fset.Position(lists), fset.Position(picks))
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Body != nil {
					check(n.Body)
				}
			case *ast.FuncLit:
				check(n.Body)
			}
			return true
		})
	})
}

// TestTailReadsThroughTheModel: klog tail reads partitions through
// partition.Log (kept current by a partition.Follower, waited on through a
// partition.Waiter) and its batches through partition.BatchReader; it has
// no segment reader of its own: no format.Scanner, no listing of a
// partition directory (partition.Open), no file opened through safeio.
func TestTailReadsThroughTheModel(t *testing.T) {
	forbidden := map[string]map[string]bool{
		module + "format":          {"NewScanner": true, "Scanner": true, "ScanOptions": true},
		module + "partition":       {"Open": true},
		module + "internal/safeio": {"Open": true, "OpenSized": true, "ReadFile": true, "Source": true},
	}
	goFiles(t, func(rel string, fset *token.FileSet, f *ast.File) {
		if !strings.HasPrefix(rel, "tail/") {
			return
		}
		names := map[string]map[string]bool{}
		for path, sels := range forbidden {
			if name := importName(f, path); name != "" {
				names[name] = sels
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && names[x.Name][sel.Sel.Name] {
				t.Errorf("%s: %s.%s: tail reads segments through partition.Log and partition.BatchReader only", fset.Position(sel.Pos()), x.Name, sel.Sel.Name)
			}
			return true
		})
	})
}

// TestNoTypeAliases: a type has one name. An alias (type A = B) shows one
// type under two names, so a reader of one file cannot tell it is the
// type another file names; issue 22 removed the last eight.
func TestNoTypeAliases(t *testing.T) {
	goFiles(t, func(rel string, fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok && ts.Assign.IsValid() {
				t.Errorf("%s: type %s is an alias: name the type itself", fset.Position(ts.Pos()), ts.Name.Name)
			}
			return true
		})
	})
}

package tiered

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/internal/s3test"
	"github.com/klog-dev/klog/objstore"
)

// fakeBucket serves the files under root as the objects of bucket
// "tiered" under prefix, from an in-process S3 (gofakes3).
func fakeBucket(t *testing.T, root, prefix string) *objstore.S3 {
	t.Helper()
	endpoint := s3test.FakeS3(t, root, "tiered", prefix)
	st, err := objstore.NewS3(context.Background(), "tiered", objstore.S3Options{Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// runStore checks a fixture's broker dir against the remote tier in st.
func runStore(t *testing.T, root string, st objstore.Store, prefix string) ([]*PartitionReport, *Summary) {
	t.Helper()
	md, err := MetadataDirs([]string{root + "/broker-logdir"})
	if err != nil {
		t.Fatal(err)
	}
	var reps []*PartitionReport
	sum, err := Run(context.Background(), Options{Remote: &Remote{Store: st, Keys: fixtureKeys(t), BlockSize: 256}, Prefix: prefix, Metadata: md,
		LogDirs: []string{root + "/broker-logdir"}, Checker: Checker{Read: true}}, func(p *PartitionReport) error {
		reps = append(reps, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return reps, sum
}

// TestS3Fixtures: the fixtures give the same findings read from an S3
// bucket (an in-process one) as from their directories.
func TestS3Fixtures(t *testing.T) {
	for _, fx := range []string{"local-tiered", "variants/crc-flip", "variants/missing-remote-files", "aiven/zstd-encrypted"} {
		t.Run(fx, func(t *testing.T) {
			root := fixtures + "/" + fx
			store := root + "/remote"
			if _, err := os.Stat(store); err != nil {
				store = root + "/storage"
			}
			st := fakeBucket(t, store, "cluster-a/")
			dreps, dsum := runFixture(t, root, true)
			sreps, ssum := runStore(t, root, st, "cluster-a/")
			if d, s := strings.Join(kinds(dreps, dsum), "\n"), strings.Join(kinds(sreps, ssum), "\n"); d != s {
				t.Errorf("from S3:\n%s\nfrom the directory:\n%s", s, d)
			}
			if len(sreps) != 1 || len(sreps[0].Segments) != len(dreps[0].Segments) || ssum.Objects != dsum.Objects {
				t.Errorf("S3 saw %d segments, %d objects; the directory %d, %d", len(sreps[0].Segments), ssum.Objects, len(dreps[0].Segments), dsum.Objects)
			}
		})
	}
}

// versityGW starts the S3 server that enforces request signing
// (versity/versitygw, built from its Go module by .ci/run) over a posix
// root whose directory "tiered" is the bucket, and returns its endpoint.
// It skips when the binary is absent, except under CI=true.
func versityGW(t testing.TB, root, access, secret string) string {
	t.Helper()
	ep, _ := versityGWProcess(t, root, access, secret)
	return ep
}

// versityGWProcess is versityGW that also returns the server's process.
func versityGWProcess(t testing.TB, root, access, secret string) (string, *os.Process) {
	t.Helper()
	bin := os.Getenv("KLOG_VERSITYGW")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("versitygw"); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("versitygw is required under CI (.ci/run builds it): %v", err)
			}
			t.Skipf("versitygw not available (.ci/run builds it; or set KLOG_VERSITYGW): %v", err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--access", access, "--secret", secret, "--port", addr, "posix", "--nometa", "--default-etag", "0", root)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	// The banner names the address once the server listens.
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		said := false
		for sc.Scan() {
			if !said && strings.Contains(sc.Text(), "http://"+addr) {
				said = true
				ready <- true
			}
		}
		if !said {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("versitygw exited before it listened")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("versitygw did not start within 30 s")
	}
	return "http://" + addr, cmd.Process
}

// bucketDir is a versitygw posix root holding the files under src as the
// bucket "tiered" under prefix.
func bucketDir(t testing.TB, src, prefix string) string {
	t.Helper()
	root := t.TempDir()
	dst := filepath.Join(root, "tiered", filepath.FromSlash(prefix))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(copyTree(t, src), dst); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestVersityGW: the fixtures read through a real S3 server process that
// checks every request's signature give the findings the directories
// give; a wrong secret is refused.
func TestVersityGW(t *testing.T) {
	for _, fx := range []string{"variants/crc-flip", "aiven/zstd-encrypted"} {
		t.Run(fx, func(t *testing.T) {
			root := fixtures + "/" + fx
			store := root + "/remote"
			if _, err := os.Stat(store); err != nil {
				store = root + "/storage"
			}
			ep := versityGW(t, bucketDir(t, store, "prod"), "klogtest", "klog-secret")
			s3test.S3Env(t, "klogtest", "klog-secret")
			st, err := objstore.NewS3(context.Background(), "tiered", objstore.S3Options{Endpoint: ep, MaxAttempts: 2})
			if err != nil {
				t.Fatal(err)
			}
			dreps, dsum := runFixture(t, root, true)
			sreps, ssum := runStore(t, root, st, "prod/")
			if d, s := strings.Join(kinds(dreps, dsum), "\n"), strings.Join(kinds(sreps, ssum), "\n"); d != s || ssum.Objects != dsum.Objects {
				t.Errorf("through versitygw (%d objects):\n%s\nfrom the directory (%d):\n%s", ssum.Objects, s, dsum.Objects, d)
			}
			s3test.S3Env(t, "klogtest", "not-the-secret")
			bad, err := objstore.NewS3(context.Background(), "tiered", objstore.S3Options{Endpoint: ep, MaxAttempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := bad.List(context.Background(), "prod/", func(objstore.Object) error { return nil }); err == nil {
				t.Error("a request signed with the wrong secret was answered")
			}
			_, err = bad.ReadAt(context.Background(), "prod/x", make([]byte, 1), 0)
			if err == nil || err == io.EOF {
				t.Errorf("a GET signed with the wrong secret: %v", err)
			}
		})
	}
}

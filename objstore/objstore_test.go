package objstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// objects is the tree every store test lists and reads.
var objects = map[string][]byte{
	"tiered/orders-abc/0/00000000000000000008-x.log":       bytes.Repeat([]byte("0123456789"), 1000),
	"tiered/orders-abc/0/00000000000000000008-x.indexes":   []byte("idx"),
	"tiered/orders-abc/10/00000000000000000000-y.log":      []byte("ten"),
	"tiered/orders-abd/0/00000000000000000000-z.log":       []byte("other"),
	"kafka-tiered-storage/orders-0-abc/00000000000000.log": []byte("lts"),
}

func TestParseLocation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want Location
		bad  bool
	}{
		{in: "s3://bucket", want: Location{Bucket: "bucket"}},
		{in: "s3://bucket/", want: Location{Bucket: "bucket"}},
		{in: "s3://bucket/tiered", want: Location{Bucket: "bucket", Prefix: "tiered/"}},
		{in: "s3://bucket/a/b/", want: Location{Bucket: "bucket", Prefix: "a/b/"}},
		{in: "/var/tiered", want: Location{Dir: "/var/tiered"}},
		{in: "file:///var/tiered", want: Location{Dir: "/var/tiered"}},
		{in: "rel/dir", want: Location{Dir: "rel/dir"}},
		{in: "s3:///x", bad: true},
		{in: "gs://bucket", bad: true},
		{in: "", bad: true},
	} {
		got, err := ParseLocation(c.in)
		if c.bad != (err != nil) || got != c.want {
			t.Errorf("ParseLocation(%q) = %+v, %v; want %+v (error %v)", c.in, got, err, c.want, c.bad)
		}
	}
}

func writeTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for k, v := range objects {
		p := filepath.Join(root, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, v, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// fakeS3 serves objects from an in-process S3 (gofakes3); hostBucket
// routes virtual-hosted requests.
func fakeS3(t *testing.T, hostBucket bool) *httptest.Server {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket("bucket"); err != nil {
		t.Fatal(err)
	}
	for k, v := range objects {
		if _, err := be.PutObject("bucket", k, map[string]string{}, bytes.NewReader(v), int64(len(v)), nil); err != nil {
			t.Fatal(err)
		}
	}
	opts := []gofakes3.Option{}
	if hostBucket {
		opts = append(opts, gofakes3.WithHostBucket(true))
	}
	srv := httptest.NewServer(gofakes3.New(be, opts...).Server())
	t.Cleanup(srv.Close)
	return srv
}

// testS3Options are static credentials, so that no test reads the
// machine's AWS configuration.
func testS3Options(t *testing.T, endpoint string) S3Options {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return S3Options{Endpoint: endpoint, Region: "us-east-1"}
}

func stores(t *testing.T) map[string]Store {
	ctx := context.Background()
	d, err := NewDir(writeTree(t))
	if err != nil {
		t.Fatal(err)
	}
	path := fakeS3(t, false)
	ps, err := NewS3(ctx, "bucket", testS3Options(t, path.URL))
	if err != nil {
		t.Fatal(err)
	}
	// Virtual-hosted: bucket.s3.test resolves, through the dialer, to
	// the loopback server.
	vh := fakeS3(t, true)
	addr := strings.TrimPrefix(vh.URL, "http://")
	var hosts atomic.Value
	o := testS3Options(t, "http://s3.test:80")
	o.Addressing = AddressingVirtual
	o.Transport = func(tr *http.Transport) {
		tr.DialContext = func(ctx context.Context, network, a string) (net.Conn, error) {
			hosts.Store(a)
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}
	}
	vs, err := NewS3(ctx, "bucket", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if h, _ := hosts.Load().(string); h != "" && h != "bucket.s3.test:80" {
			t.Errorf("virtual-hosted requests went to %s, not bucket.s3.test:80", h)
		}
	})
	return map[string]Store{"dir": d, "s3-path": ps, "s3-virtual": vs}
}

func TestStores(t *testing.T) {
	ctx := context.Background()
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for _, c := range []struct {
				prefix string
				want   []string
			}{
				{prefix: "tiered/orders-abc/", want: []string{
					"tiered/orders-abc/0/00000000000000000008-x.indexes",
					"tiered/orders-abc/0/00000000000000000008-x.log",
					"tiered/orders-abc/10/00000000000000000000-y.log"}},
				{prefix: "tiered/orders-ab", want: []string{
					"tiered/orders-abc/0/00000000000000000008-x.indexes",
					"tiered/orders-abc/0/00000000000000000008-x.log",
					"tiered/orders-abc/10/00000000000000000000-y.log",
					"tiered/orders-abd/0/00000000000000000000-z.log"}},
				{prefix: "nothing/", want: nil},
			} {
				var got []string
				err := st.List(ctx, c.prefix, func(o Object) error {
					if int64(len(objects[o.Key])) != o.Size {
						t.Errorf("%s: size %d, want %d", o.Key, o.Size, len(objects[o.Key]))
					}
					got = append(got, o.Key)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				sort.Strings(got)
				if strings.Join(got, ",") != strings.Join(c.want, ",") {
					t.Errorf("List(%q) = %v, want %v", c.prefix, got, c.want)
				}
			}
			key := "tiered/orders-abc/0/00000000000000000008-x.log"
			o, err := st.Stat(ctx, key)
			if err != nil || o.Size != 10000 {
				t.Fatalf("Stat = %+v, %v", o, err)
			}
			if _, err := st.Stat(ctx, "tiered/none.log"); !IsNotExist(err) {
				t.Errorf("Stat of an absent key: %v, want not-exist", err)
			}
			p := make([]byte, 15)
			if n, err := st.ReadAt(ctx, key, p, 9993); n != 7 || err != io.EOF || string(p[:n]) != "3456789" {
				t.Errorf("ReadAt at the end = %d %v %q", n, err, p[:n])
			}
			if n, err := st.ReadAt(ctx, key, p, 10); n != 15 || err != nil || string(p) != "012345678901234" {
				t.Errorf("ReadAt = %d %v %q", n, err, p)
			}
			if n, err := st.ReadAt(ctx, key, p, 10000); n != 0 || err != io.EOF {
				t.Errorf("ReadAt past the end = %d %v", n, err)
			}
			if _, err := st.ReadAt(ctx, "tiered/none.log", p, 0); !IsNotExist(err) {
				t.Errorf("ReadAt of an absent key: %v, want not-exist", err)
			}
			// A reader in blocks smaller than the object, read in order
			// and out of order.
			r := NewSeqReader(ctx, &ObjectBlocks{Store: st, Key: key, Size: 10000, BlockSize: 999}, 10000, 3)
			defer r.Close()
			got, err := io.ReadAll(io.NewSectionReader(r, 0, 10000))
			if err != nil || !bytes.Equal(got, objects[key]) {
				t.Errorf("SeqReader read %d bytes, %v", len(got), err)
			}
			for _, off := range []int64{5000, 10, 9990, 0, 7000} {
				b := make([]byte, 10)
				if n, err := r.ReadAt(b, off); err != nil && !(err == io.EOF && off+int64(n) == 10000) || !bytes.Equal(b[:n], objects[key][off:off+int64(n)]) {
					t.Errorf("ReadAt(%d) = %d %v %q", off, n, err, b[:n])
				}
			}
		})
	}
}

func TestDirRefusesKeysOutside(t *testing.T) {
	t.Parallel()
	d, err := NewDir(writeTree(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"../x", "/etc/passwd", "a/../../x", "", "a//b"} {
		if _, err := d.Stat(context.Background(), k); err == nil || IsNotExist(err) {
			t.Errorf("Stat(%q) = %v, want an invalid-key error", k, err)
		}
	}
}

// memBlocks serves blocks of data, counting fetches and failing block
// fail (if >= 0).
type memBlocks struct {
	data    []byte
	bs      int
	fetches atomic.Int64
	fail    int
}

func (m *memBlocks) Len() int { return (len(m.data) + m.bs - 1) / m.bs }
func (m *memBlocks) Range(i int) (int64, int) {
	return int64(i * m.bs), min(m.bs, len(m.data)-i*m.bs)
}
func (m *memBlocks) Fetch(ctx context.Context, i int, dst []byte) error {
	m.fetches.Add(1)
	if i == m.fail {
		return errors.New("block " + strconv.Itoa(i) + " failed")
	}
	pos, _ := m.Range(i)
	copy(dst, m.data[pos:])
	return ctx.Err()
}

func TestSeqReader(t *testing.T) {
	t.Parallel()
	data := make([]byte, 100000)
	for i := range data {
		data[i] = byte(rand.IntN(256))
	}
	m := &memBlocks{data: data, bs: 4096, fail: -1}
	r := NewSeqReader(context.Background(), m, int64(len(data)), 4)
	// Sequential reads of odd sizes fetch each block once.
	var got []byte
	buf := make([]byte, 777)
	for off := int64(0); ; {
		n, err := r.ReadAt(buf, off)
		got = append(got, buf[:n]...)
		off += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, data) {
		t.Fatal("sequential read differs")
	}
	if f := m.fetches.Load(); f != int64(m.Len()) {
		t.Errorf("%d fetches for %d blocks", f, m.Len())
	}
	// Random reads are right, whatever the window.
	for range 200 {
		off := rand.Int64N(int64(len(data)))
		n := rand.IntN(10000)
		b := make([]byte, n)
		k, err := r.ReadAt(b, off)
		want := data[off:min(off+int64(n), int64(len(data)))]
		if !bytes.Equal(b[:k], want) || (err != nil && err != io.EOF) {
			t.Fatalf("ReadAt(%d, %d) = %d, %v", off, n, k, err)
		}
	}
	r.Close()
	if _, err := r.ReadAt(buf, 0); err == nil {
		t.Error("ReadAt after Close succeeded")
	}
	// A failed block is the read's error.
	m2 := &memBlocks{data: data, bs: 4096, fail: 3}
	r2 := NewSeqReader(context.Background(), m2, int64(len(data)), 4)
	defer r2.Close()
	if _, err := io.ReadAll(io.NewSectionReader(r2, 0, int64(len(data)))); err == nil || !strings.Contains(err.Error(), "block 3 failed") {
		t.Errorf("read over a failing block: %v", err)
	}
}

// TestS3RetriesBrokenBodies: a server that cuts every other body short
// is read in full, by retrying from where the body stopped.
func TestS3RetriesBrokenBodies(t *testing.T) {
	inner := fakeS3(t, false)
	var cuts atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequest(r.Method, inner.URL+r.URL.RequestURI(), nil)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		if r.Method == http.MethodGet && resp.StatusCode == http.StatusPartialContent && cuts.Add(1)%2 == 1 {
			io.CopyN(w, resp.Body, 100)
			panic(http.ErrAbortHandler) // drop the connection mid-body
		}
		io.Copy(w, resp.Body)
	}))
	defer proxy.Close()
	st, err := NewS3(context.Background(), "bucket", testS3Options(t, proxy.URL))
	if err != nil {
		t.Fatal(err)
	}
	key := "tiered/orders-abc/0/00000000000000000008-x.log"
	p := make([]byte, 5000)
	n, err := st.ReadAt(context.Background(), key, p, 1000)
	if err != nil || n != 5000 || !bytes.Equal(p, objects[key][1000:6000]) {
		t.Fatalf("ReadAt through a cutting proxy = %d, %v", n, err)
	}
	if cuts.Load() < 2 {
		t.Errorf("the proxy cut %d bodies; the test did not exercise a retry", cuts.Load())
	}
}

// memStore is one object in memory whose streams count and may break off
// at byte cut (if >= 0).
type memStore struct {
	data    []byte
	cut     int64
	streams atomic.Int64
}

func (m *memStore) List(context.Context, string, func(Object) error) error { return nil }
func (m *memStore) Stat(context.Context, string) (Object, error) {
	return Object{Key: "k", Size: int64(len(m.data))}, nil
}
func (m *memStore) ReadAt(_ context.Context, _ string, p []byte, off int64) (int, error) {
	return bytes.NewReader(m.data).ReadAt(p, off)
}
func (m *memStore) Stream(_ context.Context, _ string, off int64) (io.ReadCloser, error) {
	m.streams.Add(1)
	var r io.Reader = bytes.NewReader(m.data[off:])
	if m.cut >= 0 {
		r = io.MultiReader(io.LimitReader(r, max(0, m.cut-off)), iotestErr{})
	}
	return io.NopCloser(r), nil
}
func (m *memStore) Location(key string) string { return "mem:" + key }

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

// TestSeqReaderInlineStream: a plain object read in order is one stream
// read in the caller's goroutine; View lends a block's bytes, and none
// for a range across two blocks; a body that breaks off is the error of
// its block, for a View and the ReadAt after it alike, without a second
// request.
func TestSeqReaderInlineStream(t *testing.T) {
	t.Parallel()
	data := make([]byte, 10000)
	for i := range data {
		data[i] = byte(rand.IntN(256))
	}
	m := &memStore{data: data, cut: -1}
	r := NewSeqReader(context.Background(), &ObjectBlocks{Store: m, Key: "k", Size: int64(len(data)), BlockSize: 1000}, int64(len(data)), 0)
	defer r.Close()
	for pos := int64(0); pos < int64(len(data)); pos += 500 {
		v := r.View(pos, 500)
		if !bytes.Equal(v, data[pos:(pos/1000+1)*1000]) {
			t.Fatalf("View(%d, 500) = %d bytes, want the rest of its block", pos, len(v))
		}
	}
	if n := m.streams.Load(); n != 1 {
		t.Errorf("%d streams for one sequential pass", n)
	}
	if v := r.View(1900, 200); v != nil {
		t.Errorf("View across two blocks = %d bytes, want nil", len(v))
	}
	got := make([]byte, 200)
	if n, err := r.ReadAt(got, 1900); n != 200 || err != nil || !bytes.Equal(got, data[1900:2100]) {
		t.Errorf("ReadAt across two blocks = %d, %v", n, err)
	}

	m2 := &memStore{data: data, cut: 2500}
	r2 := NewSeqReader(context.Background(), &ObjectBlocks{Store: m2, Key: "k", Size: int64(len(data)), BlockSize: 1000}, int64(len(data)), 0)
	defer r2.Close()
	if v := r2.View(1000, 10); !bytes.Equal(v, data[1000:2000]) {
		t.Fatalf("View(1000) = %d bytes", len(v))
	}
	if v := r2.View(2000, 10); v != nil {
		t.Errorf("View of the broken block = %d bytes, want nil", len(v))
	}
	if _, err := r2.ReadAt(got[:10], 2000); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("ReadAt of the broken block: %v", err)
	}
	if n := m2.streams.Load(); n != 1 {
		t.Errorf("%d streams, want 1: the broken block was asked for again", n)
	}
}

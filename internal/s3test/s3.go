// Package s3test serves fixture trees from an in-process S3 for tests. It is
// not in klogtest because gofakes3 would then be a dependency of every
// module that uses klogtest (internal/interop is one of its own).
package s3test

import (
	"bytes"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// FakeS3 serves the files under root as the objects of bucket, each key
// prefix plus the file's slash-separated path below root, from an
// in-process S3 (gofakes3) that lives as long as the test, and points the
// AWS SDK at static test credentials (S3Env). It returns the endpoint.
func FakeS3(t testing.TB, root, bucket, prefix string) string {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = be.PutObject(bucket, prefix+filepath.ToSlash(rel), map[string]string{}, bytes.NewReader(data), int64(len(data)), nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(be).Server())
	t.Cleanup(srv.Close)
	S3Env(t, "test", "test")
	return srv.URL
}

// S3Env makes the AWS SDK use static credentials and nothing of the
// machine's configuration (its files, profile, region, endpoint or
// instance metadata) for the rest of the test.
func S3Env(t testing.TB, access, secret string) {
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": access, "AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": filepath.Join(t.TempDir(), "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(t.TempDir(), "none"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "", "AWS_REGION": ""} {
		t.Setenv(k, v)
	}
}

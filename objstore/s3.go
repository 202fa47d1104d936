package objstore

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// Addressing is how requests name the bucket.
type Addressing string

// Addressing styles.
const (
	// AddressingAuto uses path-style requests for an endpoint whose host
	// is an IP address or localhost (where bucket.host cannot resolve),
	// virtual-hosted ones otherwise (AWS's default).
	AddressingAuto Addressing = ""
	// AddressingPath is https://endpoint/bucket/key.
	AddressingPath Addressing = "path"
	// AddressingVirtual is https://bucket.endpoint/key.
	AddressingVirtual Addressing = "virtual"
)

// S3Options configures an S3 store. Credentials, the region and, unless
// Endpoint is set, the endpoint come from the usual AWS sources: the
// AWS_* environment variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, AWS_REGION, AWS_PROFILE, AWS_ENDPOINT_URL_S3, ...),
// the shared config and credentials files (~/.aws/config,
// ~/.aws/credentials), SSO, web identity and the instance metadata
// service, in the SDK's order.
type S3Options struct {
	// Endpoint is the base URL of an S3-compatible service
	// (http://127.0.0.1:7070); "" means AWS (or AWS_ENDPOINT_URL_S3).
	Endpoint string
	// Region overrides the configured region; with none configured,
	// us-east-1.
	Region string
	// Profile selects a profile of the shared config files.
	Profile string
	// Addressing picks path-style or virtual-hosted requests.
	Addressing Addressing
	// Anonymous sends unsigned requests (public buckets).
	Anonymous bool
	// Parallel bounds the requests in flight across everything that reads
	// through this store; 0 means DefaultParallel.
	Parallel int
	// MaxAttempts is how often one read is tried (the SDK's retries of a
	// failed request, and ours of a body that broke off); 0 means
	// DefaultMaxAttempts.
	MaxAttempts int
	// Transport, if set, adjusts the HTTP transport (tests point
	// virtual-hosted names at a loopback server with it).
	Transport func(*http.Transport)
}

// Defaults of S3Options.
const (
	DefaultParallel    = 8
	DefaultMaxAttempts = 5
	// maxBackoff caps the wait between two attempts.
	maxBackoff = 10 * time.Second
)

// S3 is a read-only store over one bucket.
type S3 struct {
	client   *s3.Client
	bucket   string
	sem      chan struct{}
	attempts int
}

// NewS3 returns the store over bucket.
func NewS3(ctx context.Context, bucket string, o S3Options) (*S3, error) {
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	// A buildable client, so that the SDK can add AWS_CA_BUNDLE's
	// certificates to it.
	hc := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.MaxIdleConnsPerHost = o.Parallel * 2
		if o.Transport != nil {
			o.Transport(tr)
		}
	})
	opts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(hc),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = o.MaxAttempts
				so.MaxBackoff = maxBackoff
			})
		}),
		// klog only reads. A ranged GET cannot be checked against a
		// whole-object checksum, and asking for one (or sending
		// aws-chunked trailers) breaks S3-compatible servers that do
		// not know the 2025 checksum headers: only when required.
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	}
	if o.Region != "" {
		opts = append(opts, config.WithRegion(o.Region))
	}
	if o.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(o.Profile))
	}
	if o.Anonymous {
		opts = append(opts, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
	}
	if o.Endpoint != "" {
		opts = append(opts, config.WithBaseEndpoint(o.Endpoint))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, err
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	endpoint := o.Endpoint
	if endpoint == "" && cfg.BaseEndpoint != nil {
		endpoint = *cfg.BaseEndpoint
	}
	pathStyle := o.Addressing == AddressingPath || o.Addressing == AddressingAuto && loopbackOrIP(endpoint)
	client := s3.NewFromConfig(cfg, func(so *s3.Options) {
		so.UsePathStyle = pathStyle
		// Ranged reads are not checksummed (above); do not log that
		// for every one.
		so.DisableLogOutputChecksumValidationSkipped = true
	})
	return &S3{client: client, bucket: bucket, sem: make(chan struct{}, o.Parallel), attempts: o.MaxAttempts}, nil
}

// loopbackOrIP reports whether endpoint's host is an IP address or
// localhost: a virtual-hosted name under it cannot resolve.
func loopbackOrIP(endpoint string) bool {
	if endpoint == "" {
		return false
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "localhost" || net.ParseIP(h) != nil
}

// Location is s3://bucket/key.
func (s *S3) Location(key string) string { return "s3://" + s.bucket + "/" + key }

func (s *S3) acquire(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *S3) release() { <-s.sem }

// List pages through ListObjectsV2 (1,000 keys a page).
func (s *S3) List(ctx context.Context, prefix string, fn func(Object) error) error {
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		if err := s.acquire(ctx); err != nil {
			return err
		}
		page, err := p.NextPage(ctx)
		s.release()
		if err != nil {
			return s.wrap(prefix, err)
		}
		for _, o := range page.Contents {
			if o.Key == nil {
				continue
			}
			if err := fn(Object{Key: *o.Key, Size: aws.ToInt64(o.Size)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Stat is a HEAD request.
func (s *S3) Stat(ctx context.Context, key string) (Object, error) {
	if err := s.acquire(ctx); err != nil {
		return Object{}, err
	}
	defer s.release()
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return Object{}, s.wrap(key, err)
	}
	return Object{Key: key, Size: aws.ToInt64(out.ContentLength)}, nil
}

// ReadAt is one ranged GET (bytes=off-(off+len(p)-1)). A body that breaks
// off is read again from where it stopped, with back-off, up to
// MaxAttempts times; the SDK retries failed requests itself.
func (s *S3) ReadAt(ctx context.Context, key string, p []byte, off int64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if err := s.acquire(ctx); err != nil {
		return 0, err
	}
	defer s.release()
	n := 0
	var last error
	for attempt := 0; attempt < s.attempts; attempt++ {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return n, err
			}
		}
		m, eof, err := s.get(ctx, key, p[n:], off+int64(n))
		n += m
		switch {
		case err == nil && eof:
			return n, io.EOF
		case err == nil:
			return n, nil
		case !retryableBody(err) || ctx.Err() != nil:
			return n, err
		}
		last = err
	}
	return n, last
}

// Stream is one GET of bytes=off- whose body is read as the caller reads;
// it holds one of the store's Parallel slots until closed. A body that
// breaks off is asked for again from where it stopped, with back-off, up to
// MaxAttempts times.
func (s *S3) Stream(ctx context.Context, key string, off int64) (io.ReadCloser, error) {
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	st := &s3Stream{s: s, ctx: ctx, key: key, pos: off}
	if err := st.open(); err != nil {
		s.release()
		return nil, err
	}
	return st, nil
}

type s3Stream struct {
	s      *S3
	ctx    context.Context
	key    string
	pos    int64
	body   io.ReadCloser
	end    bool
	closed bool
}

func (st *s3Stream) open() error {
	rng := "bytes=" + strconv.FormatInt(st.pos, 10) + "-"
	out, err := st.s.client.GetObject(st.ctx, &s3.GetObjectInput{Bucket: &st.s.bucket, Key: &st.key, Range: &rng})
	if err != nil {
		var re *awshttp.ResponseError
		if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusRequestedRangeNotSatisfiable {
			st.end = true
			return nil
		}
		return st.s.wrap(st.key, err)
	}
	st.body = out.Body
	return nil
}

func (st *s3Stream) Read(p []byte) (int, error) {
	for attempt := 0; ; attempt++ {
		if st.end {
			return 0, io.EOF
		}
		n, err := st.body.Read(p)
		st.pos += int64(n)
		switch {
		case err == io.EOF:
			st.end = true
			if n > 0 {
				return n, nil
			}
			return 0, io.EOF
		case err == nil || n > 0:
			return n, nil // an error after data comes back on the next Read
		}
		if attempt+1 >= st.s.attempts || st.ctx.Err() != nil {
			return 0, &bodyError{loc: st.s.Location(st.key), err: err}
		}
		st.body.Close()
		if berr := backoff(st.ctx, attempt+1); berr != nil {
			return 0, berr
		}
		if oerr := st.open(); oerr != nil {
			return 0, oerr
		}
	}
}

func (st *s3Stream) Close() error {
	if st.closed {
		return nil
	}
	st.closed = true
	if st.body != nil {
		st.body.Close()
	}
	st.s.release()
	return nil
}

// get is one GET of len(p) bytes at off; eof reports that the object
// ended before p was full.
func (s *S3) get(ctx context.Context, key string, p []byte, off int64) (n int, eof bool, err error) {
	rng := "bytes=" + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+int64(len(p))-1, 10)
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key, Range: &rng})
	if err != nil {
		var re *awshttp.ResponseError
		if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusRequestedRangeNotSatisfiable {
			return 0, true, nil // off is at or past the end
		}
		return 0, false, s.wrap(key, err)
	}
	defer out.Body.Close()
	n, err = io.ReadFull(out.Body, p)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		// Fewer bytes than asked: the object ends there, if the server
		// said so; otherwise the body broke off.
		if out.ContentLength != nil && int64(n) == *out.ContentLength {
			return n, true, nil
		}
		return n, false, &bodyError{loc: s.Location(key), err: err}
	}
	if err != nil {
		return n, false, &bodyError{loc: s.Location(key), err: err}
	}
	return n, false, nil
}

// bodyError is a response body that broke off: retried.
type bodyError struct {
	loc string
	err error
}

func (e *bodyError) Error() string { return e.loc + ": reading the response: " + e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

func retryableBody(err error) bool {
	var be *bodyError
	return errors.As(err, &be)
}

// backoff waits before attempt (1, 2, ...): 100 ms doubling, capped at
// maxBackoff, with full jitter.
func backoff(ctx context.Context, attempt int) error {
	d := 100 * time.Millisecond << min(attempt-1, 8)
	if d > maxBackoff {
		d = maxBackoff
	}
	d = time.Duration(rand.Int64N(int64(d)) + 1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wrap turns "no such key" answers into ErrNotExist and names the object.
func (s *S3) wrap(key string, err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NoSuchKey", "NotFound":
			return &notExist{loc: s.Location(key)}
		case "NoSuchBucket":
			return &notExist{loc: "s3://" + s.bucket}
		}
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound {
		return &notExist{loc: s.Location(key)}
	}
	return &s3Error{loc: s.Location(key), err: err}
}

type s3Error struct {
	loc string
	err error
}

func (e *s3Error) Error() string {
	msg := e.err.Error()
	// The SDK's message repeats "operation error S3: GetObject, ...";
	// keep it, it names the operation and the status.
	return e.loc + ": " + strings.TrimSpace(msg)
}
func (e *s3Error) Unwrap() error { return e.err }

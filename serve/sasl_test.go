package serve

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// testUsers: alice writes, bob reads (a password with spaces).
const testUsers = `# klog serve users
alice write alice-secret

bob   read  bob's secret, with spaces
`

func saslServer(t *testing.T) (dir, addr string) {
	t.Helper()
	users, err := ParseUsers(strings.NewReader(testUsers))
	if err != nil {
		t.Fatal(err)
	}
	dir = fixtureLogDir(t, "none-0")
	os.MkdirAll(filepath.Join(dir, "t-0"), 0o755)
	_, addr = startServer(t, Config{LogDir: dir, Writable: true, Users: users})
	return dir, addr
}

// TestParseUsers: the credentials file's format and its mistakes, by line.
func TestParseUsers(t *testing.T) {
	u, err := ParseUsers(strings.NewReader(testUsers))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(u.Names(), ","); got != "alice,bob" {
		t.Errorf("users %s", got)
	}
	if b := u.byName["bob"]; b.password != "bob's secret, with spaces" || b.write {
		t.Errorf("bob: %q write %v", b.password, b.write)
	}
	if a := u.byName["alice"]; a.password != "alice-secret" || !a.write || len(a.scram) != 2 {
		t.Errorf("alice: %+v", a)
	}
	for in, want := range map[string]string{
		"alice write":            "line 1: want NAME ACCESS PASSWORD",
		"\nalice admin pw":       "line 2: access \"admin\"",
		"a read x\na write y":    "line 2: user \"a\" again",
		"# nothing\n\n":          "no users",
		"a read " + "\x00" + "x": "line 1: user \"a\"",
	} {
		if _, err := ParseUsers(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	p := filepath.Join(t.TempDir(), "users")
	os.WriteFile(p, []byte(testUsers), 0o644)
	if _, err := LoadUsers(p); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("a world-readable file: %v", err)
	}
	os.Chmod(p, 0o600)
	if _, err := LoadUsers(p); err != nil {
		t.Error(err)
	}
}

// mechanismsFor are kgo's mechanisms for a user, by name.
func mechanismsFor(user, pass string) map[string]sasl.Mechanism {
	return map[string]sasl.Mechanism{
		MechanismPlain:       plain.Auth{User: user, Pass: pass}.AsMechanism(),
		MechanismSCRAMSHA256: scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(),
		MechanismSCRAMSHA512: scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(),
	}
}

// TestSASLKgo: franz-go's kgo authenticates with each mechanism; the
// reader consumes and is refused produce (TOPIC_AUTHORIZATION_FAILED, and
// CLUSTER_AUTHORIZATION_FAILED for an idempotent producer's
// InitProducerId) and auto-creation (TOPIC_AUTHORIZATION_FAILED); the
// writer produces; a wrong password is SASL_AUTHENTICATION_FAILED.
func TestSASLKgo(t *testing.T) {
	dir, addr := saslServer(t)
	want := dumpRecords(t, filepath.Join(dir, "none-0"))
	produced := 0
	for mech := range mechanismsFor("", "") {
		t.Run(mech, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			bob := kgo.SASL(mechanismsFor("bob", "bob's secret, with spaces")[mech])
			sameRecs(t, mech+" bob", consumeKgo(t, addr, "none", 0, kgo.ReadUncommitted(), len(want), bob), want)
			for _, idem := range []bool{false, true} {
				opts := []kgo.Opt{kgo.SeedBrokers(addr), bob, kgo.RecordRetries(0)}
				if !idem {
					opts = append(opts, kgo.DisableIdempotentWrite())
				}
				cl, err := kgo.NewClient(opts...)
				if err != nil {
					t.Fatal(err)
				}
				err = cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("from bob")}).FirstErr()
				cl.Close()
				if !errors.Is(err, kerr.TopicAuthorizationFailed) && !errors.Is(err, kerr.ClusterAuthorizationFailed) {
					t.Errorf("bob produced (idempotent %v): %v", idem, err)
				}
			}
			alice, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(mechanismsFor("alice", "alice-secret")[mech]))
			if err != nil {
				t.Fatal(err)
			}
			defer alice.Close()
			if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("from alice")}).FirstErr(); err != nil {
				t.Fatalf("alice: %v", err)
			}
			produced++
			bad, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(mechanismsFor("alice", "wrong")[mech]))
			if err != nil {
				t.Fatal(err)
			}
			defer bad.Close()
			if err := bad.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Errorf("a wrong password: %v", err)
			}
		})
	}
	if got := len(dumpRecords(t, filepath.Join(dir, "t-0"))); got != produced {
		t.Errorf("t-0 holds %d records, want %d (alice's)", got, produced)
	}
}

// saslWire authenticates a raw connection with PLAIN.
func saslWire(t *testing.T, addr, user, pass string) (*wire, *kmsg.SASLAuthenticateResponse) {
	w := dial(t, addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, MechanismPlain
	if r := w.do(hs).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
		t.Fatalf("handshake: %d", r.ErrorCode)
	}
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version, au.SASLAuthBytes = 2, []byte("\x00"+user+"\x00"+pass)
	return w, w.do(au).(*kmsg.SASLAuthenticateResponse)
}

// TestSASLProtocol: the server's side of KIP-43/KIP-152 on the wire.
func TestSASLProtocol(t *testing.T) {
	_, addr := saslServer(t)
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	// Before authentication: ApiVersions is answered (with keys 17 and
	// 36), anything else closes the connection.
	w := dial(t, addr)
	keys := map[int16]bool{}
	for _, k := range w.do(av).(*kmsg.ApiVersionsResponse).ApiKeys {
		keys[k.ApiKey] = true
	}
	if !keys[17] || !keys[36] {
		t.Errorf("ApiVersions lacks the SASL keys")
	}
	w.send(md)
	if !w.closed() {
		t.Errorf("Metadata before authentication was answered")
	}
	// An unknown mechanism: UNSUPPORTED_SASL_MECHANISM with the list,
	// then the close.
	w = dial(t, addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "GSSAPI"
	r := w.do(hs).(*kmsg.SASLHandshakeResponse)
	if r.ErrorCode != kerr.UnsupportedSaslMechanism.Code || strings.Join(r.SupportedMechanisms, ",") != "SCRAM-SHA-512,SCRAM-SHA-256,PLAIN" {
		t.Errorf("GSSAPI: %+v", r)
	}
	if !w.closed() {
		t.Errorf("still open after an unsupported mechanism")
	}
	// A wrong password: SASL_AUTHENTICATION_FAILED, Kafka's message,
	// the close.
	w, ar := saslWire(t, addr, "bob", "nope")
	if ar.ErrorCode != kerr.SaslAuthenticationFailed.Code || ar.ErrorMessage == nil || *ar.ErrorMessage != "Authentication failed: Invalid username or password" {
		t.Errorf("wrong password: %+v", ar)
	}
	if !w.closed() {
		t.Errorf("still open after a failed authentication")
	}
	// bob, authenticated, reads and may not create or write.
	w, ar = saslWire(t, addr, "bob", "bob's secret, with spaces")
	if ar.ErrorCode != 0 {
		t.Fatalf("bob: %+v", ar)
	}
	n := "new-topic"
	md.AllowAutoTopicCreation, md.Topics = true, []kmsg.MetadataRequestTopic{{Topic: &n}}
	if mt := w.do(md).(*kmsg.MetadataResponse).Topics[0]; mt.ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("bob's auto-creation: %d", mt.ErrorCode)
	}
	if p := produceOne(w, 9, "t", rawBatch(t, 0)); p.ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("bob's produce: %d", p.ErrorCode)
	}
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.Version = 4
	if r := w.do(ip).(*kmsg.InitProducerIDResponse); r.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("bob's InitProducerId: %d", r.ErrorCode)
	}
	// A second handshake is ILLEGAL_SASL_STATE.
	hs.Mechanism = MechanismPlain
	if r := w.do(hs).(*kmsg.SASLHandshakeResponse); r.ErrorCode != kerr.IllegalSaslState.Code {
		t.Errorf("second handshake: %d", r.ErrorCode)
	}
	// alice creates and writes.
	w, _ = saslWire(t, addr, "alice", "alice-secret")
	if mt := w.do(md).(*kmsg.MetadataResponse).Topics[0]; mt.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("alice's auto-creation: %d, want UNKNOWN_TOPIC_OR_PARTITION (created)", mt.ErrorCode)
	}
	if mt := w.do(md).(*kmsg.MetadataResponse).Topics[0]; mt.ErrorCode != 0 || len(mt.Partitions) != 1 {
		t.Errorf("alice's topic after its auto-creation: %d, %d partitions", mt.ErrorCode, len(mt.Partitions))
	}
	if p := produceOne(w, 9, "t", rawBatch(t, 0)); p.ErrorCode != 0 {
		t.Errorf("alice's produce: %d", p.ErrorCode)
	}
	// bob may not delete groups or their offsets (no DELETE).
	dg := kmsg.NewPtrDeleteGroupsRequest()
	dg.Version, dg.Groups = 2, []string{"g"}
	if r := w2(t, addr, "bob").do(dg).(*kmsg.DeleteGroupsResponse); r.Groups[0].ErrorCode != kerr.GroupAuthorizationFailed.Code {
		t.Errorf("bob's DeleteGroups: %d", r.Groups[0].ErrorCode)
	}
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = "g"
	if r := w2(t, addr, "bob").do(od).(*kmsg.OffsetDeleteResponse); r.ErrorCode != kerr.GroupAuthorizationFailed.Code {
		t.Errorf("bob's OffsetDelete: %d", r.ErrorCode)
	}
	// A server without users answers a handshake ILLEGAL_SASL_STATE.
	_, plainAddr := startServer(t, Config{LogDir: fixtureLogDir(t, "none-0")})
	w = dial(t, plainAddr)
	if r := w.do(hs).(*kmsg.SASLHandshakeResponse); r.ErrorCode != kerr.IllegalSaslState.Code {
		t.Errorf("handshake without users: %d", r.ErrorCode)
	}
}

// TestSASLKcat: kcat (librdkafka 2.0.2) consumes with PLAIN and
// SCRAM-SHA-256 as the reader, and its produce is refused.
func TestSASLKcat(t *testing.T) {
	kcat := needClient(t, "kcat", "-V")
	dir, addr := saslServer(t)
	want := dumpRecords(t, filepath.Join(dir, "none-0"))
	// The mechanisms at once (t.Run from goroutines): each wrong-password
	// kcat waits out its 5 s metadata timeout.
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, mech := range []string{MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(mech, func(t *testing.T) { saslKcat(t, kcat, addr, mech, len(want)) })
		}()
	}
}

// saslKcat reads topic none through kcat with SASL mechanism mech (want
// records), then fails to with a wrong password.
func saslKcat(t *testing.T, kcat, addr, mech string, want int) {
	sasl := []string{"-b", addr, "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=" + mech,
		"-X", "sasl.username=bob", "-X", "sasl.password=bob's secret, with spaces"}
	got := runClient(t, "", kcat, append(sasl, "-C", "-t", "none", "-o", "beginning", "-e", "-q", "-f", "%o\n")...)
	if n := strings.Count(got, "\n"); n != want {
		t.Errorf("kcat %s: %d records, want %d", mech, n, want)
	}
	// The same with a wrong password fails (the proof of librdkafka's
	// doubled SCRAM nonce is checked, not only the nonce).
	bad := append([]string(nil), sasl...)
	bad[len(bad)-1] = "sasl.password=wrong"
	if out, err := exec.Command(kcat, append(bad, "-C", "-t", "none", "-o", "beginning", "-e", "-q", "-m", "5")...).CombinedOutput(); err == nil {
		t.Errorf("kcat %s with a wrong password: %s", mech, out)
	}
}

// TestSASLConfluentPython: confluent-kafka consumes with a group as the
// reader (SCRAM-SHA-512 and PLAIN) and is refused produce; the writer
// produces.
func TestSASLConfluentPython(t *testing.T) {
	py := needClient(t, systemPython, "-c", "import confluent_kafka")
	dir, addr := saslServer(t)
	want := dumpRecords(t, filepath.Join(dir, "none-0"))
	script := filepath.Join("testdata", "clients", "confluent_sasl.py")
	for _, c := range []struct{ mech, user, pass, last string }{
		{MechanismSCRAMSHA512, "bob", "bob's secret, with spaces", "produce error: TOPIC_AUTHORIZATION_FAILED"},
		{MechanismPlain, "alice", "alice-secret", "produced"},
	} {
		got := runClient(t, "", py, script, addr, c.mech, c.user, c.pass, "none", strconv.Itoa(len(want)))
		lines := strings.Split(strings.TrimSpace(got), "\n")
		if len(lines) != len(want)+1 || lines[len(lines)-1] != c.last {
			t.Errorf("confluent-kafka %s as %s: %d lines, last %q, want %d and %q", c.mech, c.user, len(lines), lines[len(lines)-1], len(want)+1, c.last)
		}
	}
}

// w2 is a connection authenticated as user (testUsers' passwords).
func w2(t *testing.T, addr, user string) *wire {
	pass := map[string]string{"alice": "alice-secret", "bob": "bob's secret, with spaces"}[user]
	w, ar := saslWire(t, addr, user, pass)
	if ar.ErrorCode != 0 {
		t.Fatalf("%s: %+v", user, ar)
	}
	return w
}

// TestSASLOverTLS: SCRAM over the server's TLS (kgo), and the request
// log names the principal and SASL_SSL.
func TestSASLOverTLS(t *testing.T) {
	users, err := ParseUsers(strings.NewReader(testUsers))
	if err != nil {
		t.Fatal(err)
	}
	cert, pool := testCert(t)
	var logged strings.Builder
	var mu sync.Mutex
	dir := fixtureLogDir(t, "none-0")
	_, addr := startServer(t, Config{LogDir: dir, Users: users, TLS: &tls.Config{Certificates: []tls.Certificate{cert}},
		RequestLog: writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logged.Write(p) })})
	dialer := &tls.Dialer{Config: &tls.Config{RootCAs: pool}}
	got := consumeKgo(t, addr, "none", 0, kgo.ReadUncommitted(), 59, kgo.Dialer(dialer.DialContext),
		kgo.SASL(scram.Auth{User: "bob", Pass: "bob's secret, with spaces"}.AsSha512Mechanism()))
	sameRecs(t, "SCRAM over TLS", got, dumpRecords(t, filepath.Join(dir, "none-0")))
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logged.String(), `"securityProtocol":"SASL_SSL","listener":"SASL_SSL","principal":"User:bob"`) {
		t.Errorf("request log:\n%s", logged.String())
	}
}

// testCert is a self-signed certificate for 127.0.0.1 and a pool that
// trusts it.
func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(parsed)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

package serve

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The SASL keys' fuzz targets (fuzz_test.go's fuzzKey: a server without
// users), and FuzzSASLExchange: any tokens, to a server with users, for
// each mechanism, are answered without a panic and authenticate no one
// without the password.
func init() { fuzzedKeys = append(fuzzedKeys, saslHandshakeKey, saslAuthenticateKey) }

func FuzzSaslHandshake(f *testing.F)    { fuzzKey(f, saslHandshakeKey) }
func FuzzSaslAuthenticate(f *testing.F) { fuzzKey(f, saslAuthenticateKey) }

func FuzzSASLExchange(f *testing.F) {
	users, err := ParseUsers(strings.NewReader(testUsers))
	if err != nil {
		f.Fatal(err)
	}
	srv := &Server{cfg: Config{Users: users}}
	f.Add(uint8(0), []byte("\x00alice\x00alice-secret"), []byte(nil))
	f.Add(uint8(0), []byte("bob\x00bob\x00x"), []byte(nil))
	f.Add(uint8(1), []byte("n,,n=alice,r=abcdefgh"), []byte("c=biws,r=abcdefgh,p=AAAA"))
	f.Add(uint8(2), []byte("n,a=bob,n=alice,r=x"), []byte("c=,r=,p="))
	f.Fuzz(func(t *testing.T, m uint8, first, second []byte) {
		cn := &conn{s: srv}
		hs := &kmsg.SASLHandshakeRequest{Version: 1, Mechanism: mechanisms[int(m)%len(mechanisms)]}
		if _, err := cn.handleSaslHandshake(hs); err != nil {
			t.Fatal(err)
		}
		for _, tok := range [][]byte{first, second} {
			r := &kmsg.SASLAuthenticateRequest{Version: 2, SASLAuthBytes: tok}
			if _, err := cn.handleSaslAuthenticate(r); err != nil {
				t.Fatal(err)
			}
			if cn.auth.close {
				break
			}
		}
		if cn.auth.user != nil && !strings.Contains(string(first), cn.auth.user.password) {
			// SCRAM proves the password without sending it: only a
			// PLAIN token holding it may authenticate here (a fuzzer
			// does not find a SCRAM proof).
			t.Fatalf("authenticated %s without the password", cn.auth.user.name)
		}
	})
}

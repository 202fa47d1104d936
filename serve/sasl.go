package serve

// SASL authentication (KIP-43, KIP-152): PLAIN (RFC 4616) and
// SCRAM-SHA-256/512 (RFC 5802, RFC 7677; KIP-84) over the connection, TLS
// or not, with the users of a credentials file. An authenticated user may
// read (Fetch, ListOffsets, Metadata, the group APIs and offset commits:
// what Kafka's READ and DESCRIBE ACLs allow) or also write (Produce,
// transactions, topic creation and deletion, configs, DeleteGroups,
// OffsetDelete: WRITE, IDEMPOTENT_WRITE, CREATE, DELETE, ALTER,
// ALTER_CONFIGS); authz.go is the table of what a read user is refused.

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/xdg-go/scram"
)

// SASL mechanisms, as clients name them.
const (
	MechanismPlain       = "PLAIN"
	MechanismSCRAMSHA256 = "SCRAM-SHA-256"
	MechanismSCRAMSHA512 = "SCRAM-SHA-512"
)

// The SASL keys, which a connection may send before it authenticated
// (with ApiVersions).
const (
	saslHandshakeKey    = 17
	saslAuthenticateKey = 36
)

// mechanisms is what SaslHandshake lists, in Kafka's order of preference.
var mechanisms = []string{MechanismSCRAMSHA512, MechanismSCRAMSHA256, MechanismPlain}

// scramIterations is the PBKDF2 iteration count of the SCRAM credentials
// derived from a file's passwords (kafka-configs' default, 4096).
const scramIterations = 4096

// Users are the principals SASL authenticates (Config.Users). The zero
// Users has none.
type Users struct {
	byName map[string]*user
}

type user struct {
	name     string
	password string // SASLprep'd for SCRAM by the library
	write    bool
	scram    map[string]scram.StoredCredentials // by mechanism
}

// UsersFileFormat documents LoadUsers' file (the README shows it too).
const UsersFileFormat = `one user a line: NAME ACCESS PASSWORD
  NAME      the user name (no spaces), the principal User:NAME
  ACCESS    read (consume, groups, offset commits) or write (also produce and create topics)
  PASSWORD  the rest of the line (leading and trailing spaces trimmed)
blank lines and lines starting with # are ignored`

// LoadUsers reads a credentials file (UsersFileFormat). A file that others
// than its owner may read is refused: it holds passwords.
func LoadUsers(path string) (*Users, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: readable by others (mode %04o): it holds passwords; chmod 600 it", path, st.Mode().Perm())
	}
	u, err := ParseUsers(io.LimitReader(f, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return u, nil
}

// ParseUsers reads the credentials format (UsersFileFormat) and derives
// each user's SCRAM credentials with a random salt.
func ParseUsers(r io.Reader) (*Users, error) {
	u := &Users{byName: map[string]*user{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 64<<10)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) < 3 {
			return nil, fmt.Errorf("line %d: want NAME ACCESS PASSWORD, got %d fields", line, len(fields))
		}
		name, access := fields[0], fields[1]
		// The password is the rest of the line after the second field.
		rest := strings.TrimSpace(text[len(name):])
		password := strings.TrimSpace(rest[len(access):])
		if access != "read" && access != "write" {
			return nil, fmt.Errorf("line %d: access %q is neither read nor write", line, access)
		}
		if u.byName[name] != nil {
			return nil, fmt.Errorf("line %d: user %q again", line, name)
		}
		us := &user{name: name, password: password, write: access == "write", scram: map[string]scram.StoredCredentials{}}
		for mech, hash := range map[string]scram.HashGeneratorFcn{MechanismSCRAMSHA256: scram.SHA256, MechanismSCRAMSHA512: scram.SHA512} {
			c, err := hash.NewClient(name, password, "")
			if err != nil {
				return nil, fmt.Errorf("line %d: user %q: %v", line, name, err)
			}
			salt := make([]byte, 16)
			if _, err := rand.Read(salt); err != nil {
				return nil, err
			}
			us.scram[mech] = c.GetStoredCredentials(scram.KeyFactors{Salt: string(salt), Iters: scramIterations})
		}
		u.byName[name] = us
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if len(u.byName) == 0 {
		return nil, errors.New("no users")
	}
	return u, nil
}

// Names lists the users, sorted.
func (u *Users) Names() []string {
	var out []string
	for n := range u.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// connAuth is a connection's SASL state.
type connAuth struct {
	mech string // chosen by SaslHandshake
	conv *scram.ServerConversation
	// first and serverFirst are the SCRAM client-first and server-first
	// messages (for scramFinal).
	first, serverFirst string
	user               *user // set once authenticated
	raw                bool  // SaslHandshake v0: the tokens come as raw frames
	close              bool  // close the connection once the answer is written
}

// authenticated reports whether the connection may send requests other
// than ApiVersions and the SASL keys.
func (cn *conn) authenticated() bool { return cn.s.cfg.Users == nil || cn.auth.user != nil }

// mayWrite reports whether the connection's principal may produce and
// create topics: every connection of a server without users, and the
// users of access write. dispatch refuses a read user's write requests
// by one table (authz.go).
func (cn *conn) mayWrite() bool {
	return cn.s.cfg.Users == nil || (cn.auth.user != nil && cn.auth.user.write)
}

// principal is the connection's principal as Kafka's request log names
// it.
func (cn *conn) principal() string {
	if cn.auth.user != nil {
		return "User:" + cn.auth.user.name
	}
	return "User:ANONYMOUS"
}

// errAuthFailed closes a connection after a failed authentication (its
// answer written first, KIP-152).
var errAuthFailed = errors.New("SASL authentication failed")

// errUnauthenticated closes a connection that sends a request before it
// authenticated (SaslServerAuthenticator: an unexpected request during
// the SASL handshake).
var errUnauthenticated = errors.New("request before SASL authentication")

// plainAuth checks a PLAIN token: [authzid] NUL authcid NUL passwd. An
// authorization id other than the user is refused, as Kafka's
// PlainSaslServer does.
func (u *Users) plainAuth(token []byte) (*user, string) {
	parts := bytes.Split(token, []byte{0})
	if len(parts) != 3 {
		return nil, "Invalid SASL/PLAIN response: expected 3 tokens, got " + fmt.Sprint(len(parts))
	}
	authz, name, pass := string(parts[0]), string(parts[1]), parts[2]
	if name == "" {
		return nil, "Authentication failed: username not specified"
	}
	if authz != "" && authz != name {
		return nil, "Authentication failed: Client requested an authorization id that is different from username"
	}
	us := u.byName[name]
	if us == nil || !constantTimeEqual([]byte(us.password), pass) {
		return nil, "Authentication failed: Invalid username or password"
	}
	return us, ""
}

func constantTimeEqual(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	var v byte
	for i := range a {
		v |= a[i] ^ b[i]
	}
	return v == 0
}

// scramServer starts a SCRAM conversation for mech.
func (u *Users) scramServer(mech string) *scram.ServerConversation {
	hash := scram.SHA256
	if mech == MechanismSCRAMSHA512 {
		hash = scram.SHA512
	}
	srv, _ := hash.NewServer(func(name string) (scram.StoredCredentials, error) {
		us := u.byName[name]
		if us == nil {
			return scram.StoredCredentials{}, errors.New("unknown user")
		}
		return us.scram[mech], nil
	})
	return srv.NewConversation()
}

// scramFinal verifies a SCRAM client-final message (RFC 5802 section 3)
// whose nonce ends with the server's nonce rather than equals it, as
// Kafka's ScramSaslServer allows and librdkafka needs, with u's stored
// credentials; it returns the server-final message.
func scramFinal(u *user, mech, clientFirst, serverFirst, clientFinal string) (string, bool) {
	if u == nil {
		return "", false
	}
	hash := scram.SHA256
	if mech == MechanismSCRAMSHA512 {
		hash = scram.SHA512
	}
	cred, ok := u.scram[mech]
	if !ok {
		return "", false
	}
	// client-first: gs2-header (two commas), then the bare message.
	i := strings.Index(clientFirst, ",")
	j := -1
	if i >= 0 {
		j = strings.Index(clientFirst[i+1:], ",")
	}
	if j < 0 {
		return "", false
	}
	gs2, bare := clientFirst[:i+1+j+1], clientFirst[i+1+j+1:]
	withoutProof, proof64, ok := strings.Cut(clientFinal, ",p=")
	if !ok {
		return "", false
	}
	var cbind, nonce, serverNonce string
	for _, a := range strings.Split(withoutProof, ",") {
		switch {
		case strings.HasPrefix(a, "c="):
			cbind = a[2:]
		case strings.HasPrefix(a, "r="):
			nonce = a[2:]
		}
	}
	for _, a := range strings.Split(serverFirst, ",") {
		if strings.HasPrefix(a, "r=") {
			serverNonce = a[2:]
		}
	}
	if cbind != base64.StdEncoding.EncodeToString([]byte(gs2)) || serverNonce == "" || !strings.HasSuffix(nonce, serverNonce) {
		return "", false
	}
	proof, err := base64.StdEncoding.DecodeString(proof64)
	if err != nil {
		return "", false
	}
	authMessage := []byte(bare + "," + serverFirst + "," + withoutProof)
	mac := func(key []byte) []byte {
		h := hmac.New(hash, key)
		h.Write(authMessage)
		return h.Sum(nil)
	}
	sig := mac(cred.StoredKey)
	if len(proof) != len(sig) {
		return "", false
	}
	clientKey := make([]byte, len(sig))
	for k := range sig {
		clientKey[k] = proof[k] ^ sig[k]
	}
	h := hash()
	h.Write(clientKey)
	if !hmac.Equal(h.Sum(nil), cred.StoredKey) {
		return "", false
	}
	return "v=" + base64.StdEncoding.EncodeToString(mac(cred.ServerKey)), true
}

package serve

// SaslAuthenticate, key 36: v0-v2 served.
//
// Version notes (SaslAuthenticateRequest.json):
//   - v0: the SASL tokens of the mechanism SaslHandshake chose (KIP-152).
//   - v1: SessionLifetimeMs in the response (KIP-368); 0 here: sessions do
//     not expire.
//   - v2: flexible.

import (
	"encoding/binary"
	"io"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(36, 0, 2, (*conn).handleSaslAuthenticate) }

// handleSaslAuthenticate runs one step of the mechanism's exchange:
// PLAIN in one, SCRAM in two (client-first, client-final). A failure is
// SASL_AUTHENTICATION_FAILED with Kafka's message, and the connection is
// closed once it is written (KIP-152).
func (cn *conn) handleSaslAuthenticate(r *kmsg.SASLAuthenticateRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	if cn.s.cfg.Users == nil || cn.auth.mech == "" || cn.auth.user != nil || cn.auth.raw {
		msg := "Unexpected SaslAuthenticate request: no SASL handshake in progress"
		resp.ErrorCode, resp.ErrorMessage = kerr.IllegalSaslState.Code, &msg
		cn.auth.close = true
		return resp, nil
	}
	out, msg := cn.saslStep(r.SASLAuthBytes)
	if msg != "" {
		resp.ErrorCode, resp.ErrorMessage = kerr.SaslAuthenticationFailed.Code, &msg
		cn.auth.close = true
		return resp, nil
	}
	resp.SASLAuthBytes = out
	return resp, nil
}

// saslStep runs one step of the connection's mechanism on a client token:
// the server's token, or Kafka's message of a failed authentication.
func (cn *conn) saslStep(token []byte) (out []byte, failed string) {
	users := cn.s.cfg.Users
	if cn.auth.mech == MechanismPlain {
		u, msg := users.plainAuth(token)
		if u == nil {
			return nil, msg
		}
		cn.auth.user = u
		return []byte{}, ""
	}
	bad := "Authentication failed during authentication due to invalid credentials with SASL mechanism " + cn.auth.mech
	if cn.auth.conv == nil {
		cn.auth.conv = users.scramServer(cn.auth.mech)
	}
	first := cn.auth.first == ""
	s, err := cn.auth.conv.Step(string(token))
	if err != nil && !first {
		// librdkafka's client-final nonce is its own nonce followed by
		// the server's, which Kafka's ScramSaslServer accepts (it checks
		// that the nonce ends with the server's).
		u := users.byName[cn.auth.conv.Username()]
		if v, ok := scramFinal(u, cn.auth.mech, cn.auth.first, cn.auth.serverFirst, string(token)); ok {
			cn.auth.user, cn.auth.conv = u, nil
			return []byte(v), ""
		}
	}
	if err != nil {
		return nil, bad
	}
	if first {
		cn.auth.first, cn.auth.serverFirst = string(token), s
	}
	if cn.auth.conv.Done() {
		if !cn.auth.conv.Valid() {
			return nil, bad
		}
		cn.auth.user = users.byName[cn.auth.conv.Username()]
		cn.auth.conv = nil
		if cn.auth.user == nil {
			return nil, bad
		}
	}
	return []byte(s), ""
}

// maxRawToken bounds a SaslHandshake v0 client's raw token frames.
const maxRawToken = 64 << 10

// serveRawToken reads one raw SASL token frame (after a SaslHandshake v0)
// and writes the server's; a failure closes the connection, as a broker
// does for raw tokens.
func (cn *conn) serveRawToken() error {
	var sz [4]byte
	if _, err := io.ReadFull(cn.r, sz[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(sz[:])
	if n > maxRawToken {
		cn.logError(header{key: saslHandshakeKey}, "SASL token of "+strconv.Itoa(int(n))+" bytes")
		return errMalformed
	}
	token := make([]byte, n)
	if _, err := io.ReadFull(cn.r, token); err != nil {
		return err
	}
	out, failed := cn.saslStep(token)
	if failed != "" {
		cn.logError(header{key: saslHandshakeKey}, failed)
		return errAuthFailed
	}
	if cn.auth.user != nil {
		cn.auth.raw = false
	}
	_, err := cn.c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(out))), out...))
	return err
}

package serve

// SaslHandshake, key 17: v0-v1 served.
//
// Version notes (SaslHandshakeRequest.json):
//   - v0: the SASL tokens follow as raw frames, a 4-byte size and the
//     token each way (KIP-43). librdkafka takes SASL as supported only
//     when v0 is advertised, then uses v1.
//   - v1: the tokens go in SaslAuthenticate requests (KIP-152).

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(17, 0, 1, (*conn).handleSaslHandshake) }

// handleSaslHandshake chooses the connection's mechanism. A mechanism
// this server does not offer is UNSUPPORTED_SASL_MECHANISM and closes the
// connection after the answer (SaslServerAuthenticator); a server without
// users, or a second handshake, is ILLEGAL_SASL_STATE.
func (cn *conn) handleSaslHandshake(r *kmsg.SASLHandshakeRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.SASLHandshakeResponse)
	switch {
	case cn.s.cfg.Users == nil:
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp, nil
	case cn.auth.mech != "" || cn.auth.user != nil:
		resp.ErrorCode = kerr.IllegalSaslState.Code
		cn.auth.close = true
		return resp, nil
	}
	resp.SupportedMechanisms = mechanisms
	if !slices.Contains(mechanisms, r.Mechanism) {
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		cn.auth.close = true
		return resp, nil
	}
	cn.auth.mech = r.Mechanism
	cn.auth.raw = r.Version == 0
	return resp, nil
}

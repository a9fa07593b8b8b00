package handlers

// SaslAuthenticate: v0-2
//
// Behaviour: the SASL exchange itself runs in the connection's
// authenticator (wire/server sasl.go). A SaslAuthenticate that reaches the
// handlers — on a PLAINTEXT or SSL listener, or on an authenticated
// connection — is answered as KafkaApis.handleSaslAuthenticateRequest
// does: ILLEGAL_SASL_STATE, "SaslAuthenticate request received after
// successful authentication".
//
// Version notes: v1 session_lifetime_ms (KIP-368); v2 flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(36, 0, 2, handleSaslAuthenticate) }

func handleSaslAuthenticate(_ *Broker, _ *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	resp := kreq.(*kmsg.SASLAuthenticateRequest).ResponseKind().(*kmsg.SASLAuthenticateResponse)
	resp.ErrorCode = kerr.IllegalSaslState.Code
	msg := "SaslAuthenticate request received after successful authentication"
	resp.ErrorMessage = &msg
	return wire.Now(wire.Response{Msg: resp})
}

package handlers

// SaslHandshake: v0-1
//
// Behaviour: on a SASL listener the connection's authenticator (wire/server
// sasl.go) answers SaslHandshake itself until the connection has
// authenticated, and re-authentication (KIP-368) too. A SaslHandshake that
// reaches the handlers — on a PLAINTEXT or SSL listener, or after
// authentication without a re-authentication — is answered as Kafka's
// KafkaApis.handleSaslHandshakeRequest does: ILLEGAL_SASL_STATE, no
// mechanisms.
//
// Version notes: v1 (KIP-152) means SaslAuthenticate requests carry the tokens.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(17, 0, 1, handleSaslHandshake) }

func handleSaslHandshake(_ *Broker, _ *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	resp := kreq.(*kmsg.SASLHandshakeRequest).ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.ErrorCode = kerr.IllegalSaslState.Code
	return wire.Now(wire.Response{Msg: resp})
}

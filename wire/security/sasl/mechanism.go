// Package sasl is the broker side of Kafka's SASL authentication
// (KIP-43, KIP-84, KIP-152): the mechanisms Gregor serves (PLAIN with
// users from the listener's JAAS config, SCRAM-SHA-256 and SCRAM-SHA-512
// with credentials kept in /config/users), the JAAS option parser, the
// SCRAM credential format of Kafka's ScramCredentialUtils and the
// credential cache every broker keeps current. The connection state
// machine that drives a Session lives in wire/server (sasl.go).
package sasl

import (
	"errors"
	"fmt"
	"strings"
)

// Mechanism names, as clients send them in SaslHandshake and
// sasl.enabled.mechanisms lists them.
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
	GSSAPI      = "GSSAPI"
	OAuthBearer = "OAUTHBEARER"
)

// Supported are the mechanisms Gregor can serve.
var Supported = []string{Plain, ScramSHA256, ScramSHA512}

// IsSupported reports whether Gregor serves mechanism m.
func IsSupported(m string) bool {
	for _, s := range Supported {
		if s == m {
			return true
		}
	}
	return false
}

// CheckMechanisms refuses a list of mechanisms Gregor cannot serve, with
// the reason (GSSAPI and OAUTHBEARER are Kafka mechanisms Gregor does not
// build). key names the config key for the message.
func CheckMechanisms(key string, ms []string) error {
	for _, m := range ms {
		switch {
		case IsSupported(m):
		case m == GSSAPI:
			return fmt.Errorf("%s: GSSAPI (Kerberos) is not supported by Gregor; enable %s instead (Kafka's default for sasl.enabled.mechanisms is GSSAPI, so a SASL listener needs sasl.enabled.mechanisms set)", key, strings.Join(Supported, ", "))
		case m == OAuthBearer:
			return fmt.Errorf("%s: OAUTHBEARER is not supported by Gregor; enable %s instead", key, strings.Join(Supported, ", "))
		default:
			return fmt.Errorf("%s: unknown SASL mechanism %q; Gregor serves %s", key, m, strings.Join(Supported, ", "))
		}
	}
	return nil
}

// Session is the server side of one SASL exchange (Java's SaslServer).
// Step takes the client's next token and returns the server's answer;
// done is true once the exchange completed successfully, after which
// AuthorizationID names who authenticated. An error ends the exchange:
// an *AuthError carries a message the client may see, any other error
// is reported to the client only as the mechanism's generic failure
// (it may say whether a user exists).
type Session interface {
	Step(token []byte) (challenge []byte, done bool, err error)
	AuthorizationID() string
}

// AuthError is an authentication failure whose message is sent to the
// client in SaslAuthenticate's error_message (Kafka's
// SaslAuthenticationException), e.g. "Authentication failed: Invalid
// username or password".
type AuthError struct{ Msg string }

func (e *AuthError) Error() string { return e.Msg }

// ClientMessage is the error_message the client gets for a failed
// exchange: an *AuthError's own message, else Kafka's generic "Authentication
// failed during <authentication|re-authentication> due to invalid
// credentials with SASL mechanism <m>".
func ClientMessage(err error, mechanism string, reauth bool) string {
	var ae *AuthError
	if errors.As(err, &ae) {
		return ae.Msg
	}
	what := "authentication"
	if reauth {
		what = "re-authentication"
	}
	return "Authentication failed during " + what + " due to invalid credentials with SASL mechanism " + mechanism
}

// Authenticator makes Sessions for one listener: its enabled mechanisms
// (sasl.enabled.mechanisms, in order) and where each finds its users.
type Authenticator struct {
	// Mechanisms enabled on the listener, in configuration order (the
	// SaslHandshake response lists them).
	Mechanisms []string
	// PlainUsers are the user_<name>="<password>" options of the
	// listener's PlainLoginModule JAAS config (PLAIN only).
	PlainUsers map[string]string
	// Credentials is where SCRAM looks users up (nil = no SCRAM user).
	Credentials *CredentialCache
}

// Enabled reports whether mechanism m is enabled on the listener.
func (a *Authenticator) Enabled(m string) bool {
	for _, x := range a.Mechanisms {
		if x == m {
			return true
		}
	}
	return false
}

// NewSession starts an exchange with mechanism m. Errors: m not enabled.
func (a *Authenticator) NewSession(m string) (Session, error) {
	if !a.Enabled(m) {
		return nil, fmt.Errorf("Unsupported SASL mechanism %s", m)
	}
	switch m {
	case Plain:
		return &plainSession{users: a.PlainUsers}, nil
	case ScramSHA256, ScramSHA512:
		return newScramSession(m, a.Credentials)
	}
	return nil, fmt.Errorf("Unsupported SASL mechanism %s", m)
}

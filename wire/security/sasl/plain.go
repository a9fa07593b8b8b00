package sasl

import (
	"bytes"
	"crypto/subtle"
	"fmt"
)

// plainSession is SASL/PLAIN (RFC 4616) as Kafka's PlainSaslServer
// serves it: one token "authzid NUL authcid NUL password", checked
// against the user_<name> options of the listener's JAAS config.
type plainSession struct {
	users map[string]string
	authz string
}

func (s *plainSession) Step(token []byte) ([]byte, bool, error) {
	parts := bytes.Split(token, []byte{0})
	if len(parts) != 3 {
		return nil, false, fmt.Errorf("Invalid SASL/PLAIN response: expected 3 tokens, got %d", len(parts))
	}
	authz, user, pass := string(parts[0]), string(parts[1]), parts[2]
	if user == "" {
		return nil, false, &AuthError{"Authentication failed: username not specified"}
	}
	if len(pass) == 0 {
		return nil, false, &AuthError{"Authentication failed: password not specified"}
	}
	want, ok := s.users[user]
	// Compared in constant time, and also when the user is unknown, so the
	// answer's timing says nothing about which users exist.
	if eq := subtle.ConstantTimeCompare([]byte(want), pass) == 1; !ok || !eq {
		return nil, false, &AuthError{"Authentication failed: Invalid username or password"}
	}
	if authz != "" && authz != user {
		return nil, false, &AuthError{"Authentication failed: Client requested an authorization id that is different from username"}
	}
	s.authz = user
	return []byte{}, true, nil
}

func (s *plainSession) AuthorizationID() string { return s.authz }

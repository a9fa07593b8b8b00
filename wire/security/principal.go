// Package security holds what Gregor's security model shares across the
// protocol server, the handlers, the inter-broker clients and the tools:
// who a connection is (Principal, Kafka's KafkaPrincipal) and how a listener
// protects its connections (Protocol, listener.security.protocol.map's
// values). The mechanisms live in sub-packages: keystore (TLS key and trust
// material in PKCS12, JKS and PEM), and the TLS, SASL and ACL packages that
// build on them.
package security

import (
	"fmt"
	"strings"
)

// Principal is an authenticated identity, Kafka's KafkaPrincipal: a type
// ("User" for every principal Kafka's default principal builder makes) and
// a name. Its string form "User:alice" is what ACLs, super.users and
// kafka-acls.sh --allow-principal use.
type Principal struct {
	Type string // "User"
	Name string // the SASL authorization id, the mapped TLS distinguished name, or "ANONYMOUS"
}

// UserType is the principal type Kafka's DefaultKafkaPrincipalBuilder
// assigns to every authenticated (and the anonymous) principal.
const UserType = "User"

// Anonymous is the principal of a connection that did not authenticate:
// PLAINTEXT listeners, and SSL listeners without a client certificate
// (ssl.client.auth=none or requested and none sent). Kafka's
// KafkaPrincipal.ANONYMOUS.
var Anonymous = Principal{Type: UserType, Name: "ANONYMOUS"}

// User returns the principal User:name.
func User(name string) Principal { return Principal{Type: UserType, Name: name} }

// String renders the principal as Type:Name.
func (p Principal) String() string { return p.Type + ":" + p.Name }

// IsZero reports whether p is the zero Principal (no identity set; the
// server always sets one, so zero means a caller outside a connection).
func (p Principal) IsZero() bool { return p.Type == "" && p.Name == "" }

// ParsePrincipal parses "Type:Name" (the name may itself contain ':', as a
// distinguished name can). Errors: no ':' or an empty type or name.
func ParsePrincipal(s string) (Principal, error) {
	t, n, ok := strings.Cut(s, ":")
	if !ok || t == "" || n == "" {
		return Principal{}, fmt.Errorf("could not parse principal from `%s` (no colon is found between principal type and principal name)", s)
	}
	return Principal{Type: t, Name: n}, nil
}

// Protocol is a listener's security protocol, one of the values of
// listener.security.protocol.map and security.inter.broker.protocol.
type Protocol string

// The four security protocols Kafka defines (SecurityProtocol).
const (
	Plaintext     Protocol = "PLAINTEXT"
	SSL           Protocol = "SSL"
	SASLPlaintext Protocol = "SASL_PLAINTEXT"
	SASLSSL       Protocol = "SASL_SSL"
)

// ParseProtocol parses a security protocol name (case-insensitive).
// Errors: anything but the four names above.
func ParseProtocol(s string) (Protocol, error) {
	switch p := Protocol(strings.ToUpper(strings.TrimSpace(s))); p {
	case Plaintext, SSL, SASLPlaintext, SASLSSL:
		return p, nil
	}
	return "", fmt.Errorf("no enum constant org.apache.kafka.common.security.auth.SecurityProtocol.%s (expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)", s)
}

// UsesTLS reports whether connections of this protocol are TLS (SSL, SASL_SSL).
func (p Protocol) UsesTLS() bool { return p == SSL || p == SASLSSL }

// UsesSASL reports whether connections of this protocol authenticate with
// SASL (SASL_PLAINTEXT, SASL_SSL).
func (p Protocol) UsesSASL() bool { return p == SASLPlaintext || p == SASLSSL }

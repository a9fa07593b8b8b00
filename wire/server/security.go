package server

import (
	"crypto/tls"

	"gregor/wire/security"
	"gregor/wire/security/sslprincipal"
)

// ListenerSecurity is how one listener protects its connections
// (listener.security.protocol.map and the listener's ssl.* / sasl.*
// settings). Config.Security maps listener names to it; a listener
// without an entry is PLAINTEXT.
type ListenerSecurity struct {
	// Protocol is the listener's security protocol.
	Protocol security.Protocol
	// TLS is the server configuration of an SSL or SASL_SSL listener
	// (tlsconf.Settings.Server: keystore, ssl.client.auth, versions,
	// suites); required for those protocols, unused for the others.
	TLS *tls.Config
	// PrincipalMapper maps an SSL client certificate's distinguished name
	// to the principal name (ssl.principal.mapping.rules); nil = DEFAULT
	// (the DN itself).
	PrincipalMapper *sslprincipal.Mapper
	// SASL configures authentication on SASL_PLAINTEXT and SASL_SSL
	// listeners (sasl.go); on a SASL listener without it every mechanism
	// is unsupported, so no connection authenticates (fails closed).
	SASL *SASLListener
}

// listenerSecurity returns the security of the named listener (PLAINTEXT
// when Config.Security has no entry for it).
func (s *Server) listenerSecurity(name string) ListenerSecurity {
	if ls, ok := s.cfg.Security[name]; ok {
		return ls
	}
	return ListenerSecurity{Protocol: security.Plaintext}
}

package server

import (
	"crypto/tls"
	"fmt"

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
// when Config.Security has no entry for it), with the TLS configuration a
// dynamic keystore update installed (SetListenerTLS) in place of the
// starting one.
func (s *Server) listenerSecurity(name string) ListenerSecurity {
	ls, ok := s.cfg.Security[name]
	if !ok {
		return ListenerSecurity{Protocol: security.Plaintext}
	}
	if v, ok := s.tlsOverrides.Load(name); ok {
		ls.TLS = v.(*tls.Config)
	}
	return ls
}

// SetListenerTLS replaces the TLS server configuration of the named SSL or
// SASL_SSL listener (a dynamic keystore update: listener.name.<l>.ssl.*):
// connections accepted from now on handshake with it; open connections
// keep theirs, as Kafka's reconfigured SslFactory does. Errors: the
// listener does not use TLS.
func (s *Server) SetListenerTLS(name string, cfg *tls.Config) error {
	ls, ok := s.cfg.Security[name]
	if !ok || !ls.Protocol.UsesTLS() || cfg == nil {
		return fmt.Errorf("listener %s does not use TLS", name)
	}
	s.tlsOverrides.Store(name, cfg)
	return nil
}

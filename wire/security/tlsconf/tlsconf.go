// Package tlsconf turns Kafka's ssl.* settings into crypto/tls
// configurations, for both ends: a broker listener (Server) and a client —
// the broker's own inter-broker connections, the admin tools, the tests
// (Client). The same keys mean the same on both ends, as in Kafka's
// SslConfigs / DefaultSslEngineFactory.
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"gregor/wire/security/keystore"
)

// Settings are the ssl.* settings of one listener or one client.
type Settings struct {
	KeyStore   keystore.KeyStore   // ssl.keystore.*, ssl.key.password
	TrustStore keystore.TrustStore // ssl.truststore.*
	// ClientAuth is ssl.client.auth: "none" (default), "requested" or
	// "required". Server only.
	ClientAuth string
	// Protocol is ssl.protocol (Kafka's default TLSv1.3): with
	// EnabledProtocols empty it caps the versions offered.
	Protocol string
	// EnabledProtocols is ssl.enabled.protocols (Kafka's default
	// TLSv1.2,TLSv1.3); TLSv1 and TLSv1.1 are accepted as names.
	EnabledProtocols []string
	// CipherSuites is ssl.cipher.suites: IANA names (Java uses the same
	// ones). They restrict TLS 1.2 and below; Go always offers its three
	// TLS 1.3 suites and does not let them be chosen, so TLS 1.3 names are
	// accepted and change nothing. Empty = Go's defaults.
	CipherSuites []string
	// EndpointIdentification is ssl.endpoint.identification.algorithm:
	// "https" (Kafka's default since 2.0) verifies the server's host name
	// against its certificate; "" verifies the chain only. Client only.
	EndpointIdentification string
}

// Keys are the ssl.* keys Settings reads, for callers that must refuse the
// keys they do not know.
var Keys = []string{
	"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
	"ssl.keystore.certificate.chain", "ssl.keystore.key",
	"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.certificates",
	"ssl.client.auth", "ssl.protocol", "ssl.enabled.protocols", "ssl.cipher.suites",
	"ssl.endpoint.identification.algorithm",
}

// FromProperties reads Settings from ssl.* keys through get (which
// returns a key's value and whether it is set); a broker passes a getter
// that applies the listener.name.<listener>. prefix first. Errors: a bad
// ssl.client.auth or keystore type.
func FromProperties(get func(key string) (string, bool)) (Settings, error) {
	v := func(k string) string { s, _ := get(k); return strings.TrimSpace(s) }
	s := Settings{
		KeyStore: keystore.KeyStore{
			Type: v("ssl.keystore.type"), Location: v("ssl.keystore.location"), Password: v("ssl.keystore.password"),
			KeyPassword: v("ssl.key.password"), CertificateChain: v("ssl.keystore.certificate.chain"), Key: v("ssl.keystore.key"),
		},
		TrustStore: keystore.TrustStore{
			Type: v("ssl.truststore.type"), Location: v("ssl.truststore.location"), Password: v("ssl.truststore.password"),
			Certificates: v("ssl.truststore.certificates"),
		},
		ClientAuth:       strings.ToLower(v("ssl.client.auth")),
		Protocol:         v("ssl.protocol"),
		EnabledProtocols: list(v("ssl.enabled.protocols")),
		CipherSuites:     list(v("ssl.cipher.suites")),
	}
	if e, ok := get("ssl.endpoint.identification.algorithm"); ok {
		s.EndpointIdentification = strings.TrimSpace(e)
	} else {
		s.EndpointIdentification = "https"
	}
	switch s.ClientAuth {
	case "", "none", "requested", "required":
	default:
		return Settings{}, fmt.Errorf("invalid value %s for configuration ssl.client.auth: expected none, requested or required", s.ClientAuth)
	}
	if _, err := keystore.NormalizeType(s.KeyStore.Type); err != nil {
		return Settings{}, fmt.Errorf("ssl.keystore.type: %w", err)
	}
	if _, err := keystore.NormalizeType(s.TrustStore.Type); err != nil {
		return Settings{}, fmt.Errorf("ssl.truststore.type: %w", err)
	}
	switch strings.ToLower(s.EndpointIdentification) {
	case "", "https":
	default:
		return Settings{}, fmt.Errorf("invalid value %s for configuration ssl.endpoint.identification.algorithm: expected https or empty", s.EndpointIdentification)
	}
	return s, nil
}

func list(s string) []string {
	var out []string
	for _, it := range strings.Split(s, ",") {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	return out
}

// Server builds a listener's TLS configuration. It needs a keystore.
// ssl.client.auth=required or requested verifies client certificates
// against the truststore (required refuses a client without one).
func (s Settings) Server() (*tls.Config, error) {
	if !s.KeyStore.IsSet() {
		return nil, errors.New("an SSL listener needs a keystore: set ssl.keystore.location (or ssl.keystore.key and ssl.keystore.certificate.chain with ssl.keystore.type=PEM)")
	}
	cert, err := s.KeyStore.Load()
	if err != nil {
		return nil, err
	}
	c, err := s.base()
	if err != nil {
		return nil, err
	}
	c.Certificates = []tls.Certificate{cert}
	switch s.ClientAuth {
	case "required", "requested":
		if !s.TrustStore.IsSet() {
			return nil, fmt.Errorf("ssl.client.auth=%s needs a truststore (ssl.truststore.location or ssl.truststore.certificates) to verify client certificates", s.ClientAuth)
		}
		pool, _, err := s.TrustStore.Load()
		if err != nil {
			return nil, err
		}
		c.ClientCAs = pool
		c.ClientAuth = tls.VerifyClientCertIfGiven
		if s.ClientAuth == "required" {
			c.ClientAuth = tls.RequireAndVerifyClientCert
		}
	}
	return c, nil
}

// Client builds a client's TLS configuration: the truststore verifies the
// server (none set = the system roots, as Java's default truststore), the
// keystore, if any, is the client certificate (mTLS). ServerName is left
// for the dialer to set from the address (kgo does).
func (s Settings) Client() (*tls.Config, error) {
	c, err := s.base()
	if err != nil {
		return nil, err
	}
	if s.KeyStore.IsSet() {
		cert, err := s.KeyStore.Load()
		if err != nil {
			return nil, err
		}
		c.Certificates = []tls.Certificate{cert}
	}
	var roots *x509.CertPool
	if s.TrustStore.IsSet() {
		if roots, _, err = s.TrustStore.Load(); err != nil {
			return nil, err
		}
		c.RootCAs = roots
	}
	if s.EndpointIdentification == "" {
		// Kafka with ssl.endpoint.identification.algorithm="" still
		// verifies the chain, only not the host name: crypto/tls can skip
		// both or neither, so the chain is verified here.
		c.InsecureSkipVerify = true
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("server sent no certificate")
			}
			opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
			for _, ic := range cs.PeerCertificates[1:] {
				opts.Intermediates.AddCert(ic)
			}
			_, err := cs.PeerCertificates[0].Verify(opts)
			return err
		}
	}
	return c, nil
}

// base is what both ends share: versions and cipher suites.
func (s Settings) base() (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13}
	protos := s.EnabledProtocols
	if len(protos) == 0 && s.Protocol != "" {
		protos = []string{s.Protocol}
		if v, err := version(s.Protocol); err == nil && v == tls.VersionTLS13 {
			protos = []string{"TLSv1.2", "TLSv1.3"} // ssl.protocol=TLSv1.3 (the default) also allows 1.2, as Java's "TLSv1.3" context does
		}
	}
	if len(protos) > 0 {
		c.MinVersion, c.MaxVersion = tls.VersionTLS13, tls.VersionTLS10
		for _, p := range protos {
			v, err := version(p)
			if err != nil {
				return nil, err
			}
			c.MinVersion, c.MaxVersion = min(c.MinVersion, v), max(c.MaxVersion, v)
		}
	}
	if len(s.CipherSuites) > 0 {
		ids, err := cipherSuites(s.CipherSuites)
		if err != nil {
			return nil, err
		}
		c.CipherSuites = ids
	}
	return c, nil
}

func version(p string) (uint16, error) {
	switch strings.ToUpper(strings.TrimSpace(p)) {
	case "TLSV1", "TLSV1.0":
		return tls.VersionTLS10, nil
	case "TLSV1.1":
		return tls.VersionTLS11, nil
	case "TLSV1.2", "TLS":
		return tls.VersionTLS12, nil
	case "TLSV1.3":
		return tls.VersionTLS13, nil
	}
	return 0, fmt.Errorf("ssl.enabled.protocols / ssl.protocol: %q is not a TLS protocol version (TLSv1.2, TLSv1.3)", p)
}

// cipherSuites maps IANA names to Go's suite ids. TLS 1.3 suites (always
// on in Go) are accepted by name; an unknown or insecure name is refused
// rather than silently left out.
func cipherSuites(names []string) ([]uint16, error) {
	byName := map[string]uint16{}
	for _, cs := range tls.CipherSuites() {
		byName[cs.Name] = cs.ID
	}
	var ids []uint16
	for _, n := range names {
		n = strings.ToUpper(strings.TrimSpace(n))
		switch n {
		case "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256":
			continue // TLS 1.3: Go enables all three and does not let them be chosen
		}
		id, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("ssl.cipher.suites: %q is not a cipher suite this broker offers (see Go's crypto/tls CipherSuites)", n)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

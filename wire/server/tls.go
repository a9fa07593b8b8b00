package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"go.uber.org/zap"

	"gregor/config"
	"gregor/wire/security"
	"gregor/wire/security/sslprincipal"
)

// DefaultHandshakeTimeout bounds a TLS handshake when Config.HandshakeTimeout
// is zero: a client that connects and stalls is dropped after it.
const DefaultHandshakeTimeout = 10 * time.Second

// SecurityFromBroker builds every listener's ListenerSecurity from a
// broker config: its protocol (listener.security.protocol.map), and for
// SSL and SASL_SSL listeners the TLS server configuration from the
// listener's ssl.* settings (listener.name.<listener>.ssl.* over ssl.*,
// config.Broker.ListenerSSL) with ssl.principal.mapping.rules. Errors: a
// TLS listener whose keystore or truststore cannot be loaded, named.
func SecurityFromBroker(b *config.Broker) (map[string]ListenerSecurity, error) {
	out := make(map[string]ListenerSecurity, len(b.Listeners))
	for _, l := range b.Listeners {
		ls := ListenerSecurity{Protocol: b.ListenerProtocol(l.Name), PrincipalMapper: b.Security.PrincipalMapper}
		if ls.Protocol.UsesTLS() {
			st, err := b.ListenerSSL(l.Name)
			if err != nil {
				return nil, err
			}
			if ls.TLS, err = st.Server(); err != nil {
				return nil, fmt.Errorf("listener %s (%s): %w", l.Name, ls.Protocol, err)
			}
		}
		out[l.Name] = ls
	}
	return out, nil
}

// wrapTLS returns the connection the reader and writer use: a TLS server
// connection on SSL and SASL_SSL listeners (no I/O yet: the handshake runs
// on the reader goroutine, handshake), nc itself otherwise.
func wrapTLS(nc net.Conn, ls ListenerSecurity) net.Conn {
	if ls.Protocol.UsesTLS() && ls.TLS != nil {
		return tls.Server(nc, ls.TLS)
	}
	return nc
}

// handshake runs the TLS handshake of a TLS listener's connection on the
// reader goroutine, bounded by Config.HandshakeTimeout and cancelled by
// the server's close, and, on an SSL listener, makes the principal from
// the client certificate: User:<mapped DN>, or ANONYMOUS without one
// (Kafka's DefaultKafkaPrincipalBuilder). On SASL_SSL the principal is
// SASL's. false: the connection is to be closed (the reason was logged
// once, at info: a plaintext client on a TLS port is a client
// misconfiguration, not a broker problem).
func (c *conn) handshake() bool {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return true
	}
	timeout := c.s.cfg.HandshakeTimeout
	if timeout <= 0 {
		timeout = DefaultHandshakeTimeout
	}
	ctx, cancel := context.WithTimeout(c.ctx, timeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		c.s.Stats.TLSHandshakeFailures.Add(1)
		if c.ctx.Err() == nil {
			c.log.Info("closing connection: TLS handshake failed", zap.String("reason", handshakeReason(err)), zap.Error(err))
		}
		return false
	}
	if c.protocol != security.SSL {
		return true
	}
	certs := tc.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return true // ssl.client.auth=none or requested without a certificate: ANONYMOUS
	}
	dn, err := sslprincipal.DN(certs[0])
	if err == nil {
		name := dn
		if m := c.s.listenerSecurity(c.listener).PrincipalMapper; m != nil {
			name, err = m.Name(dn)
		}
		if err == nil {
			c.principal = security.User(name)
			c.log.Debug("TLS client authenticated", zap.Stringer("principal", c.principal))
			return true
		}
	}
	c.log.Info("closing connection: no principal for the client certificate", zap.String("dn", dn), zap.Error(err))
	return false
}

// handshakeReason names the usual causes of a failed handshake.
func handshakeReason(err error) string {
	var rh tls.RecordHeaderError
	switch {
	case errors.As(err, &rh):
		return "the client does not speak TLS (a PLAINTEXT client on an SSL listener?)"
	case errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "timeout"):
		return "handshake not finished in time"
	case errors.Is(err, io.EOF):
		return "the client closed the connection during the handshake"
	case errors.As(err, new(*tls.CertificateVerificationError)):
		return "the client certificate failed verification (expired, or not signed by a CA in ssl.truststore)"
	case isRemoteAlert(err):
		// A client that does not trust the broker's certificate (its CA
		// unknown to the client, or the certificate expired) says so with
		// an alert; crypto/tls reports it as a "remote error".
		return "the client refused the handshake (does it trust the broker's certificate, and is that certificate valid?)"
	}
	return "TLS error"
}

// isRemoteAlert reports whether err is a TLS alert the peer sent.
func isRemoteAlert(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "remote error"
}

// plaintextGotTLS closes a plaintext listener's connection whose first
// bytes are a TLS ClientHello (an SSL client on a PLAINTEXT port), logged
// at info; it reports whether it did. It is asked only of a frame size
// that is out of bounds anyway (a ClientHello reads as ~369 MB).
func (c *conn) plaintextGotTLS(size [4]byte) bool {
	if _, isTLS := c.nc.(*tls.Conn); isTLS || !looksLikeTLS(size) {
		return false
	}
	c.log.Info("closing connection: a TLS handshake on a " + string(c.protocol) + " listener (an SSL client on a plaintext port?)")
	c.abort()
	return true
}

// closeRaw closes the TCP connection under a TLS one without sending
// close_notify: the alert could wait on a writer stuck on a full socket,
// and abort must never block.
func closeRaw(nc net.Conn) error {
	if tc, ok := nc.(*tls.Conn); ok {
		return tc.NetConn().Close()
	}
	return nc.Close()
}

// looksLikeTLS reports whether a frame's size prefix is the start of a TLS
// ClientHello record (content type 22, major version 3): a TLS client on a
// PLAINTEXT listener.
func looksLikeTLS(size [4]byte) bool { return size[0] == 0x16 && size[1] == 0x03 && size[2] <= 0x04 }

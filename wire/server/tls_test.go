package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/config"
	"gregor/wire/security"
	"gregor/wire/security/keystore/keystoretest"
	"gregor/wire/security/sslprincipal"
	"gregor/wire/security/tlsconf"
)

// tlsEnv is a server with a PLAINTEXT listener (addrs[0]) and an SSL one
// (addrs[1]) whose client auth is clientAuth.
type tlsEnv struct {
	*testEnv
	ssl  string // the SSL listener's address
	ca   *keystoretest.CA
	pool *x509.CertPool
}

func startTLSServer(t *testing.T, clientAuth, rules string) *tlsEnv {
	t.Helper()
	ca := keystoretest.NewCA(t, "test-ca")
	srvCert := ca.Server(t, "broker")
	st := tlsconf.Settings{ClientAuth: clientAuth}
	st.KeyStore.Type, st.KeyStore.CertificateChain, st.KeyStore.Key = "PEM", srvCert.CertPEM(), srvCert.KeyPEM()
	st.TrustStore.Type, st.TrustStore.Certificates = "PEM", ca.CertPEM()
	tc, err := st.Server()
	if err != nil {
		t.Fatal(err)
	}
	m, err := sslprincipal.Parse(rules)
	if err != nil {
		t.Fatal(err)
	}
	e := startServer(t, func(c *Config) {
		c.Listeners = append(c.Listeners, config.Listener{Name: "SSL", Host: "127.0.0.1", Port: 0})
		c.Security = map[string]ListenerSecurity{"SSL": {Protocol: security.SSL, TLS: tc, PrincipalMapper: m}}
		c.HandshakeTimeout = 2 * time.Second
	})
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return &tlsEnv{testEnv: e, ssl: e.srv.Addrs()[1].String(), ca: ca, pool: pool}
}

// dialTLS is a raw protocol client over TLS to the SSL listener, with a
// client certificate if cert is not nil.
func (e *tlsEnv) dialTLS(t *testing.T, cert *keystoretest.Leaf) *rawClient {
	t.Helper()
	cfg := &tls.Config{RootCAs: e.pool, ServerName: "127.0.0.1"}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{{Certificate: [][]byte{cert.Cert.Raw}, PrivateKey: cert.Key}}
	}
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", e.ssl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawClient{t: t, c: c, fmtr: kmsg.NewRequestFormatter(kmsg.FormatterClientID("tls-test"))}
}

func who(t *testing.T, c *rawClient) string {
	t.Helper()
	return *c.roundTrip(metadataReq(9)).(*kmsg.MetadataResponse).ClusterID
}

// A plaintext client on the TLS port and a TLS client on the plaintext
// port are closed, once logged at info; the other listener and the
// connections already open are not disturbed.
func TestTLSWrongProtocolClosesOnlyThatConnection(t *testing.T) {
	e := startTLSServer(t, "none", "DEFAULT")
	good := e.dialTLS(t, nil)
	plain := dialRaw(t, e.addr)
	if got := who(t, good); got != "User:ANONYMOUS SSL" {
		t.Errorf("TLS without a certificate: %q", got)
	}

	wrong := dialRaw(t, e.ssl) // plaintext to the TLS port
	wrong.send(metadataReq(9))
	wrong.expectClosed()
	waitFor(t, "handshake failure counted", func() bool { return e.srv.Stats.TLSHandshakeFailures.Load() == 1 })
	if !e.logged("TLS handshake failed") {
		t.Error("the failed handshake was not logged")
	}

	// TLS to the plaintext port: the ClientHello is not a Kafka frame.
	c, err := net.DialTimeout("tcp", e.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tc := tls.Client(c, &tls.Config{RootCAs: e.pool, ServerName: "127.0.0.1"})
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tc.Handshake(); err == nil {
		t.Fatal("TLS handshake with the plaintext listener succeeded")
	}
	waitFor(t, "TLS on plaintext logged", func() bool { return e.logged("a TLS handshake on a PLAINTEXT listener") })

	if got := who(t, good); got != "User:ANONYMOUS SSL" {
		t.Errorf("TLS connection after the others: %q", got)
	}
	if got := who(t, plain); got != "User:ANONYMOUS PLAINTEXT" {
		t.Errorf("plaintext connection after the others: %q", got)
	}
}

// mTLS: the client certificate's DN, mapped by the rules, is rc.Principal.
func TestTLSClientCertificatePrincipal(t *testing.T) {
	e := startTLSServer(t, "requested", `RULE:^CN=([^,]*),OU=ServiceUsers.*$/$1/L,DEFAULT`)
	alice := e.ca.Client(t, pkix.Name{CommonName: "Alice", OrganizationalUnit: []string{"ServiceUsers"}, Organization: []string{"Gregor tests"}})
	if got := who(t, e.dialTLS(t, alice)); got != "User:alice SSL" {
		t.Errorf("mapped principal %q", got)
	}
	bob := e.ca.Client(t, pkix.Name{CommonName: "Bob, Jr.", Organization: []string{"Other"}})
	if got := who(t, e.dialTLS(t, bob)); got != `User:CN=Bob\, Jr.,O=Other SSL` {
		t.Errorf("DEFAULT principal %q", got)
	}
	// requested: no certificate is ANONYMOUS.
	if got := who(t, e.dialTLS(t, nil)); got != "User:ANONYMOUS SSL" {
		t.Errorf("no certificate: %q", got)
	}
}

// ssl.client.auth=required: a client without a certificate, or with one
// from another CA, does not get in; one with a good certificate does.
func TestTLSClientAuthRequired(t *testing.T) {
	e := startTLSServer(t, "required", "DEFAULT")
	other := keystoretest.NewCA(t, "other-ca").Client(t, pkix.Name{CommonName: "mallory"})
	for name, cert := range map[string]*keystoretest.Leaf{"no certificate": nil, "untrusted certificate": other} {
		cfg := &tls.Config{RootCAs: e.pool, ServerName: "127.0.0.1"}
		if cert != nil {
			cfg.Certificates = []tls.Certificate{{Certificate: [][]byte{cert.Cert.Raw}, PrivateKey: cert.Key}}
		}
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", e.ssl, cfg)
		if err == nil {
			// TLS 1.3: the client learns of the refusal on its first read.
			c.SetDeadline(time.Now().Add(10 * time.Second))
			rc := &rawClient{t: t, c: c, fmtr: kmsg.NewRequestFormatter(kmsg.FormatterClientID("x"))}
			rc.send(metadataReq(9))
			_, _, err = rc.recv(metadataReq(9))
			c.Close()
		}
		if err == nil {
			t.Errorf("%s: got a response", name)
		}
	}
	good := e.ca.Client(t, pkix.Name{CommonName: "carol"})
	if got := who(t, e.dialTLS(t, good)); got != "User:CN=carol SSL" {
		t.Errorf("principal %q", got)
	}
}

// The logged reason names the side that refused: a client certificate
// that fails verification, a client that sends an alert (it does not
// trust the broker's certificate), a non-TLS client, a timeout.
func TestHandshakeReason(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("x: %w", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), "the client certificate failed verification"},
		{&net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")}, "the client refused the handshake"},
		{tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, "the client does not speak TLS"},
		{context.DeadlineExceeded, "handshake not finished in time"},
		{io.EOF, "the client closed the connection"},
		{&net.OpError{Op: "local error", Err: errors.New("tls: bad record MAC")}, "TLS error"},
	} {
		if got := handshakeReason(c.err); !strings.HasPrefix(got, c.want) {
			t.Errorf("handshakeReason(%v) = %q, want %q…", c.err, got, c.want)
		}
	}
}

// A client that connects to the TLS port and sends nothing is dropped
// after the handshake timeout, and holds no goroutine after.
func TestTLSStalledHandshakeIsDropped(t *testing.T) {
	e := startTLSServer(t, "none", "DEFAULT")
	c := dialRaw(t, e.ssl)
	start := time.Now()
	c.expectClosed()
	if d := time.Since(start); d < time.Second {
		t.Errorf("closed after %v, before the 2 s handshake timeout", d)
	}
	waitFor(t, "the timeout logged", func() bool {
		for _, l := range e.logs.All() {
			if r, _ := l.ContextMap()["reason"].(string); strings.Contains(r, "in time") {
				return true
			}
		}
		return false
	})
}

// Fetch over TLS goes through the copy path (pread + TLS write): the
// records read back are the file's bytes.
func TestTLSFetchCopyPath(t *testing.T) {
	e := startTLSServer(t, "none", "DEFAULT")
	c := e.dialTLS(t, nil)
	req := fetchReq(11, [][2]int64{{4096, 1 << 20}, {7, 70000}})
	resp := c.roundTrip(req).(*kmsg.FetchResponse)
	if err := checkFetch(e.testEnv, req, resp); err != nil {
		t.Fatal(err)
	}
}

// benchPipelineTLS is benchPipeline over the SSL listener of a TLS server.
func benchPipelineTLS(b *testing.B, req kmsg.Request) {
	ca := keystoretest.NewCA(b, "bench-ca")
	srvCert := ca.Server(b, "broker")
	st := tlsconf.Settings{}
	st.KeyStore.Type, st.KeyStore.CertificateChain, st.KeyStore.Key = "PEM", srvCert.CertPEM(), srvCert.KeyPEM()
	tc, err := st.Server()
	if err != nil {
		b.Fatal(err)
	}
	e := startServer(b, func(c *Config) {
		c.Listeners = []config.Listener{{Name: "SSL", Host: "127.0.0.1", Port: 0}}
		c.Security = map[string]ListenerSecurity{"SSL": {Protocol: security.SSL, TLS: tc}}
	})
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	c, err := tls.Dial("tcp", e.addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchConn(b, &rawClient{t: b, c: c, fmtr: kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench"))}, req)
}

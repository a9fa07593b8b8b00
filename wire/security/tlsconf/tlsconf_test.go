package tlsconf_test

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"io"
	"strings"
	"testing"

	"gregor/wire/security/keystore/keystoretest"
	"gregor/wire/security/tlsconf"
)

func props(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// serve accepts one connection on a TLS listener, completes the
// handshake and reports the client certificate's subject ("" = none).
func serve(t *testing.T, cfg *tls.Config) (addr string, subject chan string) {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	subject = make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			subject <- "accept: " + err.Error()
			return
		}
		defer c.Close()
		tc := c.(*tls.Conn)
		if err := tc.Handshake(); err != nil {
			subject <- "handshake: " + err.Error()
			return
		}
		if pc := tc.ConnectionState().PeerCertificates; len(pc) > 0 {
			subject <- pc[0].Subject.String()
		} else {
			subject <- ""
		}
	}()
	return ln.Addr().String(), subject
}

func dial(addr, serverName string, cfg *tls.Config) error {
	cfg = cfg.Clone()
	cfg.ServerName = serverName
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	// TLS 1.3 reports a refused client certificate on the first read.
	c.Write([]byte("x"))
	_, err = c.Read(make([]byte, 1))
	if err == io.EOF {
		err = nil
	}
	return err
}

func TestServerAndClient(t *testing.T) {
	dir := t.TempDir()
	ca := keystoretest.NewCA(t, "ca")
	other := keystoretest.NewCA(t, "other-ca")
	srv := ca.Server(t, "broker")
	alice := ca.Client(t, pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}})
	ks := srv.WritePKCS12(t, dir, "server.p12", "pw")
	ts := ca.WriteJKSTrust(t, dir, "trust.jks", "pw")
	serverProps := []string{"ssl.keystore.type", "PKCS12", "ssl.keystore.location", ks, "ssl.keystore.password", "pw",
		"ssl.truststore.location", ts, "ssl.truststore.password", "pw"}

	settings, err := tlsconf.FromProperties(props(append(serverProps, "ssl.client.auth", "required")...))
	if err != nil {
		t.Fatal(err)
	}
	required, err := settings.Server()
	if err != nil {
		t.Fatal(err)
	}
	clientProps := []string{"ssl.truststore.type", "PEM", "ssl.truststore.location", ca.WritePEMTrust(t, dir, "ca.pem")}
	withCert := append(clientProps, "ssl.keystore.type", "PEM", "ssl.keystore.key", alice.KeyPEM(), "ssl.keystore.certificate.chain", alice.CertPEM())

	client := func(kv ...string) *tls.Config {
		s, err := tlsconf.FromProperties(props(kv...))
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.Client()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// mTLS: the server sees alice's subject.
	addr, subj := serve(t, required)
	if err := dial(addr, "127.0.0.1", client(withCert...)); err != nil {
		t.Fatalf("mTLS dial: %v", err)
	}
	if got := <-subj; got != "CN=alice,OU=eng" {
		t.Fatalf("server saw %q", got)
	}
	// required: a client without a certificate is refused.
	addr, subj = serve(t, required)
	_ = dial(addr, "127.0.0.1", client(clientProps...))
	if got := <-subj; !strings.HasPrefix(got, "handshake:") {
		t.Fatalf("client without a certificate got through ssl.client.auth=required: %q", got)
	}
	// Host name verification (https, the default) refuses a name the
	// certificate does not carry; "" verifies only the chain.
	none, _ := tlsconf.FromProperties(props(serverProps...))
	plainSrv, err := none.Server()
	if err != nil {
		t.Fatal(err)
	}
	addr, _ = serve(t, plainSrv)
	if err := dial(addr, "wrong.example", client(clientProps...)); err == nil {
		t.Fatal("https endpoint identification accepted a wrong host name")
	}
	addr, _ = serve(t, plainSrv)
	if err := dial(addr, "wrong.example", client(append(clientProps, "ssl.endpoint.identification.algorithm", "")...)); err != nil {
		t.Fatalf("chain-only verification refused a good chain: %v", err)
	}
	addr, _ = serve(t, plainSrv)
	if err := dial(addr, "wrong.example", client("ssl.truststore.type", "PEM", "ssl.truststore.certificates", other.CertPEM(),
		"ssl.endpoint.identification.algorithm", "")); err == nil {
		t.Fatal("chain-only verification accepted a certificate of another CA")
	}
	// TLS 1.2 only, with a chosen suite.
	s12, err := tlsconf.FromProperties(props(append(serverProps, "ssl.enabled.protocols", "TLSv1.2", "ssl.cipher.suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256")...))
	if err != nil {
		t.Fatal(err)
	}
	c12, err := s12.Server()
	if err != nil || c12.MaxVersion != tls.VersionTLS12 || len(c12.CipherSuites) != 1 {
		t.Fatalf("TLSv1.2 config %+v %v", c12, err)
	}
	for _, bad := range [][]string{
		{"ssl.client.auth", "sometimes"},
		{"ssl.enabled.protocols", "SSLv3"},
		{"ssl.cipher.suites", "TLS_NOT_A_SUITE"},
		{"ssl.keystore.type", "BKS"},
	} {
		s, err := tlsconf.FromProperties(props(append(serverProps, bad...)...))
		if err == nil {
			_, err = s.Server()
		}
		if err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: err %v, want one naming %s", bad, err, bad[0])
		}
	}
	if _, err := (tlsconf.Settings{}).Server(); err == nil {
		t.Error("a listener without a keystore was accepted")
	}
}

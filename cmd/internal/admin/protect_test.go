package admin

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"gregor/wire/security/keystore/keystoretest"
	"gregor/wire/security/tlsconf"
)

func writeToken(t *testing.T, tok string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "admin.token")
	if err := os.WriteFile(p, []byte(tok), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// mtls makes a server TLS config requiring client certificates and the
// client properties of a client holding one.
func mtls(t *testing.T) (*tls.Config, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	ca := keystoretest.NewCA(t, "admin-ca")
	srv := ca.Server(t, "broker")
	s, err := tlsconf.FromProperties(func(k string) (string, bool) {
		v, ok := map[string]string{
			"ssl.keystore.location": srv.WritePKCS12(t, dir, "srv.p12", "spw"), "ssl.keystore.password": "spw", "ssl.keystore.type": "PKCS12",
			"ssl.truststore.location": ca.WritePKCS12Trust(t, dir, "trust.p12", "tpw"), "ssl.truststore.password": "tpw", "ssl.truststore.type": "PKCS12",
			"ssl.client.auth": "required",
		}[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := s.Server()
	if err != nil {
		t.Fatal(err)
	}
	cli := ca.Client(t, pkix.Name{CommonName: "operator"})
	return cfg, map[string]string{
		"ssl.truststore.location": ca.WritePKCS12Trust(t, dir, "ctrust.p12", "tpw"), "ssl.truststore.password": "tpw", "ssl.truststore.type": "PKCS12",
		"ssl.keystore.location": cli.WritePKCS12(t, dir, "cli.p12", "cpw"), "ssl.keystore.password": "cpw", "ssl.keystore.type": "PKCS12",
	}
}

// TestStartRefusesUnprotectedExposure: beyond loopback the listener needs
// client certificates or a token; on loopback nothing is needed.
func TestStartRefusesUnprotectedExposure(t *testing.T) {
	certs, _ := mtls(t)
	tok := writeToken(t, "s3cret\n")
	tlsOnly := certs.Clone()
	tlsOnly.ClientAuth = tls.NoClientCert
	for _, tc := range []struct {
		name      string
		o         Options
		wantError bool
	}{
		{"loopback", Options{Addr: "127.0.0.1:0"}, false},
		{"localhost", Options{Addr: "localhost:0"}, false},
		{"0.0.0.0", Options{Addr: "0.0.0.0:0"}, true},
		{"empty host", Options{Addr: ":0"}, true},
		{"TLS without client certs", Options{Addr: ":0", TLS: tlsOnly}, true},
		{"client certs", Options{Addr: "0.0.0.0:0", TLS: certs}, false},
		{"token", Options{Addr: ":0", TokenFile: tok}, false},
	} {
		s, err := Start(tc.o)
		if err == nil {
			s.Close()
		}
		switch {
		case tc.wantError && (err == nil || !strings.Contains(err.Error(), "beyond loopback without protection") || !strings.Contains(err.Error(), "admin.listener.auth.token.file")):
			t.Errorf("%s: Start = %v, want the refusal", tc.name, err)
		case !tc.wantError && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	for _, bad := range []string{filepath.Join(t.TempDir(), "none"), writeToken(t, " \n")} {
		if s, err := Start(Options{Addr: "127.0.0.1:0", TokenFile: bad}); err == nil {
			s.Close()
			t.Errorf("token file %s accepted", bad)
		}
	}
}

// loopbackAddr is 127.0.0.1:<port> of a listener bound to every interface.
func loopbackAddr(t *testing.T, s *Server) string {
	_, port, err := net.SplitHostPort(s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", port)
}

func get(t *testing.T, hc *http.Client, url, auth string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTokenRequired: 401 without the token or with a wrong one (counted
// and logged without what was sent), 200 with it — also through the
// tool's HTTPClient with auth.token.file.
func TestTokenRequired(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	s, err := Start(Options{Addr: "0.0.0.0:0", TokenFile: writeToken(t, "tok-123\n"), Log: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	url := "http://" + loopbackAddr(t, s) + "/actors"
	hc := &http.Client{}
	for _, tc := range []struct {
		auth string
		want int
	}{
		{"", 401}, {"Bearer wrong-guess", 401}, {"Basic dG9rLTEyMw==", 401}, {"Bearer tok-123x", 401},
		{"Bearer tok-123", 200}, {"bearer  tok-123", 200},
	} {
		if code, body := get(t, hc, url, tc.auth); code != tc.want {
			t.Errorf("Authorization %q: %d %s, want %d", tc.auth, code, body, tc.want)
		}
	}
	tool, err := HTTPClient(map[string]string{"auth.token.file": writeToken(t, "tok-123")})
	if err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, tool, url, ""); code != 200 {
		t.Errorf("tool client: %d %s", code, body)
	}
	// Metrics need the token too, and show the refusals by reason.
	_, body := get(t, hc, strings.Replace(url, "/actors", "/metrics", 1), "Bearer tok-123")
	for _, want := range []string{`gregor_admin_auth_failures_total{reason="missing"} 2`, `gregor_admin_auth_failures_total{reason="invalid"} 2`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if n := logs.FilterMessageSnippet("refused").Len(); n != 4 {
		t.Errorf("%d refusal log lines, want 4", n)
	}
	for _, e := range logs.All() {
		for _, f := range e.Context {
			if strings.Contains(f.String, "wrong-guess") || strings.Contains(f.String, "tok-123") {
				t.Errorf("log shows a token: %v", e)
			}
		}
	}
}

// TestClientCertsRequired: an HTTPS admin listener with
// ssl.client.auth=required refuses a client without a certificate (TLS
// error) and serves one with it (the tool's HTTPClient from ssl.* keys).
func TestClientCertsRequired(t *testing.T) {
	cfg, props := mtls(t)
	s, err := Start(Options{Addr: "0.0.0.0:0", TLS: cfg, Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	url := "https://" + loopbackAddr(t, s) + "/actors"
	withCert, err := HTTPClient(props)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, withCert, url, ""); code != 200 {
		t.Fatalf("with a client certificate: %d %s", code, body)
	}
	trustOnly := map[string]string{}
	for k, v := range props {
		if strings.HasPrefix(k, "ssl.truststore.") {
			trustOnly[k] = v
		}
	}
	noCert, err := HTTPClient(trustOnly)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, noCert, url, ""); code != 0 || !strings.Contains(body, "certificate") {
		t.Errorf("without a client certificate: %d %s, want a TLS certificate error", code, body)
	}
	if code, _ := get(t, &http.Client{}, strings.Replace(url, "https", "http", 1), ""); code == 200 {
		t.Errorf("plain HTTP to the TLS listener answered 200")
	}
}

func TestHTTPClientRefusesUnknownKeys(t *testing.T) {
	for _, props := range []map[string]string{{"security.protocol": "SSL"}, {"ssl.client.auth": "required"}, {"auth.token.file": "/nonexistent/token"}} {
		if _, err := HTTPClient(props); err == nil {
			t.Errorf("HTTPClient(%v) accepted", props)
		}
	}
	if hc, err := HTTPClient(nil); hc != nil || err != nil {
		t.Errorf("HTTPClient(nil) = %v, %v", hc, err)
	}
}

package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// The admin listener's protection (admin.listener.ssl.* and
// admin.listener.auth.token.file). "Security is on" is simple: a listener
// bound beyond loopback (0.0.0.0, ::, an empty host, any non-loopback
// address) must require client certificates or a bearer token, or the
// broker refuses to start; on loopback both are optional, and whatever is
// configured is enforced wherever the listener binds.

// readToken reads a token file (key names it in errors: the broker's
// admin.listener.auth.token.file, the tool's auth.token.file): the whole file, with
// surrounding whitespace (a trailing newline) removed. Errors: an
// unreadable or empty file; the token itself is never in an error.
func readToken(key, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("%s %s is empty", key, path)
	}
	return tok, nil
}

// requiresClientCerts reports whether cfg makes every client present a
// verified certificate (admin.listener.ssl.client.auth=required).
func requiresClientCerts(cfg *tls.Config) bool {
	return cfg != nil && cfg.ClientAuth == tls.RequireAndVerifyClientCert
}

// checkExposure refuses an unprotected listener bound beyond loopback.
func checkExposure(addr net.Addr, cfg *tls.Config, token string) error {
	if loopback(addr) || requiresClientCerts(cfg) || token != "" {
		return nil
	}
	return fmt.Errorf("admin.listener %s is reachable beyond loopback without protection: anyone who can connect could kill actors, inject request faults, trace and profile the broker; "+
		"set admin.listener.auth.token.file, or admin.listener.ssl.client.auth=required with admin.listener.ssl.keystore.* and admin.listener.ssl.truststore.*, or bind admin.listener to 127.0.0.1", addr)
}

// tokenAuth makes every request carry "Authorization: Bearer <token>".
// The token is compared in constant time (as SHA-256 digests, so its
// length does not show either). A refused request gets 401 with a
// WWW-Authenticate challenge, is counted in failures{reason} and logged
// with its peer, method and path — never with what it sent.
type tokenAuth struct {
	want     [sha256.Size]byte
	next     http.Handler
	failures *prometheus.CounterVec // gregor_admin_auth_failures_total{reason}
	log      *zap.Logger
}

func newTokenAuth(token string, next http.Handler, reg *prometheus.Registry, log *zap.Logger) *tokenAuth {
	f := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gregor_admin_auth_failures_total",
		Help: "Admin listener requests refused with 401, by reason (missing: no bearer token, invalid: a wrong one)."}, []string{"reason"})
	reg.MustRegister(f)
	return &tokenAuth{want: sha256.Sum256([]byte(token)), next: next, failures: f, log: log}
}

func (a *tokenAuth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	got, ok := bearer(r.Header.Get("Authorization"))
	reason := "missing"
	if ok {
		d := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(d[:], a.want[:]) == 1 {
			a.next.ServeHTTP(w, r)
			return
		}
		reason = "invalid"
	}
	a.failures.WithLabelValues(reason).Inc()
	a.log.Warn("admin listener request refused: bearer token "+reason,
		zap.String("remote", r.RemoteAddr), zap.String("method", r.Method), zap.String("path", r.URL.Path))
	w.Header().Set("WWW-Authenticate", `Bearer realm="gregor-admin"`)
	httpError(w, http.StatusUnauthorized, fmt.Errorf("unauthorized: this admin listener needs Authorization: Bearer <the token of admin.listener.auth.token.file>"))
}

// bearer extracts the token of an "Authorization: Bearer <token>" header
// (the scheme is case-insensitive, RFC 6750).
func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

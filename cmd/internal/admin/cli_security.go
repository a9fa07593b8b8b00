package admin

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"gregor/wire/security/tlsconf"
)

// HTTPClient builds the `gregor admin` tool's HTTP client for a protected
// admin listener from client properties (its --command-config file):
// Kafka's client ssl.* keys (ssl.truststore.* to trust the listener's
// certificate, ssl.keystore.* and ssl.key.password for
// admin.listener.ssl.client.auth=required,
// ssl.endpoint.identification.algorithm, ssl.enabled.protocols…), used for
// https:// URLs, and auth.token.file, a file whose content (trimmed) is
// sent as "Authorization: Bearer <token>". nil/empty props = the default
// client. Errors: a key it does not know (nothing is silently skipped), a
// store that cannot be read, an unreadable or empty token file.
func HTTPClient(props map[string]string) (*http.Client, error) {
	if len(props) == 0 {
		return nil, nil
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if k != "auth.token.file" && (k == "ssl.client.auth" || !slices.Contains(tlsconf.Keys, k)) {
			return nil, fmt.Errorf("unknown admin client property %s (expected ssl.truststore.*, ssl.keystore.*, ssl.key.password, ssl.endpoint.identification.algorithm, ssl.protocol, ssl.enabled.protocols, ssl.cipher.suites or auth.token.file)", k)
		}
	}
	s, err := tlsconf.FromProperties(func(k string) (string, bool) {
		v, ok := props[k]
		return strings.TrimSpace(v), ok
	})
	if err != nil {
		return nil, err
	}
	cfg, err := s.Client()
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	var rt http.RoundTripper = tr
	if path := strings.TrimSpace(props["auth.token.file"]); path != "" {
		tok, err := readToken("auth.token.file", path)
		if err != nil {
			return nil, err
		}
		rt = bearerTransport{token: tok, next: tr}
	}
	return &http.Client{Transport: rt}, nil
}

// bearerTransport adds the admin listener's bearer token to each request.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

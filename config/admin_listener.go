package config

import (
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire/security/tlsconf"
)

// AdminListenerSecurity is how the HTTP admin listener (admin.listener)
// protects itself; Gregor's own keys, the ssl.* ones with Kafka's ssl.*
// meanings (tlsconf). The admin listener refuses to bind beyond loopback
// unless client certificates are required or a token is set.
type AdminListenerSecurity struct {
	// TLS is admin.listener.ssl.*: HTTPS when set (it needs
	// admin.listener.ssl.keystore.location, or .keystore.key and
	// .keystore.certificate.chain); nil = plain HTTP.
	// admin.listener.ssl.client.auth=required makes clients present a
	// certificate signed by admin.listener.ssl.truststore.*.
	TLS *tlsconf.Settings
	// TokenFile is admin.listener.auth.token.file: a file holding the
	// bearer token every request must carry (Authorization: Bearer
	// <token>); "" = no token. It is read when the listener starts.
	TokenFile string
}

// adminListenerPrefix prefixes the admin listener's own ssl.* keys.
const adminListenerPrefix = "admin.listener."

// adminListenerSSLKeys are the ssl.* keys a server end reads (the client
// only ssl.endpoint.identification.algorithm is left out).
func adminListenerSSLKeys() []string {
	var ks []string
	for _, k := range tlsconf.Keys {
		if k != "ssl.endpoint.identification.algorithm" {
			ks = append(ks, k)
		}
	}
	return ks
}

func init() {
	for _, k := range adminListenerSSLKeys() {
		typ := kmsg.ConfigTypeString
		if strings.HasSuffix(k, ".password") || k == "ssl.keystore.key" {
			typ = kmsg.ConfigTypePassword // DescribeConfigs never shows them
		}
		brokerKeys[adminListenerPrefix+k] = nullKey(acceptAny, typ) // resolveAdminListener reads them
	}
	brokerKeys[adminListenerPrefix+"auth.token.file"] = nullKey(func(b *Broker, _, v string) error {
		b.AdminListenerSecurity.TokenFile = v
		return nil
	}, kmsg.ConfigTypeString)
}

// resolveAdminListener reads admin.listener.ssl.*. Errors: an ssl key
// without a keystore (TLS needs one), a bad ssl.client.auth or store type.
func resolveAdminListener(b *Broker) error {
	set := map[string]string{}
	for _, k := range adminListenerSSLKeys() {
		if v := b.Raw[adminListenerPrefix+k]; v != "" {
			set[k] = v
		}
	}
	if len(set) == 0 {
		return nil
	}
	if set["ssl.keystore.location"] == "" && set["ssl.keystore.key"] == "" {
		k := slices.Sorted(maps.Keys(set))[0]
		return invalid(adminListenerPrefix+k, "(set)", "admin.listener TLS needs admin.listener.ssl.keystore.location (or admin.listener.ssl.keystore.key with .certificate.chain)")
	}
	s, err := tlsconf.FromProperties(func(k string) (string, bool) {
		v, ok := set[k]
		return v, ok
	})
	if err != nil {
		return invalid(adminListenerPrefix+"ssl.*", "(set)", "%v", err)
	}
	b.AdminListenerSecurity.TLS = &s
	return nil
}

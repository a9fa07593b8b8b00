package config

import (
	"errors"
	"strings"
	"testing"
)

func TestAdminListenerSecurity(t *testing.T) {
	b, err := Parse(map[string]string{"log.dirs": "/tmp/x", "admin.listener": "0.0.0.0:9644",
		"admin.listener.auth.token.file":       "/etc/gregor/admin.token",
		"admin.listener.ssl.keystore.location": "/etc/gregor/admin.p12", "admin.listener.ssl.keystore.password": "pw",
		"admin.listener.ssl.keystore.type": "PKCS12", "admin.listener.ssl.client.auth": "required",
		"admin.listener.ssl.truststore.location": "/etc/gregor/ca.p12"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sec := b.AdminListenerSecurity
	if sec.TokenFile != "/etc/gregor/admin.token" || sec.TLS == nil || sec.TLS.ClientAuth != "required" ||
		sec.TLS.KeyStore.Location != "/etc/gregor/admin.p12" || sec.TLS.KeyStore.Password != "pw" || sec.TLS.TrustStore.Location != "/etc/gregor/ca.p12" {
		t.Errorf("admin listener security %+v tls %+v", sec, sec.TLS)
	}
	if b, err := Parse(map[string]string{"log.dirs": "/tmp/x", "admin.listener": "127.0.0.1:9644"}, nil); err != nil || b.AdminListenerSecurity.TLS != nil || b.AdminListenerSecurity.TokenFile != "" {
		t.Errorf("unset: %+v %v", b.AdminListenerSecurity, err)
	}
	for kv, want := range map[[2]string]string{
		{"admin.listener.ssl.truststore.location", "/ca.p12"}: "needs admin.listener.ssl.keystore.location",
		{"admin.listener.ssl.client.auth", "sometimes"}:       "ssl.client.auth",
	} {
		props := map[string]string{"log.dirs": "/tmp/x", kv[0]: kv[1]}
		if kv[0] == "admin.listener.ssl.client.auth" {
			props["admin.listener.ssl.keystore.location"] = "/k.p12"
		}
		_, err := Parse(props, nil)
		var ve *ValueError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v, want a ValueError with %q", kv, err, want)
		}
	}
}

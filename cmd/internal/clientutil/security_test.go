package clientutil

import (
	"context"
	"crypto/x509/pkix"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gregor/wire/security"
	"gregor/wire/security/keystore/keystoretest"
)

const (
	plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";`
	scramJAAS = `org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="b\"ob\\pw";`
)

// firstMessage returns the first SASL message a mechanism sends: it
// carries the user name (and, for PLAIN, the password), which shows the
// JAAS options reached the mechanism.
func firstMessage(t *testing.T, props map[string]string) (string, string) {
	t.Helper()
	c, _, err := Security(props)
	if err != nil {
		t.Fatalf("Security(%v): %v", props, err)
	}
	if c.SASL == nil {
		t.Fatalf("no SASL mechanism for %v", props)
	}
	_, msg, err := c.SASL.Authenticate(context.Background(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return c.SASL.Name(), string(msg)
}

func TestSecuritySASL(t *testing.T) {
	for _, tc := range []struct {
		props          map[string]string
		mech, contains string
	}{
		{map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": plainJAAS}, "PLAIN", "\x00alice\x00alice-secret"},
		{map[string]string{"security.protocol": "sasl_plaintext", "sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": scramJAAS}, "SCRAM-SHA-256", "n=bob,"},
		{map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": scramJAAS}, "SCRAM-SHA-512", "n=bob,"},
		// Kafka's login modules both hand username/password to any mechanism.
		{map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": scramJAAS}, "PLAIN", "\x00bob\x00b\"ob\\pw"},
		// Unquoted words, comments, single quotes, a line break inside.
		{map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required /* c */\n username=carol\n password='p w';"}, "PLAIN", "\x00carol\x00p w"},
	} {
		mech, msg := firstMessage(t, tc.props)
		if mech != tc.mech || !strings.Contains(msg, tc.contains) {
			t.Errorf("%v: mechanism %s message %q, want %s containing %q", tc.props, mech, msg, tc.mech, tc.contains)
		}
	}
}

func TestSecurityErrors(t *testing.T) {
	dir := t.TempDir()
	sasl := func(kv ...string) map[string]string {
		m := map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": plainJAAS}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"security.protocol": "TLS"}, "invalid value TLS for configuration security.protocol"},
		{sasl("sasl.mechanism", ""), "Kafka's default, GSSAPI"},
		{sasl("sasl.mechanism", "GSSAPI"), "sasl.mechanism=GSSAPI is not supported"},
		{sasl("sasl.mechanism", "OAUTHBEARER"), "sasl.mechanism=OAUTHBEARER is not supported"},
		{sasl("sasl.mechanism", "SCRAM-SHA-1"), "invalid value SCRAM-SHA-1 for configuration sasl.mechanism"},
		{sasl("sasl.jaas.config", ""), "needs sasl.jaas.config"},
		{sasl("sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="x"`), "JAAS config entry not terminated by semi-colon"},
		{sasl("sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule username="alice";`), "Invalid login module control flag"},
		{sasl("sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username=;`), "Value not specified for key 'username'"},
		{sasl("sasl.jaas.config", plainJAAS+" "+scramJAAS), "contains 2 login modules, should be 1 module"},
		{sasl("sasl.jaas.config", `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;`), "login module com.sun.security.auth.module.Krb5LoginModule is not supported"},
		{sasl("sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice";`), "needs both username and password"},
		{sasl("sasl.jaas.config", `org.apache.kafka.common.security.scram.ScramLoginModule required username="a" password="b" tokenauth="true";`), "tokenauth=true"},
		{sasl("sasl.client.callback.handler.class", "com.example.Handler"), "sasl.client.callback.handler.class is not supported"},
		{map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": plainJAAS, "ssl.truststore.location": filepath.Join(dir, "missing.jks"), "ssl.truststore.password": "pw"}, "missing.jks"},
		{map[string]string{"security.protocol": "SSL", "ssl.truststore.type": "XML"}, "ssl.truststore.type"},
		{map[string]string{"security.protocol": "SSL", "ssl.enabled.protocols": "SSLv3"}, "SSLv3"},
		{map[string]string{"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "ldap"}, "ssl.endpoint.identification.algorithm"},
		{map[string]string{"security.protocol": "SSL", "ssl.keystore.location": filepath.Join(dir, "nokeystore.p12"), "ssl.keystore.password": "pw"}, "nokeystore.p12"},
	} {
		_, _, err := Security(tc.props)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want one containing %q", tc.props, err, tc.want)
			continue
		}
		// Secrets never appear in errors.
		for _, secret := range []string{"alice-secret", "pw\"", `password="x"`} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%v: error %q shows a secret", tc.props, err)
			}
		}
		// Every tool's mapping refuses the same way, before any client exists.
		if _, err := ProducerOptions(tc.props); err == nil {
			t.Errorf("ProducerOptions(%v) accepted", tc.props)
		}
		if _, err := ConsumerOptions(tc.props); err == nil {
			t.Errorf("ConsumerOptions(%v) accepted", tc.props)
		}
	}
}

func TestSecurityTLS(t *testing.T) {
	dir := t.TempDir()
	ca := keystoretest.NewCA(t, "test-ca")
	client := ca.Client(t, pkix.Name{CommonName: "alice"})
	for _, tc := range []struct {
		name    string
		props   map[string]string
		certs   int  // client certificates loaded
		roots   bool // a truststore replaced the system roots
		skipSNI bool // endpoint identification off
	}{
		{"system roots", map[string]string{"security.protocol": "SSL"}, 0, false, false},
		{"jks truststore", map[string]string{"security.protocol": "SSL", "ssl.truststore.location": ca.WriteJKSTrust(t, dir, "trust.jks", "tpw"), "ssl.truststore.password": "tpw"}, 0, true, false},
		{"pkcs12 both", map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": plainJAAS,
			"ssl.truststore.type": "PKCS12", "ssl.truststore.location": ca.WritePKCS12Trust(t, dir, "trust.p12", "tpw"), "ssl.truststore.password": "tpw",
			"ssl.keystore.type": "PKCS12", "ssl.keystore.location": client.WritePKCS12(t, dir, "client.p12", "kpw"), "ssl.keystore.password": "kpw"}, 1, true, false},
		{"jks keystore with key password, no host check", map[string]string{"security.protocol": "SSL",
			"ssl.keystore.location": client.WriteJKS(t, dir, "client.jks", "spw", "keypw"), "ssl.keystore.password": "spw", "ssl.key.password": "keypw",
			"ssl.truststore.type": "PEM", "ssl.truststore.certificates": ca.CertPEM(), "ssl.endpoint.identification.algorithm": ""}, 1, true, true},
		{"inline PEM keystore", map[string]string{"security.protocol": "SSL", "ssl.keystore.type": "PEM",
			"ssl.keystore.certificate.chain": client.CertPEM(), "ssl.keystore.key": client.KeyPEM(), "ssl.enabled.protocols": "TLSv1.3", "ssl.protocol": "TLSv1.3"}, 1, false, false},
	} {
		c, unused, err := Security(tc.props)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !c.Protocol.UsesTLS() || c.TLS == nil {
			t.Errorf("%s: protocol %s TLS %v", tc.name, c.Protocol, c.TLS)
			continue
		}
		if len(c.TLS.Certificates) != tc.certs || (c.TLS.RootCAs != nil) != tc.roots || c.TLS.InsecureSkipVerify != tc.skipSNI {
			t.Errorf("%s: %d certificates, roots %v, skip host check %v", tc.name, len(c.TLS.Certificates), c.TLS.RootCAs != nil, c.TLS.InsecureSkipVerify)
		}
		if len(unused) != 0 {
			t.Errorf("%s: unused %v", tc.name, unused)
		}
		if len(c.Opts()) == 0 {
			t.Errorf("%s: no kgo options", tc.name)
		}
	}
}

func TestSecurityUnusedAndIgnored(t *testing.T) {
	props := map[string]string{"ssl.truststore.location": "/nonexistent", "sasl.mechanism": "PLAIN", "ssl.keymanager.algorithm": "SunX509", "acks": "all"}
	c, unused, err := Security(props)
	if err != nil || c.Protocol != security.Plaintext || len(c.Opts()) != 0 {
		t.Fatalf("PLAINTEXT default: %+v %v", c, err)
	}
	if want := []string{"sasl.mechanism", "ssl.truststore.location"}; !slices.Equal(unused, want) {
		t.Errorf("unused %v, want %v", unused, want)
	}
	o, err := ProducerOptions(props)
	if err != nil {
		t.Fatal(err)
	}
	// Implemented security keys are never "unknown"; JVM-only ones are.
	if !slices.Equal(o.Ignored, []string{"ssl.keymanager.algorithm"}) || !slices.Equal(o.Unused, unused) {
		t.Errorf("ignored %v unused %v", o.Ignored, o.Unused)
	}
	var b strings.Builder
	o.Warn(&b)
	if got := b.String(); strings.Count(got, "WARN") != 3 || !strings.Contains(got, "'ssl.truststore.location' was supplied but isn't used") || strings.Contains(got, "/nonexistent") {
		t.Errorf("warnings:\n%s", got)
	}
	co, err := ConsumerOptions(map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": scramJAAS})
	if err != nil || len(co.Ignored) != 0 || len(co.Unused) != 0 || co.Security.Protocol != security.SASLSSL {
		t.Errorf("consumer: %+v %v", co, err)
	}
}

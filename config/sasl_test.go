package config

import (
	"strings"
	"testing"
	"time"
)

const plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`

func TestSASLConfig(t *testing.T) {
	b, err := Parse(map[string]string{
		"listeners":                      "PLAINTEXT://:9092,SASL_PLAINTEXT://:9093,INTERNAL://:9094",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
		"sasl.enabled.mechanisms":        "SCRAM-SHA-512,PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config":          plainJAAS,
		"listener.name.internal.sasl.enabled.mechanisms":               "SCRAM-SHA-256",
		"listener.name.internal.scram-sha-256.sasl.jaas.config":        `org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="b-secret";`,
		"connections.max.reauth.ms":                                    "60000",
		"listener.name.sasl_plaintext.plain.connections.max.reauth.ms": "1000",
		"listener.name.internal.connections.max.reauth.ms":             "5000",
		"sasl.mechanism.inter.broker.protocol":                         "SCRAM-SHA-256",
		"inter.broker.listener.name":                                   "INTERNAL",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := b.SASL
	if len(s.Listeners) != 2 || s.ConnectionsMaxReauth != time.Minute || s.InterBrokerMechanism != "SCRAM-SHA-256" {
		t.Fatalf("%+v", s)
	}
	ext := s.Listeners["SASL_PLAINTEXT"]
	if strings.Join(ext.Mechanisms, ",") != "SCRAM-SHA-512,PLAIN" || ext.Protocol != "SASL_PLAINTEXT" ||
		ext.PlainUsers["alice"] != "alice-secret" || len(ext.PlainUsers) != 2 ||
		ext.MaxReauth["PLAIN"] != time.Second || ext.MaxReauth["SCRAM-SHA-512"] != time.Minute ||
		ext.Own["PLAIN"] != (SASLCredentials{"admin", "admin-secret"}) {
		t.Fatalf("SASL_PLAINTEXT: %+v", ext)
	}
	in := s.Listeners["INTERNAL"]
	if strings.Join(in.Mechanisms, ",") != "SCRAM-SHA-256" || in.MaxReauth["SCRAM-SHA-256"] != 5*time.Second ||
		in.Own["SCRAM-SHA-256"] != (SASLCredentials{"broker", "b-secret"}) {
		t.Fatalf("INTERNAL: %+v", in)
	}
	// The JAAS config is sensitive in DescribeConfigs.
	for _, e := range b.DescribeBrokerConfigs() {
		if strings.HasSuffix(e.Name, "sasl.jaas.config") && !e.Sensitive {
			t.Fatalf("%s not sensitive", e.Name)
		}
	}
}

func TestSASLConfigGlobalJAASAndDefaults(t *testing.T) {
	b, err := Parse(map[string]string{
		"listeners":               "PLAINTEXT://:9092,SASL_PLAINTEXT://:9093",
		"sasl.enabled.mechanisms": "PLAIN",
		"sasl.jaas.config":        plainJAAS,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := b.SASL.Listeners["SASL_PLAINTEXT"]; l.PlainUsers["admin"] != "admin-secret" || l.MaxReauth["PLAIN"] != 0 {
		t.Fatalf("%+v", l)
	}
	// Without a SASL listener, Kafka's GSSAPI default is harmless.
	b, err = Parse(map[string]string{}, nil)
	if err != nil || len(b.SASL.Listeners) != 0 || b.SASL.EnabledMechanisms[0] != "GSSAPI" {
		t.Fatalf("%+v %v", b.SASL, err)
	}
}

func TestSASLConfigErrors(t *testing.T) {
	base := func(kv map[string]string) map[string]string {
		m := map[string]string{"listeners": "PLAINTEXT://:9092,SASL_PLAINTEXT://:9093"}
		for k, v := range kv {
			m[k] = v
		}
		return m
	}
	for _, c := range []struct {
		kv  map[string]string
		key string
		msg string
	}{
		{map[string]string{}, "sasl.enabled.mechanisms", "GSSAPI (Kerberos) is not supported"},
		{map[string]string{"sasl.enabled.mechanisms": "OAUTHBEARER"}, "sasl.enabled.mechanisms", "OAUTHBEARER is not supported"},
		{map[string]string{"sasl.enabled.mechanisms": "PLAIN"}, "listener.name.sasl_plaintext.plain.sasl.jaas.config", "Could not find a 'KafkaServer'"},
		{map[string]string{"sasl.enabled.mechanisms": "PLAIN", "sasl.jaas.config": "x.Y required"}, "sasl.jaas.config", "not terminated by semi-colon"},
		{map[string]string{"sasl.enabled.mechanisms": "SCRAM-SHA-256", "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": "a.B required; c.D required;"},
			"listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config", "contains 2 login modules, should be 1 module"},
		{map[string]string{"sasl.enabled.mechanisms": "SCRAM-SHA-256", "listener.name.plaintext.sasl.enabled.mechanisms": "PLAIN"},
			"listener.name.plaintext.sasl.enabled.mechanisms", "not a SASL_PLAINTEXT or SASL_SSL listener"},
		{map[string]string{"sasl.enabled.mechanisms": "SCRAM-SHA-256", "listener.name.sasl_plaintext.sasl.enabled.mechanisms": ""},
			"listener.name.sasl_plaintext.sasl.enabled.mechanisms", "no SASL mechanism is enabled"},
		{map[string]string{"sasl.enabled.mechanisms": "SCRAM-SHA-256", "security.inter.broker.protocol": "SASL_PLAINTEXT"},
			"sasl.mechanism.inter.broker.protocol", "must be included in sasl.enabled.mechanisms"},
		{map[string]string{"sasl.enabled.mechanisms": "SCRAM-SHA-256", "connections.max.reauth.ms": "soon"}, "connections.max.reauth.ms", ""},
	} {
		_, err := Parse(base(c.kv), nil)
		ve, ok := err.(*ValueError)
		if !ok || ve.Key != c.key || !strings.Contains(ve.Reason, c.msg) {
			t.Errorf("%v: %v; want key %s, %q", c.kv, err, c.key, c.msg)
		}
		if err != nil && strings.Contains(err.Error(), "admin-secret") {
			t.Errorf("%v: the error shows a password: %v", c.kv, err)
		}
	}
}

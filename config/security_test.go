package config

import (
	"strings"
	"testing"

	"gregor/wire/security"
)

// Every bad listener combination is refused with Kafka's message
// (KafkaConfig.validateValues, listenerListToEndPoints).
func TestListenerValidation(t *testing.T) {
	for _, c := range []struct {
		kv   map[string]string
		key  string
		want string
	}{
		{map[string]string{"listeners": "INTERNAL://:9092"}, "listeners",
			"Error creating broker listeners from 'INTERNAL://:9092': No security protocol defined for listener INTERNAL"},
		{map[string]string{"listeners": "PLAINTEXT://:9092,SSL://:9092"}, "listeners",
			"Each listener must have a different port, listeners: PLAINTEXT://:9092,SSL://:9092"},
		{map[string]string{"listeners": "PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.2:9092"}, "listeners",
			"If you have two listeners on the same port then one needs to be IPv4 and the other IPv6"},
		{map[string]string{"listeners": "PLAINTEXT://:1,PLAINTEXT://:2"}, "listeners",
			"Each listener must have a different name, listeners: PLAINTEXT://:1,PLAINTEXT://:2"},
		{map[string]string{"listeners": "A://:1", "listener.security.protocol.map": "A:TLS"}, "listener.security.protocol.map",
			"Invalid security protocol `TLS` defined in listener.security.protocol.map"},
		{map[string]string{"listeners": "SSL://:9093"}, "security.inter.broker.protocol",
			"inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid options based on currently configured listeners are SSL"},
		{map[string]string{"listeners": "PLAINTEXT://:9092,SSL://:9093", "inter.broker.listener.name": "SSL", "security.inter.broker.protocol": "SSL"},
			"inter.broker.listener.name", "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set."},
		{map[string]string{"listeners": "PLAINTEXT://:9092", "inter.broker.listener.name": "internal"}, "inter.broker.listener.name",
			"Listener with name INTERNAL defined in inter.broker.listener.name not found in listener.security.protocol.map."},
		{map[string]string{"listeners": "PLAINTEXT://:9092", "security.inter.broker.protocol": "TLS"}, "security.inter.broker.protocol",
			"Invalid security protocol `TLS` defined in security.inter.broker.protocol"},
		{map[string]string{"listeners": "PLAINTEXT://:9092,SSL://:9093", "advertised.listeners": "PLAINTEXT://h:9092", "inter.broker.listener.name": "SSL"},
			"inter.broker.listener.name", "inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid options based on currently configured listeners are PLAINTEXT"},
		{map[string]string{"listeners": "PLAINTEXT://:9092", "advertised.listeners": "PLAINTEXT://h:9092,SSL://h:9093"}, "advertised.listeners",
			"advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. Found PLAINTEXT,SSL. The valid options based on the current configuration are PLAINTEXT"},
		{map[string]string{"listeners": "PLAINTEXT://:9092", "advertised.listeners": "PLAINTEXT://0.0.0.0:9092"}, "advertised.listeners",
			"advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address."},
		{map[string]string{"listeners": "PLAINTEXT://:9092,CONTROL://:9093", "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT", "control.plane.listener.name": "control"},
			"listeners", "No security protocol defined for listener CONTROL"},
		{map[string]string{"listeners": "PLAINTEXT://:9092", "control.plane.listener.name": "control"}, "control.plane.listener.name",
			"Listener with CONTROL defined in control.plane.listener.name not found in listener.security.protocol.map."},
		{map[string]string{"listeners": "PLAINTEXT://:9092,SSL://:9093", "advertised.listeners": "PLAINTEXT://h:9092", "control.plane.listener.name": "SSL"},
			"control.plane.listener.name", "control.plane.listener.name must be a listener name defined in advertised.listeners. The valid options based on currently configured listeners are PLAINTEXT"},
		{map[string]string{"listeners": "PLAINTEXT://:9092", "control.plane.listener.name": "PLAINTEXT"}, "control.plane.listener.name",
			"control.plane.listener.name, when defined, should have a different value from the inter broker listener name. Currently they both have the value PLAINTEXT"},
		{map[string]string{"principal.builder.class": "com.example.MyBuilder"}, "principal.builder.class",
			"only org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder (Kafka's default) is supported"},
		{map[string]string{"listeners": "PLAINTEXT://:9092", "ssl.principal.mapping.rules": "RULE:^CN=(.*)$/$1/LU"}, "ssl.principal.mapping.rules",
			"invalid rule"},
		{map[string]string{"listeners": "PLAINTEXT://:9092,SSL://:9093", "listener.name.ssl.ssl.client.auth": "always"}, "",
			"invalid value always for configuration ssl.client.auth"},
		{map[string]string{"listeners": "PLAINTEXT://:9092", "listener.name.external.ssl.keystore.location": "/x"}, "listener.name.external.ssl.keystore.location",
			"listener EXTERNAL is not one of listeners (PLAINTEXT)"},
	} {
		_, err := Parse(c.kv, nil)
		if err == nil {
			t.Errorf("%v: accepted", c.kv)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %q, want it to contain %q", c.kv, err, c.want)
		}
		if ve, ok := err.(*ValueError); c.key != "" && (!ok || ve.Key != c.key) {
			t.Errorf("%v: error %#v does not name key %s", c.kv, err, c.key)
		}
	}
}

// Named listeners of every protocol, custom names through the map, the
// inter-broker and control-plane listeners, and per-listener ssl.* keys.
func TestListenerSecurity(t *testing.T) {
	b, err := Parse(map[string]string{
		"listeners":                                    "EXTERNAL://127.0.0.1:9092,INTERNAL://127.0.0.1:9093,CONTROL://127.0.0.1:9094,SASL_SSL://127.0.0.1:9095",
		"listener.security.protocol.map":               "EXTERNAL:PLAINTEXT, internal:SSL,CONTROL:SSL,SASL_SSL:SASL_SSL",
		"inter.broker.listener.name":                   "internal",
		"control.plane.listener.name":                  "CONTROL",
		"ssl.keystore.location":                        "/all.p12",
		"ssl.client.auth":                              "requested",
		"listener.name.internal.ssl.keystore.location": "/internal.jks",
		"listener.name.internal.ssl.client.auth":       "required",
		"ssl.principal.mapping.rules":                  "RULE:^CN=([^,]*).*$/$1/L,DEFAULT",
		"sasl.enabled.mechanisms":                      "SCRAM-SHA-512",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.Security.InterBrokerListener != "INTERNAL" || b.InterBrokerProtocol() != security.SSL || b.Security.ControlPlaneListener != "CONTROL" {
		t.Errorf("security %+v", b.Security)
	}
	if b.ListenerProtocol("EXTERNAL") != security.Plaintext || b.ListenerProtocol("SASL_SSL") != security.SASLSSL {
		t.Errorf("protocols %v", b.Security.Protocols)
	}
	in, err := b.ListenerSSL("INTERNAL")
	if err != nil || in.KeyStore.Location != "/internal.jks" || in.ClientAuth != "required" {
		t.Errorf("INTERNAL ssl %+v %v", in, err)
	}
	ctl, err := b.ListenerSSL("CONTROL")
	if err != nil || ctl.KeyStore.Location != "/all.p12" || ctl.ClientAuth != "requested" {
		t.Errorf("CONTROL ssl %+v %v", ctl, err)
	}
	if n, err := b.Security.PrincipalMapper.Name("CN=Broker1,OU=x"); err != nil || n != "broker1" {
		t.Errorf("mapper: %q %v", n, err)
	}
	// Defaults: inter-broker on PLAINTEXT, no control plane.
	b, err = Parse(map[string]string{"listeners": "PLAINTEXT://:9092,SSL://:9093"}, nil)
	if err != nil || b.Security.InterBrokerListener != "PLAINTEXT" || b.Security.ControlPlaneListener != "" || b.ListenerProtocol("SSL") != security.SSL {
		t.Errorf("defaults: %+v %v", b.Security, err)
	}
	// security.inter.broker.protocol picks the listener of that name.
	b, err = Parse(map[string]string{"listeners": "PLAINTEXT://:9092,SSL://:9093", "security.inter.broker.protocol": "SSL"}, nil)
	if err != nil || b.Security.InterBrokerListener != "SSL" {
		t.Errorf("security.inter.broker.protocol: %+v %v", b.Security, err)
	}
}

func TestInterBrokerSASL(t *testing.T) {
	props := map[string]string{
		"listeners":                                             "SASL_SSL://:9093",
		"security.inter.broker.protocol":                        "SASL_SSL",
		"sasl.enabled.mechanisms":                               "SCRAM-SHA-256",
		"sasl.mechanism.inter.broker.protocol":                  "SCRAM-SHA-256",
		"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="a \"secret\"";`,
	}
	b, err := Parse(props, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, u, p, err := b.InterBrokerSASL()
	if err != nil || m != "SCRAM-SHA-256" || u != "admin" || p != `a "secret"` {
		t.Errorf("InterBrokerSASL = %q %q %q %v", m, u, p, err)
	}
	delete(props, "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config")
	if b, err = Parse(props, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := b.InterBrokerSASL(); err == nil || !strings.Contains(err.Error(), "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config") {
		t.Errorf("no JAAS config: %v, want an error naming the key", err)
	}
	// Not enabled on the inter-broker listener: Kafka's validation.
	props["sasl.enabled.mechanisms"] = "PLAIN"
	props["listener.name.sasl_ssl.plain.sasl.jaas.config"] = `org.apache.kafka.common.security.plain.PlainLoginModule required user_a="b";`
	if _, err := Parse(props, nil); err == nil || !strings.Contains(err.Error(), "sasl.mechanism.inter.broker.protocol must be included") {
		t.Errorf("inter-broker mechanism not enabled: %v", err)
	}
}

package clientutil

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	ksasl "github.com/twmb/franz-go/pkg/sasl"

	"gregor/wire/security"
	"gregor/wire/security/clientsec"
	"gregor/wire/security/sasl"
	"gregor/wire/security/tlsconf"
)

// Security reads a client's security from Kafka client properties —
// security.protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL; default
// PLAINTEXT), sasl.mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; Kafka's
// default, GSSAPI, is refused like OAUTHBEARER), sasl.jaas.config (one
// PlainLoginModule or ScramLoginModule entry with username and password,
// parsed as Kafka's JaasConfig) and the ssl.* keys of tlsconf
// (ssl.truststore.*, ssl.keystore.*, ssl.key.password, ssl.protocol,
// ssl.enabled.protocols, ssl.cipher.suites,
// ssl.endpoint.identification.algorithm) — and loads the key and trust
// material, so that a bad value or an unreadable store fails here, before
// any connection. unused lists the security keys given that the protocol
// does not use (ssl.* on PLAINTEXT, sasl.* without SASL), for the caller
// to warn about as Kafka's clients log "supplied but are not used".
// Errors name the key, never a password or a JAAS value.
func Security(props map[string]string) (c clientsec.Client, unused []string, err error) {
	get := func(k string) (string, bool) { v, ok := props[k]; return strings.TrimSpace(v), ok }
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if why, ok := refusedSecurityKeys[k]; ok {
			return c, nil, fmt.Errorf("%s is not supported: %s", k, why)
		}
	}
	proto, _ := get("security.protocol")
	if proto == "" {
		proto = string(security.Plaintext)
	}
	c.Protocol = security.Protocol(strings.ToUpper(proto))
	switch c.Protocol {
	case security.Plaintext, security.SSL, security.SASLPlaintext, security.SASLSSL:
	default:
		return clientsec.Client{}, nil, fmt.Errorf("invalid value %s for configuration security.protocol: expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", proto)
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if isSSLKey(k) && !c.Protocol.UsesTLS() || isSASLKey(k) && !c.Protocol.UsesSASL() {
			unused = append(unused, k)
		}
	}
	if c.Protocol.UsesTLS() {
		s, err := tlsconf.FromProperties(func(k string) (string, bool) {
			if k == "ssl.client.auth" { // a broker key; a client has no say
				return "", false
			}
			return get(k)
		})
		if err != nil {
			return clientsec.Client{}, nil, err
		}
		if c.TLS, err = s.Client(); err != nil {
			return clientsec.Client{}, nil, err
		}
	}
	if c.Protocol.UsesSASL() {
		if c.SASL, err = saslMechanism(get); err != nil {
			return clientsec.Client{}, nil, err
		}
	}
	return c, unused, nil
}

// saslMechanism builds the client's SASL mechanism from sasl.mechanism
// and sasl.jaas.config.
func saslMechanism(get func(string) (string, bool)) (ksasl.Mechanism, error) {
	name, _ := get("sasl.mechanism")
	switch strings.ToUpper(name) {
	case "":
		return nil, fmt.Errorf("sasl.mechanism is not set, and Kafka's default, GSSAPI (Kerberos), is not supported: set sasl.mechanism=PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	case "GSSAPI", "OAUTHBEARER":
		return nil, fmt.Errorf("sasl.mechanism=%s is not supported: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", name)
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		name = strings.ToUpper(name)
	default:
		return nil, fmt.Errorf("invalid value %s for configuration sasl.mechanism: expected PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", name)
	}
	jaas, ok := get("sasl.jaas.config")
	if !ok || jaas == "" {
		return nil, fmt.Errorf("sasl.mechanism=%s needs sasl.jaas.config (a JAAS file named by java.security.auth.login.config is not read), e.g. %s required username=\"alice\" password=\"…\";", name, loginModuleFor(name))
	}
	user, pass, err := jaasCredentials(jaas)
	if err != nil {
		return nil, err
	}
	return clientsec.Mechanism(name, user, pass)
}

func loginModuleFor(mechanism string) string {
	if mechanism == "PLAIN" {
		return sasl.PlainLoginModule
	}
	return sasl.ScramLoginModule
}

// jaasCredentials parses a client's sasl.jaas.config as Kafka's
// JaasContext.loadClientContext does — exactly one login module — and
// returns its username and password options. Both Kafka login modules put
// these two options into the client's credentials whatever the mechanism,
// so either module serves either mechanism, as in Kafka. Errors carry
// JaasConfig's parse messages (which name keys, never values).
func jaasCredentials(jaas string) (user, pass string, err error) {
	mods, err := sasl.ParseJAAS(jaas)
	if err != nil {
		return "", "", fmt.Errorf("invalid sasl.jaas.config: %v", err)
	}
	if len(mods) != 1 {
		return "", "", fmt.Errorf("invalid sasl.jaas.config: JAAS config property contains %d login modules, should be 1 module", len(mods))
	}
	m := mods[0]
	switch m.Class {
	case sasl.PlainLoginModule, sasl.ScramLoginModule:
	default:
		return "", "", fmt.Errorf("invalid sasl.jaas.config: login module %s is not supported (use %s or %s)", m.Class, sasl.PlainLoginModule, sasl.ScramLoginModule)
	}
	if v, ok := m.Options["tokenauth"]; ok && strings.EqualFold(v, "true") {
		return "", "", fmt.Errorf("invalid sasl.jaas.config: tokenauth=true (delegation tokens) is not supported")
	}
	user, uok := m.Options["username"]
	pass, pok := m.Options["password"]
	if !uok || !pok {
		return "", "", fmt.Errorf("invalid sasl.jaas.config: %s needs both username and password options", m.Class)
	}
	return user, pass, nil
}

// SecurityKeys are the client security properties Security acts on.
var SecurityKeys = func() []string {
	ks := []string{"security.protocol", "sasl.mechanism", "sasl.jaas.config"}
	for _, k := range tlsconf.Keys {
		if k != "ssl.client.auth" {
			ks = append(ks, k)
		}
	}
	return ks
}()

// refusedSecurityKeys name Java classes or JVM machinery that would change
// how a client authenticates; accepting and skipping them would connect
// differently from what the operator asked, so they are refused.
var refusedSecurityKeys = map[string]string{
	"sasl.client.callback.handler.class": "Java callback handlers cannot be loaded; give the credentials in sasl.jaas.config",
	"sasl.login.class":                   "Java login classes cannot be loaded",
	"sasl.login.callback.handler.class":  "Java callback handlers cannot be loaded",
	"ssl.engine.factory.class":           "Java SSL engine factories cannot be loaded; use the ssl.keystore.* and ssl.truststore.* keys",
	"security.providers":                 "Java security providers cannot be loaded",
}

// isSecurityKey reports whether Security reads k.
func isSecurityKey(k string) bool { return slices.Contains(SecurityKeys, k) }

func isSSLKey(k string) bool  { return strings.HasPrefix(k, "ssl.") && isSecurityKey(k) }
func isSASLKey(k string) bool { return strings.HasPrefix(k, "sasl.") && isSecurityKey(k) }

package config

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire/security"
	"gregor/wire/security/sslprincipal"
	"gregor/wire/security/tlsconf"
)

// Security is what the listener keys resolve to: each listener's protocol,
// the inter-broker and control-plane listeners, and the TLS principal
// mapping. Filled by Parse (resolveSecurity); read it through the Broker
// methods below.
type Security struct {
	// Protocols is listener.security.protocol.map (default: each of the
	// four protocol names to itself), by upper-case listener name.
	Protocols map[string]security.Protocol
	// InterBrokerListener is inter.broker.listener.name, or the listener
	// named after security.inter.broker.protocol (default PLAINTEXT) —
	// Kafka's interBrokerListenerName. It is always one of
	// advertised.listeners.
	InterBrokerListener string
	// ControlPlaneListener is control.plane.listener.name (KIP-291): the
	// listener the controller's requests (LeaderAndIsr, UpdateMetadata,
	// StopReplica) go to. "" = the inter-broker listener.
	ControlPlaneListener string
	// PrincipalMapper is ssl.principal.mapping.rules (default DEFAULT).
	PrincipalMapper *sslprincipal.Mapper
}

// securityKeys are the listener and TLS keys this file applies, added to
// brokerKeys by init. The ssl.* keys are validated per listener in
// resolveSecurity (each SSL listener's settings are built at start).
var securityKeys = map[string]brokerKey{
	"listener.security.protocol.map": checkKey(validateProtocolMap, kmsg.ConfigTypeString,
		"PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"),
	"inter.broker.listener.name":     nullKey(acceptAny, kmsg.ConfigTypeString),
	"security.inter.broker.protocol": checkKey(acceptAny, kmsg.ConfigTypeString, "PLAINTEXT"),
	"control.plane.listener.name":    nullKey(acceptAny, kmsg.ConfigTypeString),
	"ssl.principal.mapping.rules":    checkKey(validateMappingRules, kmsg.ConfigTypeString, sslprincipal.DefaultRules),
}

// sslDefaults are the defaults DescribeConfigs shows for the ssl.* keys
// (Kafka's SslConfigs); the rest are null.
var sslDefaults = map[string]string{
	"ssl.keystore.type": "JKS", "ssl.truststore.type": "JKS", "ssl.client.auth": "none", "ssl.protocol": "TLSv1.3",
	"ssl.enabled.protocols": "TLSv1.2,TLSv1.3", "ssl.endpoint.identification.algorithm": "https",
}

func init() {
	for _, k := range tlsconf.Keys {
		typ := kmsg.ConfigTypeString
		switch {
		case strings.HasSuffix(k, "password") || k == "ssl.keystore.key":
			typ = kmsg.ConfigTypePassword
		case k == "ssl.enabled.protocols" || k == "ssl.cipher.suites":
			typ = kmsg.ConfigTypeList
		}
		if d, ok := sslDefaults[k]; ok {
			securityKeys[k] = checkKey(acceptAny, typ, d)
		} else {
			securityKeys[k] = nullKey(acceptAny, typ)
		}
	}
	for k, bk := range securityKeys {
		brokerKeys[k] = bk
	}
}

// listenerPrefixRE matches a listener-prefixed key (ListenerName.configPrefix:
// "listener.name.<lower-case name>.").
var listenerPrefixRE = regexp.MustCompile(`^listener\.name\.([a-z0-9_]+)\.(ssl\..+)$`)

// isListenerSSLKey reports whether k is listener.name.<listener>.ssl.<key>
// for one of tlsconf.Keys; resolveSecurity validates it.
func isListenerSSLKey(k string) bool {
	m := listenerPrefixRE.FindStringSubmatch(k)
	if m == nil {
		return false
	}
	for _, sk := range tlsconf.Keys {
		if sk == m[2] {
			return true
		}
	}
	return false
}

func validateProtocolMap(_ *Broker, key, v string) error {
	_, err := parseProtocolMap(key, v)
	return err
}

func validateMappingRules(_ *Broker, key, v string) error {
	if _, err := sslprincipal.Parse(v); err != nil {
		return invalid(key, v, "%v", err)
	}
	return nil
}

// ListenerProtocol is the security protocol of the named listener
// (listener.security.protocol.map); PLAINTEXT for a name it lacks.
func (b *Broker) ListenerProtocol(name string) security.Protocol {
	if p, ok := b.Security.Protocols[strings.ToUpper(name)]; ok {
		return p
	}
	return security.Plaintext
}

// ListenerSSL reads the ssl.* settings of the named listener: each key
// from listener.name.<lower-case name>.<key> if set, else <key> — Kafka's
// valuesWithPrefixOverride(listenerName.configPrefix). Errors: an invalid
// ssl.client.auth, keystore type or endpoint identification algorithm.
func (b *Broker) ListenerSSL(name string) (tlsconf.Settings, error) {
	prefix := "listener.name." + strings.ToLower(name) + "."
	get := func(k string) (string, bool) {
		if v, ok := b.Raw[prefix+k]; ok {
			return v, true
		}
		v, ok := b.Raw[k]
		return v, ok
	}
	s, err := tlsconf.FromProperties(get)
	if err != nil {
		return tlsconf.Settings{}, fmt.Errorf("listener %s: %w", name, err)
	}
	return s, nil
}

// InterBrokerProtocol is the security protocol of the inter-broker
// listener (Kafka's interBrokerSecurityProtocol).
func (b *Broker) InterBrokerProtocol() security.Protocol {
	return b.ListenerProtocol(b.Security.InterBrokerListener)
}

// InterBrokerSASL is ListenerClientSASL of the inter-broker listener
// (inter.broker.listener.name / security.inter.broker.protocol).
func (b *Broker) InterBrokerSASL() (mechanism, username, password string, err error) {
	return b.ListenerClientSASL(b.Security.InterBrokerListener)
}

// ListenerClientSASL returns the SASL mechanism the broker's own
// connections to a peer's listener use (sasl.mechanism.inter.broker.protocol,
// default GSSAPI as Kafka's) and the broker's credentials: the username and
// password options of that listener's JAAS entry for the mechanism
// (listener.name.<listener>.<mechanism>.sasl.jaas.config, else
// sasl.jaas.config; config.SASLListenerConfig.Own). Errors: the listener
// is not a SASL listener of this broker, or its JAAS entry lacks username
// or password.
func (b *Broker) ListenerClientSASL(listener string) (mechanism, username, password string, err error) {
	mechanism = b.SASL.InterBrokerMechanism
	lc, ok := b.SASL.Listeners[listener]
	if !ok {
		return "", "", "", fmt.Errorf("listener %s is %s but not one of this broker's SASL listeners", listener, b.ListenerProtocol(listener))
	}
	own, ok := lc.Own[mechanism]
	if !ok || own.Username == "" || own.Password == "" {
		return "", "", "", fmt.Errorf("listener %s is %s: set listener.name.%s.%s.sasl.jaas.config (or sasl.jaas.config) with username and password options, the broker's own credentials",
			listener, b.ListenerProtocol(listener), strings.ToLower(listener), strings.ToLower(mechanism))
	}
	return mechanism, own.Username, own.Password, nil
}

// resolveSecurity applies Kafka's listener rules (KafkaConfig.validateValues
// and listenerListToEndPoints), with Kafka's messages, once listeners and
// advertised.listeners are known.
func resolveSecurity(b *Broker, raw func(string) (string, bool)) error {
	sec := Security{Protocols: map[string]security.Protocol{}}
	pm := defaultProtocolMap
	pmv, pmSet := raw("listener.security.protocol.map")
	if pmSet {
		m, err := parseProtocolMap("listener.security.protocol.map", pmv)
		if err != nil {
			return err
		}
		pm = m
	}
	for name, p := range pm {
		proto, err := security.ParseProtocol(p)
		if err != nil {
			return invalid("listener.security.protocol.map", pmv, "Invalid security protocol `%s` defined in listener.security.protocol.map", p)
		}
		sec.Protocols[name] = proto
	}
	if err := checkEndpoints("listeners", b.Raw["listeners"], b.Listeners, sec.Protocols, true); err != nil {
		return err
	}
	if v, ok := raw("advertised.listeners"); ok {
		if err := checkEndpoints("advertised.listeners", v, b.AdvertisedListeners, sec.Protocols, false); err != nil {
			return err
		}
	}

	// inter.broker.listener.name xor security.inter.broker.protocol.
	ibn, ibnSet := raw("inter.broker.listener.name")
	ibp, ibpSet := b.Raw["security.inter.broker.protocol"]
	switch {
	case ibnSet && ibpSet:
		return invalid("inter.broker.listener.name", ibn, "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.")
	case ibnSet:
		name := strings.ToUpper(ibn)
		if _, ok := sec.Protocols[name]; !ok {
			return invalid("inter.broker.listener.name", ibn, "Listener with name %s defined in inter.broker.listener.name not found in listener.security.protocol.map.", name)
		}
		sec.InterBrokerListener = name
	default:
		if !ibpSet {
			ibp = "PLAINTEXT"
		}
		p, err := security.ParseProtocol(ibp)
		if err != nil {
			return invalid("security.inter.broker.protocol", ibp, "Invalid security protocol `%s` defined in security.inter.broker.protocol", ibp)
		}
		sec.InterBrokerListener = string(p) // ListenerName.forSecurityProtocol
	}
	advertised := listenerNames(b.AdvertisedListeners)
	if !contains(b.AdvertisedListeners, sec.InterBrokerListener) {
		k, v := "inter.broker.listener.name", ibn
		if !ibnSet {
			k, v = "security.inter.broker.protocol", ibp
		}
		return invalid(k, v, "inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid options based on currently configured listeners are %s", advertised)
	}
	if cp, ok := raw("control.plane.listener.name"); ok {
		name := strings.ToUpper(cp)
		if _, ok := sec.Protocols[name]; !ok {
			return invalid("control.plane.listener.name", cp, "Listener with %s defined in control.plane.listener.name not found in listener.security.protocol.map.", name)
		}
		if !contains(b.AdvertisedListeners, name) {
			return invalid("control.plane.listener.name", cp, "control.plane.listener.name must be a listener name defined in advertised.listeners. The valid options based on currently configured listeners are %s", advertised)
		}
		if name == sec.InterBrokerListener {
			return invalid("control.plane.listener.name", cp, "control.plane.listener.name, when defined, should have a different value from the inter broker listener name. Currently they both have the value %s", name)
		}
		sec.ControlPlaneListener = name
	}

	rules := sslprincipal.DefaultRules
	if v, ok := raw("ssl.principal.mapping.rules"); ok {
		rules = v
	}
	m, err := sslprincipal.Parse(rules)
	if err != nil {
		return invalid("ssl.principal.mapping.rules", rules, "%v", err)
	}
	sec.PrincipalMapper = m
	b.Security = sec

	// Every listener's ssl.* settings parse (a bad ssl.client.auth is an
	// error at start, not at the first connection); keystores are loaded
	// when the listener is built.
	for k := range b.Raw {
		if m := listenerPrefixRE.FindStringSubmatch(k); m != nil && isListenerSSLKey(k) && !contains(b.Listeners, strings.ToUpper(m[1])) {
			return invalid(k, b.Raw[k], "listener %s is not one of listeners (%s)", strings.ToUpper(m[1]), listenerNames(b.Listeners))
		}
	}
	for _, l := range b.Listeners {
		if _, err := b.ListenerSSL(l.Name); err != nil {
			return err
		}
	}
	return nil
}

// checkEndpoints: every listener has a protocol, distinct names, and (for
// listeners) distinct ports — except port 0, and one IPv4 with one IPv6
// address on the same port.
func checkEndpoints(key, v string, ls []Listener, protocols map[string]security.Protocol, distinctPorts bool) error {
	for _, l := range ls {
		if _, ok := protocols[l.Name]; !ok {
			return invalid(key, v, "Error creating broker listeners from '%s': No security protocol defined for listener %s", v, l.Name)
		}
	}
	if !distinctPorts {
		return nil
	}
	byPort := map[int][]Listener{}
	for _, l := range ls {
		if l.Port != 0 {
			byPort[l.Port] = append(byPort[l.Port], l)
		}
	}
	for port, same := range byPort {
		if len(same) < 2 {
			continue
		}
		if len(same) == 2 && ipFamily(same[0].Host) != 0 && ipFamily(same[1].Host) != 0 && ipFamily(same[0].Host) != ipFamily(same[1].Host) {
			continue
		}
		if ipFamily(same[0].Host) != 0 && ipFamily(same[1].Host) != 0 {
			return invalid(key, v, "If you have two listeners on the same port then one needs to be IPv4 and the other IPv6, listeners: %s, port: %d", v, port)
		}
		return invalid(key, v, "Each listener must have a different port, listeners: %s", v)
	}
	return nil
}

func contains(ls []Listener, name string) bool {
	for _, l := range ls {
		if l.Name == name {
			return true
		}
	}
	return false
}

func listenerNames(ls []Listener) string {
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.Name
	}
	return strings.Join(names, ",")
}

package config

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"gregor/wire/security/sasl"
)

// SASLConfig is the broker's SASL configuration (KIP-43, KIP-368): the
// global keys and, for each SASL_PLAINTEXT / SASL_SSL listener, what the
// listener-prefixed keys make of it.
type SASLConfig struct {
	// EnabledMechanisms is sasl.enabled.mechanisms (Kafka's default
	// GSSAPI, which Gregor does not build: a SASL listener needs it set,
	// or its listener-prefixed form, to PLAIN and/or SCRAM-SHA-256/512).
	EnabledMechanisms []string
	// InterBrokerMechanism is sasl.mechanism.inter.broker.protocol
	// (default GSSAPI); when the inter-broker listener is a SASL one it
	// must be enabled there.
	InterBrokerMechanism string
	// ConnectionsMaxReauth is connections.max.reauth.ms (default 0: a
	// session never expires).
	ConnectionsMaxReauth time.Duration
	// ServerMaxReceiveSize is sasl.server.max.receive.size (default
	// 524288): the largest frame a connection may send before and during
	// its initial authentication.
	ServerMaxReceiveSize int32
	// Listeners are the SASL listeners' settings by listener name
	// (upper-case, as in listeners); listeners of other protocols have none.
	Listeners map[string]SASLListenerConfig
}

// SASLListenerConfig is one SASL listener's SASL settings.
type SASLListenerConfig struct {
	// Protocol is the listener's security protocol, SASL_PLAINTEXT or SASL_SSL.
	Protocol string
	// Mechanisms: listener.name.<l>.sasl.enabled.mechanisms, else
	// sasl.enabled.mechanisms; in configuration order.
	Mechanisms []string
	// MaxReauth by mechanism: listener.name.<l>.<mech>.connections.max.reauth.ms,
	// else listener.name.<l>.connections.max.reauth.ms, else
	// connections.max.reauth.ms (0 = sessions do not expire).
	MaxReauth map[string]time.Duration
	// PlainUsers are the user_<name>="<password>" options of the
	// listener's PLAIN JAAS entry (listener.name.<l>.plain.sasl.jaas.config,
	// else the PlainLoginModule entry of sasl.jaas.config).
	PlainUsers map[string]string
	// Own is the broker's own identity per mechanism, the username and
	// password options of the mechanism's JAAS entry: what the broker
	// sends when it connects to this listener of another broker
	// (inter-broker clients). Absent when the JAAS entry has none.
	Own map[string]SASLCredentials
}

// DefaultSASLServerMaxReceiveSize is sasl.server.max.receive.size's default.
const DefaultSASLServerMaxReceiveSize = 524288

// SASLCredentials are a SASL client's username and password.
type SASLCredentials struct{ Username, Password string }

// saslListenerSuffixes are the listener-prefixed SASL keys this file reads:
// listener.name.<l>.<suffix>, where <mech> is a lower-case mechanism name.
var saslListenerSuffixes = []string{"sasl.enabled.mechanisms", "connections.max.reauth.ms"}

// isSASLListenerKey reports whether k is a listener-prefixed key read here
// (listener.name.<l>.sasl.enabled.mechanisms,
// listener.name.<l>[.<mech>].connections.max.reauth.ms,
// listener.name.<l>.<mech>.sasl.jaas.config), so Parse does not warn about it.
func isSASLListenerKey(k string) bool {
	_, _, _, ok := splitSASLListenerKey(k)
	return ok
}

// splitSASLListenerKey splits listener.name.<l>[.<mech>].<suffix> into its
// upper-cased listener, lower-case mechanism ("" = none) and suffix.
func splitSASLListenerKey(k string) (listener, mech, suffix string, ok bool) {
	rest, found := strings.CutPrefix(k, "listener.name.")
	if !found {
		return "", "", "", false
	}
	l, rest, found := strings.Cut(rest, ".")
	if !found || l == "" {
		return "", "", "", false
	}
	for _, s := range saslListenerSuffixes {
		if rest == s {
			return strings.ToUpper(l), "", s, true
		}
	}
	m, s, found := strings.Cut(rest, ".")
	if !found || m == "" || (s != "sasl.jaas.config" && s != "connections.max.reauth.ms") {
		return "", "", "", false
	}
	return strings.ToUpper(l), m, s, true
}

// resolveSASL builds b.SASL from the raw keys once the listeners are
// known. Errors: GSSAPI/OAUTHBEARER/unknown mechanisms on a SASL
// listener, a SASL listener without a mechanism, PLAIN without a JAAS
// entry (Kafka's message), a JAAS value that does not parse or holds
// other than one login module, a listener-prefixed SASL key for a
// listener that is not a SASL listener, or an inter-broker SASL listener
// without sasl.mechanism.inter.broker.protocol enabled.
func resolveSASL(b *Broker, protocols map[string]string) error {
	raw := func(k string) (string, bool) {
		v, ok := b.Raw[k]
		return v, ok
	}
	s := &b.SASL
	s.EnabledMechanisms = []string{sasl.GSSAPI}
	if v, ok := raw("sasl.enabled.mechanisms"); ok {
		s.EnabledMechanisms = splitList(v)
	}
	if s.ServerMaxReceiveSize == 0 {
		s.ServerMaxReceiveSize = DefaultSASLServerMaxReceiveSize
	}
	s.InterBrokerMechanism = sasl.GSSAPI
	if v, ok := raw("sasl.mechanism.inter.broker.protocol"); ok && v != "" {
		s.InterBrokerMechanism = v
	}
	s.Listeners = map[string]SASLListenerConfig{}
	saslListeners := map[string]bool{}
	for _, l := range b.Listeners {
		if p := protocols[l.Name]; p == "SASL_PLAINTEXT" || p == "SASL_SSL" {
			saslListeners[l.Name] = true
		}
	}
	// Prefixed keys: refused for listeners that do not do SASL (they would
	// be silently ignored otherwise).
	keys := make([]string, 0, len(b.Raw))
	for k := range b.Raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if l, _, _, ok := splitSASLListenerKey(k); ok && !saslListeners[l] {
			return invalid(k, b.Raw[k], "listener %s is not a SASL_PLAINTEXT or SASL_SSL listener of listeners", l)
		}
	}
	var global []sasl.LoginModule
	if v, ok := raw("sasl.jaas.config"); ok && v != "" {
		mods, err := sasl.ParseJAAS(v)
		if err != nil {
			return invalid("sasl.jaas.config", "[hidden]", "%v", err)
		}
		global = mods
	}
	for _, l := range b.Listeners {
		if !saslListeners[l.Name] {
			continue
		}
		lc, err := resolveSASLListener(b, l.Name, global)
		if err != nil {
			return err
		}
		lc.Protocol = protocols[l.Name]
		s.Listeners[l.Name] = lc
	}
	return checkInterBrokerSASL(b)
}

func resolveSASLListener(b *Broker, name string, global []sasl.LoginModule) (SASLListenerConfig, error) {
	prefix := "listener.name." + strings.ToLower(name) + "."
	lc := SASLListenerConfig{Mechanisms: b.SASL.EnabledMechanisms, MaxReauth: map[string]time.Duration{},
		Own: map[string]SASLCredentials{}}
	mkey := "sasl.enabled.mechanisms"
	if v, ok := b.Raw[prefix+mkey]; ok {
		mkey = prefix + mkey
		lc.Mechanisms = splitList(v)
	}
	if len(lc.Mechanisms) == 0 {
		return lc, invalid(mkey, b.Raw[mkey], "no SASL mechanism is enabled on listener %s", name)
	}
	if err := sasl.CheckMechanisms(mkey, lc.Mechanisms); err != nil {
		return lc, invalid(mkey, b.Raw[mkey], "%v", err)
	}
	listenerReauth := b.SASL.ConnectionsMaxReauth
	if v, ok := b.Raw[prefix+"connections.max.reauth.ms"]; ok {
		n, err := parseInt(prefix+"connections.max.reauth.ms", v, 64, noMin)
		if err != nil {
			return lc, err
		}
		listenerReauth = ms(n)
	}
	for _, m := range lc.Mechanisms {
		mp := prefix + strings.ToLower(m) + "."
		lc.MaxReauth[m] = listenerReauth
		if v, ok := b.Raw[mp+"connections.max.reauth.ms"]; ok {
			n, err := parseInt(mp+"connections.max.reauth.ms", v, 64, noMin)
			if err != nil {
				return lc, err
			}
			lc.MaxReauth[m] = ms(n)
		}
		mod, found, err := jaasFor(b, mp+"sasl.jaas.config", m, global)
		if err != nil {
			return lc, err
		}
		if !found && m == sasl.Plain {
			return lc, invalid(mp+"sasl.jaas.config", "", "Could not find a 'KafkaServer' or '%s.KafkaServer' entry in the JAAS configuration: set %ssasl.jaas.config (or sasl.jaas.config) to a PlainLoginModule entry with user_<name>=\"<password>\" options",
				strings.ToLower(name), mp)
		}
		if m == sasl.Plain {
			lc.PlainUsers = mod.PlainUsers()
		}
		if u, ok := mod.Options["username"]; ok {
			lc.Own[m] = SASLCredentials{Username: u, Password: mod.Options["password"]}
		}
	}
	for m := range lc.MaxReauth {
		if lc.MaxReauth[m] < 0 {
			lc.MaxReauth[m] = 0
		}
	}
	return lc, nil
}

// jaasFor returns mechanism m's JAAS entry on a listener: the prefixed key
// (exactly one login module, as Kafka requires), else the entry of
// sasl.jaas.config whose login module belongs to m (Gregor's fallback:
// Kafka brokers read only the prefixed form or a JAAS file, which Gregor
// does not read).
func jaasFor(b *Broker, key, m string, global []sasl.LoginModule) (sasl.LoginModule, bool, error) {
	if v, ok := b.Raw[key]; ok && v != "" {
		mods, err := sasl.ParseJAAS(v)
		if err != nil {
			return sasl.LoginModule{}, false, invalid(key, "[hidden]", "%v", err)
		}
		if len(mods) != 1 {
			return sasl.LoginModule{}, false, invalid(key, "[hidden]", "JAAS config property contains %d login modules, should be 1 module", len(mods))
		}
		return mods[0], true, nil
	}
	want := sasl.ScramLoginModule
	if m == sasl.Plain {
		want = sasl.PlainLoginModule
	}
	for _, mod := range global {
		if mod.Class == want {
			return mod, true, nil
		}
	}
	return sasl.LoginModule{Options: map[string]string{}}, false, nil
}

// checkInterBrokerSASL: when the inter-broker listener (inter.broker.listener.name,
// else the listener named by security.inter.broker.protocol) is a SASL
// listener, sasl.mechanism.inter.broker.protocol must be enabled on it
// (KafkaConfig's validation).
func checkInterBrokerSASL(b *Broker) error {
	ib := b.Security.InterBrokerListener
	lc, ok := b.SASL.Listeners[ib]
	if !ok {
		return nil
	}
	for _, m := range lc.Mechanisms {
		if m == b.SASL.InterBrokerMechanism {
			return nil
		}
	}
	return invalid("sasl.mechanism.inter.broker.protocol", b.SASL.InterBrokerMechanism,
		"sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms when SASL is used for inter-broker communication (listener %s enables %s)",
		ib, strings.Join(lc.Mechanisms, ","))
}

// String summarises a listener's SASL settings without secrets.
func (lc SASLListenerConfig) String() string {
	return fmt.Sprintf("mechanisms=%v plain_users=%d", lc.Mechanisms, len(lc.PlainUsers))
}

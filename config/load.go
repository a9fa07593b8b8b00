package config

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/magiconair/properties"
	"go.uber.org/zap"
)

// Load reads a server.properties file (Java properties syntax: "key=value",
// "key = value", "key: value", "#" and "!" comments, backslash line
// continuations) and returns the broker configuration: Kafka's defaults with
// the file's keys applied (see Parse). The file is read as UTF-8, which equals
// Java's ISO-8859-1 reading for the ASCII files Kafka ships. "${...}" is not
// expanded, as Kafka does not expand it.
//
// Errors: the file cannot be read or is not valid properties syntax, or a
// value is invalid (a *ValueError naming the key and the value).
func Load(path string, log *zap.Logger) (*Broker, error) {
	return LoadWithOverrides(path, nil, log)
}

// LoadWithOverrides is Load with kafka-server-start.sh's
// "--override key=value" arguments (Kafka.scala getPropsFromArgs) applied
// over the file's keys: each is split at its first '=' (the value may hold
// more), a later override of a key wins, and "key" without '=' sets the
// key to "" as Kafka's CommandLineUtils.parseKeyValueArgs does. The merged
// keys are then validated as the file's alone would be; an invalid value
// that came from an override is reported as "--override: …".
func LoadWithOverrides(path string, overrides []string, log *zap.Logger) (*Broker, error) {
	l := properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	p, err := l.LoadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	kv := make(map[string]string, p.Len())
	for _, k := range p.Keys() {
		v, _ := p.Get(k)
		kv[k] = v
	}
	overridden := map[string]bool{}
	for _, o := range overrides {
		k, v, _ := strings.Cut(o, "=")
		kv[k] = v
		overridden[strings.TrimSpace(k)] = true
	}
	b, err := Parse(kv, log)
	if err != nil {
		var ve *ValueError
		if errors.As(err, &ve) && overridden[ve.Key] {
			return nil, fmt.Errorf("--override: %w", err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// Parse applies server.properties keys to Kafka's defaults. Values are
// trimmed (Kafka's ConfigDef trims them). Known keys are validated and
// applied; keys Gregor knows but does not act on (ignoredKeys,
// Broker.IgnoredKeys) are accepted with one WARN line each giving the
// reason; any other key gets one WARN line on log (nil log = no logging)
// and is kept in Raw. Precedence, as Kafka: log.retention.ms >
// log.retention.minutes > log.retention.hours; log.roll.ms > log.roll.hours;
// log.dirs > log.dir; listeners > host.name/port; advertised.listeners >
// advertised.host.name/advertised.port > listeners.
//
// Errors: a *ValueError naming the first invalid key (in key order) and its value.
func Parse(kv map[string]string, log *zap.Logger) (*Broker, error) {
	if log == nil {
		log = zap.NewNop()
	}
	b := Defaults()
	keys := make([]string, 0, len(kv))
	for k, v := range kv {
		k = strings.TrimSpace(k)
		b.Raw[k] = strings.TrimSpace(v)
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := b.Raw[k]
		if bk, ok := brokerKeys[k]; ok {
			if err := bk.set(b, k, v); err != nil {
				return nil, err
			}
			continue
		}
		if _, ignored := ignoredKeys[k]; ignored || isListenerSSLKey(k) || isSASLListenerKey(k) || isListenerConnectionKey(k) {
			continue
		}
		log.Warn("unknown configuration key, ignored (it is not a Kafka broker config Gregor knows)", zap.String("key", k))
	}
	if err := resolve(b); err != nil {
		return nil, err
	}
	logIgnoredKeys(b, log)
	warnVersions(b, log) // versions.go
	return b, nil
}

// resolvers are the cross-key checks of other files (replication.go…),
// run by resolve after its own, in the order their inits added them.
var resolvers []func(*Broker) error

// resolve combines keys whose meaning depends on each other. Every value
// was already validated by its setter, so parse errors here cannot happen
// except for cross-key rules.
func resolve(b *Broker) error {
	raw := func(k string) (string, bool) {
		v, ok := b.Raw[k]
		return v, ok && v != ""
	}
	num := func(k string) int64 {
		v, _ := raw(k)
		n, _ := parseInt(k, v, 64, noMin)
		return n
	}
	if err := checkConnectionLimits(b); err != nil { // connections.go
		return err
	}
	if err := checkSocketServer(b); err != nil { // socket_server.go
		return err
	}
	if err := checkBrokerID(b); err != nil { // broker_id.go
		return err
	}
	if err := checkCoordinators(b); err != nil { // coordinator_keys.go
		return err
	}
	if err := checkVersions(b); err != nil { // versions.go
		return err
	}
	if err := checkIgnoredValues(b); err != nil { // ignored_values.go
		return err
	}

	// log.dirs > log.dir
	for _, k := range []string{"log.dirs", "log.dir"} {
		if v, ok := raw(k); ok {
			b.LogDirs = splitList(v)
			break
		}
	}
	if len(b.LogDirs) == 0 {
		return invalid("log.dirs", b.Raw["log.dirs"], "at least one log directory is required")
	}

	// Retention: ms > minutes > hours; any negative value keeps forever.
	switch {
	case has(b, "log.retention.ms"):
		b.LogRetentionMs = num("log.retention.ms")
	case has(b, "log.retention.minutes"):
		b.LogRetentionMs = num("log.retention.minutes") * minuteMs
	case has(b, "log.retention.hours"):
		b.LogRetentionMs = num("log.retention.hours") * hourMs
	}
	if b.LogRetentionMs < 0 {
		b.LogRetentionMs = -1
	}
	switch {
	case has(b, "log.roll.ms"):
		b.LogRollMs = num("log.roll.ms")
	case has(b, "log.roll.hours"):
		b.LogRollMs = num("log.roll.hours") * hourMs
	}

	// ZooKeeper: connection timeout defaults to the session timeout.
	b.ZookeeperConnect, _ = raw("zookeeper.connect")
	if has(b, "zookeeper.connection.timeout.ms") {
		b.ZookeeperConnectionTimeout = ms(num("zookeeper.connection.timeout.ms"))
	} else {
		b.ZookeeperConnectionTimeout = b.ZookeeperSessionTimeout
	}

	if err := resolveAdminListener(b); err != nil {
		return err
	}
	if err := resolveListeners(b, raw, num); err != nil {
		return err
	}
	for _, r := range resolvers {
		if err := r(b); err != nil {
			return err
		}
	}
	return nil
}

func has(b *Broker, k string) bool { return b.Raw[k] != "" }

func resolveListeners(b *Broker, raw func(string) (string, bool), num func(string) int64) error {
	// listeners > legacy host.name/port (Kafka before 0.10 and its docs).
	if v, ok := raw("listeners"); ok {
		ls, err := parseListeners("listeners", v)
		if err != nil {
			return err
		}
		b.Listeners = ls
	} else {
		host, _ := raw("host.name")
		port := int64(9092)
		if has(b, "port") {
			port = num("port")
		}
		if port > 65535 {
			return invalid("port", b.Raw["port"], "port must be in 0..65535")
		}
		b.Listeners = []Listener{{Name: "PLAINTEXT", Host: host, Port: int(port)}}
	}

	// advertised.listeners > advertised.host.name/port > listeners.
	switch v, ok := raw("advertised.listeners"); {
	case ok:
		ls, err := parseListeners("advertised.listeners", v)
		if err != nil {
			return err
		}
		names := map[string]bool{}
		for _, l := range b.Listeners {
			names[l.Name] = true
		}
		for _, l := range ls {
			if l.Host == "0.0.0.0" {
				return invalid("advertised.listeners", v, "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.")
			}
			if !names[l.Name] {
				return invalid("advertised.listeners", v, "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. Found %s. The valid options based on the current configuration are %s", listenerNames(ls), listenerNames(b.Listeners))
			}
		}
		b.AdvertisedListeners = advertise(ls)
	case has(b, "advertised.host.name") || has(b, "advertised.port"):
		l := b.Listeners[0]
		if h, ok := raw("advertised.host.name"); ok {
			l.Host = h
		}
		if has(b, "advertised.port") {
			p := num("advertised.port")
			if p > 65535 {
				return invalid("advertised.port", b.Raw["advertised.port"], "port must be in 0..65535")
			}
			l.Port = int(p)
		}
		b.AdvertisedListeners = advertise([]Listener{l})
	default:
		b.AdvertisedListeners = advertise(b.Listeners)
	}
	if err := resolveSecurity(b, raw); err != nil { // security.go
		return err
	}
	protocols := make(map[string]string, len(b.Security.Protocols))
	for name, p := range b.Security.Protocols {
		protocols[name] = string(p)
	}
	if err := resolveListenerConnectionLimits(b); err != nil { // connections.go
		return err
	}
	return resolveSASL(b, protocols) // sasl.go
}

package config

import (
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// listenerRE matches one listener URL, NAME://host:port, where host may be
// empty (all interfaces), a name, an IPv4 address or a bracketed IPv6 address.
var listenerRE = regexp.MustCompile(`^([A-Za-z0-9_]+)://(\[[0-9A-Fa-f:.%a-z]*\]|[0-9A-Za-z\-._]*):([0-9]+)$`)

// parseListeners parses a listeners / advertised.listeners value: a comma
// separated list of NAME://host:port with distinct names.
func parseListeners(key, v string) ([]Listener, error) {
	items := splitList(v)
	if len(items) == 0 {
		return nil, invalid(key, v, "expected at least one listener NAME://host:port")
	}
	var out []Listener
	seen := map[string]bool{}
	for _, it := range items {
		m := listenerRE.FindStringSubmatch(it)
		if m == nil {
			return nil, invalid(key, v, "%q is not a valid listener; expected NAME://host:port, e.g. PLAINTEXT://127.0.0.1:9092", it)
		}
		port, err := strconv.Atoi(m[3])
		if err != nil || port > 65535 {
			return nil, invalid(key, v, "port %s of %q is not in 0..65535", m[3], it)
		}
		name := strings.ToUpper(m[1])
		if seen[name] {
			return nil, invalid(key, v, "each listener must have a different name; %s appears twice", name)
		}
		seen[name] = true
		out = append(out, Listener{Name: name, Host: strings.Trim(m[2], "[]"), Port: port})
	}
	return out, nil
}

// defaultProtocolMap is listener.security.protocol.map's default: each
// standard protocol name maps to itself.
var defaultProtocolMap = map[string]string{
	"PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL",
}

// parseProtocolMap parses listener.security.protocol.map ("NAME:PROTOCOL,...").
func parseProtocolMap(key, v string) (map[string]string, error) {
	out := map[string]string{}
	for _, it := range splitList(v) {
		name, proto, ok := strings.Cut(it, ":")
		if !ok || name == "" || proto == "" {
			return nil, invalid(key, v, "%q is not NAME:PROTOCOL", it)
		}
		out[strings.ToUpper(strings.TrimSpace(name))] = strings.ToUpper(strings.TrimSpace(proto))
	}
	return out, nil
}

// checkPlaintext: Gregor serves the PLAINTEXT security protocol only, so a
// listener whose protocol is anything else is a configuration error rather
// than a port that silently speaks the wrong protocol.
func checkPlaintext(key string, ls []Listener, protocols map[string]string) error {
	for _, l := range ls {
		proto, ok := protocols[l.Name]
		if !ok {
			return invalid(key, l.String(), "listener name %s is not in listener.security.protocol.map", l.Name)
		}
		if proto != "PLAINTEXT" && proto != "SASL_PLAINTEXT" { // SASL_PLAINTEXT: sasl.go (the TLS work replaces this check)
			return invalid(key, l.String(), "security protocol %s is not supported; Gregor serves PLAINTEXT only", proto)
		}
	}
	return nil
}

// advertise fills hosts a client cannot connect to ("" and the wildcard
// addresses) with this machine's host name. Kafka rejects 0.0.0.0 in
// advertised.listeners; when advertised.listeners is absent and listeners
// binds all interfaces, Kafka advertises the canonical host name, as here.
func advertise(ls []Listener) []Listener {
	out := make([]Listener, len(ls))
	for i, l := range ls {
		if l.Host == "" || l.Host == "0.0.0.0" || l.Host == "::" {
			if h, err := os.Hostname(); err == nil && h != "" {
				l.Host = h
			} else {
				l.Host = "localhost"
			}
		}
		out[i] = l
	}
	return out
}

// String renders the listener as NAME://host:port (IPv6 hosts bracketed).
func (l Listener) String() string {
	return l.Name + "://" + l.Addr()
}

// Addr is the listener's "host:port" for net.Listen / net.Dial ("" host = all
// interfaces).
func (l Listener) Addr() string {
	return net.JoinHostPort(l.Host, strconv.Itoa(l.Port))
}

package config

import (
	"math"
	"net"
	"strconv"
	"strings"
)

// ConnectionLimits are the broker's connection quotas (Kafka's
// ConnectionQuotas, KIP-612): a new connection past one is closed at
// accept and counted (wire/server); existing connections are untouched.
type ConnectionLimits struct {
	// Max is max.connections (default Int.MaxValue): connections open on
	// all listeners together; the inter-broker listener is exempt, as
	// Kafka lets its connections in even when the broker is full.
	Max int
	// PerIP is max.connections.per.ip (default Int.MaxValue): connections
	// open from one client address.
	PerIP int
	// PerIPOverrides is max.connections.per.ip.overrides
	// ("host-or-ip:count,…"), by IP address: host names are resolved once,
	// at load, each of their addresses getting the count.
	PerIPOverrides map[string]int
	// CreationRate is max.connection.creation.rate (default Int.MaxValue):
	// new connections per second on all listeners together (burst of one
	// second's worth).
	CreationRate int
	// PerListener are listener.name.<l>.max.connections and
	// listener.name.<l>.max.connection.creation.rate, by upper-case
	// listener name: limits of one listener's connections, the
	// inter-broker listener's included (KIP-402, KIP-612).
	PerListener map[string]ListenerConnectionLimits
}

// ListenerConnectionLimits are one listener's connection quotas; unset
// ones are Unlimited.
type ListenerConnectionLimits struct {
	Max          int // listener.name.<l>.max.connections
	CreationRate int // listener.name.<l>.max.connection.creation.rate
}

// listenerConnectionSuffixes are the listener-prefixed connection quota
// keys: listener.name.<l>.<suffix>.
var listenerConnectionSuffixes = []string{"max.connections", "max.connection.creation.rate"}

// splitListenerConnectionKey splits listener.name.<l>.<suffix> for the
// connection quota suffixes.
func splitListenerConnectionKey(k string) (listener, suffix string, ok bool) {
	rest, found := strings.CutPrefix(k, "listener.name.")
	if !found {
		return "", "", false
	}
	for _, suf := range listenerConnectionSuffixes {
		if l, found := strings.CutSuffix(rest, "."+suf); found && l != "" && !strings.Contains(l, ".") {
			return strings.ToUpper(l), suf, true
		}
	}
	return "", "", false
}

func isListenerConnectionKey(k string) bool {
	_, _, ok := splitListenerConnectionKey(k)
	return ok
}

// resolveListenerConnectionLimits reads the listener-prefixed connection
// quotas once the listeners are known: a value must be a non-negative int,
// and the listener one of listeners (a typo would otherwise limit nothing).
func resolveListenerConnectionLimits(b *Broker) error {
	known := map[string]bool{}
	for _, l := range b.Listeners {
		known[strings.ToUpper(l.Name)] = true
	}
	out := map[string]ListenerConnectionLimits{}
	for k, v := range b.Raw {
		l, suf, ok := splitListenerConnectionKey(k)
		if !ok {
			continue
		}
		n, err := parseInt(k, v, 32, 0)
		if err != nil {
			return err
		}
		if !known[l] {
			return invalid(k, v, "listener %s is not in listeners", l)
		}
		lim, ok := out[l]
		if !ok {
			lim = ListenerConnectionLimits{Max: Unlimited, CreationRate: Unlimited}
		}
		if suf == "max.connections" {
			lim.Max = int(n)
		} else {
			lim.CreationRate = int(n)
		}
		out[l] = lim
	}
	b.ConnectionLimits.PerListener = out
	return nil
}

// Unlimited is Kafka's Int.MaxValue default of the connection limits.
const Unlimited = math.MaxInt32

func defaultConnectionLimits() ConnectionLimits {
	return ConnectionLimits{Max: Unlimited, PerIP: Unlimited, CreationRate: Unlimited, PerIPOverrides: map[string]int{}}
}

// setConnectionOverrides parses max.connections.per.ip.overrides: a comma
// separated list of host:count (Kafka's format; an IPv6 address in
// brackets or bare, its last colon separating the count).
func setConnectionOverrides(b *Broker, key, v string) error {
	out := map[string]int{}
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		i := strings.LastIndex(item, ":")
		if i <= 0 {
			return invalid(key, v, "%q is not host:count", item)
		}
		host := strings.Trim(item[:i], "[]")
		n, err := strconv.Atoi(strings.TrimSpace(item[i+1:]))
		if err != nil || n < 0 {
			return invalid(key, v, "%q: the count must be a non-negative integer", item)
		}
		if ip := net.ParseIP(host); ip != nil {
			out[ip.String()] = n
			continue
		}
		addrs, err := net.LookupHost(host)
		if err != nil {
			return invalid(key, v, "host %s does not resolve: %v", host, err)
		}
		for _, a := range addrs {
			if ip := net.ParseIP(a); ip != nil {
				out[ip.String()] = n
			}
		}
	}
	b.ConnectionLimits.PerIPOverrides = out
	return nil
}

// checkConnectionLimits is Kafka's rule for the per-IP limit.
func checkConnectionLimits(b *Broker) error {
	if b.ConnectionLimits.PerIP == 0 && len(b.ConnectionLimits.PerIPOverrides) == 0 {
		return invalid("max.connections.per.ip", "0", "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.")
	}
	return nil
}

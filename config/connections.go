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

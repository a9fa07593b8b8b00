package config

import "time"

// ConnectionSetup is the setup timeout of the broker's outgoing
// (inter-broker) connections, Kafka's ClusterConnectionStates: an attempt
// to a broker gets Timeout, each failed attempt in a row doubles it (±20%
// jitter) up to Max, and a connection that completes resets it. Setup is
// the TCP connect and the TLS and SASL handshakes. Read at start.
type ConnectionSetup struct {
	// Timeout is socket.connection.setup.timeout.ms (default 10000).
	Timeout time.Duration
	// Max is socket.connection.setup.timeout.max.ms (default 30000); a Max
	// below Timeout caps it (Kafka's ExponentialBackoff).
	Max time.Duration
}

func defaultConnectionSetup() ConnectionSetup {
	return ConnectionSetup{Timeout: 10 * time.Second, Max: 30 * time.Second}
}

// connectionSetupKeys are added to brokerKeys by init. Kafka defines both
// LONG without a validator; 0 or less (every connection failing at once)
// is refused.
var connectionSetupKeys = map[string]brokerKey{
	"socket.connection.setup.timeout.ms":     msKey(func(b *Broker) *time.Duration { return &b.ConnectionSetup.Timeout }, 64, 1),
	"socket.connection.setup.timeout.max.ms": msKey(func(b *Broker) *time.Duration { return &b.ConnectionSetup.Max }, 64, 1),
}

func init() {
	for k, v := range connectionSetupKeys {
		brokerKeys[k] = v
		delete(ignoredKeys, k)
	}
}

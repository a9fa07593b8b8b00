package config

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ReplicaFetch is the follower fetchers' keys (Kafka's ReplicationConfigs),
// applied by replication/fetcher.ConfigFromBroker. Read at start, as Kafka
// (none of them is a dynamic broker config).
type ReplicaFetch struct {
	// MaxBytes is replica.fetch.max.bytes (bytes, default 1048576, at
	// least 0): each partition's PartitionMaxBytes in the follower's Fetch.
	// The leader still sends the first batch when it is larger (KIP-74).
	MaxBytes int32
	// MinBytes is replica.fetch.min.bytes (bytes, default 1): the Fetch's
	// MinBytes. Gregor refuses values below 1, which Kafka accepts: the
	// leader would then answer at once and an idle follower spin.
	MinBytes int32
	// WaitMax is replica.fetch.wait.max.ms (default 500, at least 0, at
	// most replica.lag.time.max.ms): the Fetch's MaxWaitMillis.
	WaitMax time.Duration
	// Backoff is replica.fetch.backoff.ms (default 1000, at least 0): the
	// pause after a failed fetch (or a partition in error) before retrying.
	Backoff time.Duration
	// ResponseMaxBytes is replica.fetch.response.max.bytes (bytes, default
	// 10485760, at least 0): the Fetch's MaxBytes (KIP-74).
	ResponseMaxBytes int32
	// SocketTimeout is replica.socket.timeout.ms (default 30000, at least
	// replica.fetch.wait.max.ms): how long a fetcher waits for its
	// connection to the leader to be ready (TCP connect, TLS and SASL
	// handshakes), as Kafka's BrokerBlockingSender.awaitReady.
	SocketTimeout time.Duration
	// SocketReceiveBufferBytes is replica.socket.receive.buffer.bytes
	// (default 65536; -1 = the OS default): SO_RCVBUF of the fetch
	// connection, set before it connects.
	SocketReceiveBufferBytes int
}

func defaultReplicaFetch() ReplicaFetch {
	return ReplicaFetch{MaxBytes: 1 << 20, MinBytes: 1, WaitMax: 500 * time.Millisecond, Backoff: time.Second,
		ResponseMaxBytes: 10 << 20, SocketTimeout: 30 * time.Second, SocketReceiveBufferBytes: 64 << 10}
}

// ControlledShutdown is controlled.shutdown.* (Kafka's ServerConfigs) and
// controller.socket.timeout.ms, applied by cmd/internal/broker and the
// controller channel. Read at start.
type ControlledShutdown struct {
	// Enable is controlled.shutdown.enable (default true): a stopping
	// broker asks the controller (ControlledShutdown) to move its
	// leaderships away first. False: it stops without asking, as Kafka.
	Enable bool
	// MaxRetries is controlled.shutdown.max.retries (default 3): despite
	// its name, the number of ControlledShutdown attempts, as Kafka's
	// KafkaServer.controlledShutdown counts it (0 or less: none); the
	// broker stops anyway when the last one fails or leaves partitions.
	MaxRetries int
	// RetryBackoff is controlled.shutdown.retry.backoff.ms (default 5000):
	// the pause between those attempts.
	RetryBackoff time.Duration
}

// replicationKeys are added to brokerKeys (keys.go) by init.
var replicationKeys = map[string]brokerKey{
	"replica.fetch.max.bytes":          intKey(func(b *Broker) *int32 { return &b.ReplicaFetch.MaxBytes }, 32, 0),
	"replica.fetch.min.bytes":          intKey(func(b *Broker) *int32 { return &b.ReplicaFetch.MinBytes }, 32, 1),
	"replica.fetch.wait.max.ms":        msKey(func(b *Broker) *time.Duration { return &b.ReplicaFetch.WaitMax }, 32, 0),
	"replica.fetch.backoff.ms":         msKey(func(b *Broker) *time.Duration { return &b.ReplicaFetch.Backoff }, 32, 0),
	"replica.fetch.response.max.bytes": intKey(func(b *Broker) *int32 { return &b.ReplicaFetch.ResponseMaxBytes }, 32, 0),
	"replica.socket.timeout.ms":        msKey(func(b *Broker) *time.Duration { return &b.ReplicaFetch.SocketTimeout }, 32, 1),
	"replica.socket.receive.buffer.bytes": {func(b *Broker, key, v string) error {
		n, err := parseInt(key, v, 32, -1)
		if err != nil {
			return err
		}
		if n == 0 {
			return invalid(key, v, "Value must be -1 (the OS default) or at least 1")
		}
		b.ReplicaFetch.SocketReceiveBufferBytes = int(n)
		return nil
	}, kmsg.ConfigTypeInt, func(d *Broker) string { return i64(int64(d.ReplicaFetch.SocketReceiveBufferBytes)) }},

	"controlled.shutdown.enable":           boolKey(func(b *Broker) *bool { return &b.ControlledShutdown.Enable }),
	"controlled.shutdown.max.retries":      intKey(func(b *Broker) *int { return &b.ControlledShutdown.MaxRetries }, 32, noMin),
	"controlled.shutdown.retry.backoff.ms": msKey(func(b *Broker) *time.Duration { return &b.ControlledShutdown.RetryBackoff }, 64, 0),
	"controller.socket.timeout.ms":         msKey(func(b *Broker) *time.Duration { return &b.ControllerSocketTimeout }, 32, 1),
}

// resolveReplication checks Kafka's KafkaConfig.validateValues rules
// between the fetcher keys and replica.lag.time.max.ms, with its messages.
func resolveReplication(b *Broker) error {
	f := b.ReplicaFetch
	if f.WaitMax > f.SocketTimeout {
		return invalid("replica.socket.timeout.ms", shown(b, "replica.socket.timeout.ms"),
			"replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms to prevent unnecessary socket timeouts")
	}
	if f.WaitMax > b.ReplicaLagTimeMax {
		return invalid("replica.fetch.wait.max.ms", shown(b, "replica.fetch.wait.max.ms"),
			"replica.fetch.wait.max.ms should always be less than or equal to replica.lag.time.max.ms to prevent frequent changes in ISR")
	}
	return nil
}

// shown is key's value as server.properties gave it, else its default.
func shown(b *Broker, key string) string {
	if v, ok := b.Raw[key]; ok {
		return v
	}
	if bk, ok := brokerKeys[key]; ok && bk.def != nil {
		return bk.def(Defaults())
	}
	return ""
}

func init() {
	for k, v := range replicationKeys {
		brokerKeys[k] = v
		delete(ignoredKeys, k)
	}
	resolvers = append(resolvers, resolveReplication)
}

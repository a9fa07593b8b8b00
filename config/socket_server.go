package config

import (
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// SocketServer are the keys of Kafka's SocketServer and Selector that
// wire/server applies: idle expiry, the delayed close after a failed SASL
// authentication (KIP-306), the listen backlog and the memory pool that
// bounds the bytes of requests read but not yet answered.
type SocketServer struct {
	// ConnectionsMaxIdle is connections.max.idle.ms (LONG, default 600000):
	// a connection with nothing read for this long and no request
	// outstanding is closed. Negative: never (Kafka's Selector then has no
	// IdleExpiryManager); resolve refuses 0 (see FailedAuthenticationDelay).
	ConnectionsMaxIdle time.Duration
	// FailedAuthenticationDelay is connection.failed.authentication.delay.ms
	// (INT >= 0, default 100): after a failed SASL authentication the
	// error response and the close are held back this long (KIP-306), so a
	// client guessing passwords cannot retry at once. 0 = at once. Must be
	// below connections.max.idle.ms when that is not negative (Kafka's rule).
	FailedAuthenticationDelay time.Duration
	// ListenBacklog is socket.listen.backlog.size (INT >= 1, default 50):
	// the backlog passed to listen(2) on every listener (the kernel caps it
	// at net.core.somaxconn).
	ListenBacklog int
	// QueuedMaxRequestBytes is queued.max.request.bytes (LONG, default -1):
	// the bytes of requests read from every connection together and not
	// yet answered; past it the connections stop reading until answers
	// free memory (Kafka's SimpleMemoryPool, not strict: a request is read
	// when any memory is left). <= 0: unbounded. When positive it must be
	// at least socket.request.max.bytes.
	QueuedMaxRequestBytes int64
}

func defaultSocketServer() SocketServer {
	return SocketServer{
		ConnectionsMaxIdle:        10 * time.Minute,
		FailedAuthenticationDelay: 100 * time.Millisecond,
		ListenBacklog:             50,
		QueuedMaxRequestBytes:     -1,
	}
}

// socketServerKeys are added to brokerKeys by init.
var socketServerKeys = map[string]brokerKey{
	"connections.max.idle.ms": {func(b *Broker, key, v string) error {
		n, err := parseInt(key, v, 64, noMin)
		if err != nil {
			return err
		}
		// A duration holds 292 years: a larger value is "never" too.
		b.SocketServer.ConnectionsMaxIdle = ms(min(n, int64(math.MaxInt64/time.Millisecond)))
		return nil
	}, kmsg.ConfigTypeLong, func(d *Broker) string { return i64(d.SocketServer.ConnectionsMaxIdle.Milliseconds()) }},
	"connection.failed.authentication.delay.ms": msKey(func(b *Broker) *time.Duration { return &b.SocketServer.FailedAuthenticationDelay }, 32, 0),
	"socket.listen.backlog.size":                intKey(func(b *Broker) *int { return &b.SocketServer.ListenBacklog }, 32, 1),
	"queued.max.request.bytes":                  intKey(func(b *Broker) *int64 { return &b.SocketServer.QueuedMaxRequestBytes }, 64, noMin),
}

func init() {
	for k, v := range socketServerKeys {
		brokerKeys[k] = v
		delete(ignoredKeys, k)
	}
}

// checkSocketServer applies KafkaConfig.validateValues' rules for these
// keys, with its messages.
func checkSocketServer(b *Broker) error {
	s := b.SocketServer
	if s.QueuedMaxRequestBytes > 0 && s.QueuedMaxRequestBytes < int64(b.SocketRequestMaxBytes) {
		return invalid("queued.max.request.bytes", i64(s.QueuedMaxRequestBytes), "queued.max.request.bytes must be larger or equal to socket.request.max.bytes")
	}
	if s.ConnectionsMaxIdle >= 0 && s.FailedAuthenticationDelay >= s.ConnectionsMaxIdle {
		return invalid("connection.failed.authentication.delay.ms", i64(s.FailedAuthenticationDelay.Milliseconds()),
			"connection.failed.authentication.delay.ms=%d should always be less than connections.max.idle.ms=%d to prevent failed authentication responses from timing out",
			s.FailedAuthenticationDelay.Milliseconds(), s.ConnectionsMaxIdle.Milliseconds())
	}
	return nil
}

package fetcher

import (
	"gregor/config"
)

// ConfigFromBroker maps the broker's replica fetcher settings onto a
// Config (System, Replicas, Endpoints, Logger, Quota and Security are left
// to the caller): broker.id, num.replica.fetchers and config.ReplicaFetch
// (replica.fetch.wait.max.ms, replica.fetch.min.bytes,
// replica.fetch.max.bytes, replica.fetch.response.max.bytes,
// replica.fetch.backoff.ms, replica.socket.timeout.ms,
// replica.socket.receive.buffer.bytes), validated by config.Parse. Their
// values are kept as given, zeros included (Kafka allows
// replica.fetch.max.bytes=0 and replica.fetch.backoff.ms=0).
func ConfigFromBroker(b *config.Broker) Config {
	f := b.ReplicaFetch
	return Config{BrokerID: b.BrokerID, NumFetchers: b.NumReplicaFetchers,
		MaxWait: f.WaitMax, MinBytes: f.MinBytes, MaxBytes: f.ResponseMaxBytes, PartitionMaxBytes: f.MaxBytes,
		Backoff: f.Backoff, SocketTimeout: f.SocketTimeout, SocketReceiveBufferBytes: f.SocketReceiveBufferBytes,
		explicit: true}
}

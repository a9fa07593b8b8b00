package config

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Coordinators are the keys of how the group and transaction coordinators
// write and read their internal topics (Kafka's GroupCoordinatorConfig,
// TransactionLogConfigs and TransactionConfig).
type Coordinators struct {
	// OffsetsTopicCompressionCodec is offsets.topic.compression.codec (INT,
	// default 0): the codec of the batches the group coordinator writes to
	// __consumer_offsets, by Kafka's CompressionType id: 0 none, 1 gzip,
	// 2 snappy, 3 lz4, 4 zstd.
	OffsetsTopicCompressionCodec int8
	// OffsetCommitTimeout is offsets.commit.timeout.ms (INT >= 1, default
	// 5000): how long an offset commit or group metadata write waits for
	// its replication before it is answered REQUEST_TIMED_OUT.
	OffsetCommitTimeout time.Duration
	// OffsetCommitRequiredAcks is offsets.commit.required.acks (SHORT,
	// default -1, deprecated in Kafka): -1 waits for the ISR; 0 and 1 for
	// the leader's append only (Kafka's appendRecords treats them alike
	// for the coordinator: the local append happens before the answer).
	OffsetCommitRequiredAcks int16
	// OffsetsLoadBufferSize is offsets.load.buffer.size (INT >= 1, default
	// 5242880): bytes read at a time while loading a __consumer_offsets
	// partition (a larger batch is read whole).
	OffsetsLoadBufferSize int32
	// TransactionLoadBufferSize is transaction.state.log.load.buffer.size
	// (INT >= 1, default 5242880), the same for __transaction_state.
	TransactionLoadBufferSize int32
	// RequestTimeout is request.timeout.ms (INT >= 0, default 30000). In a
	// ZooKeeper-mode Kafka 3.9 broker it bounds the transaction
	// coordinator's appends to __transaction_state (TransactionStateManager),
	// which is what Gregor uses it for.
	RequestTimeout time.Duration
}

func defaultCoordinators() Coordinators {
	return Coordinators{
		OffsetCommitTimeout:       5 * time.Second,
		OffsetCommitRequiredAcks:  -1,
		OffsetsLoadBufferSize:     5 << 20,
		TransactionLoadBufferSize: 5 << 20,
		RequestTimeout:            30 * time.Second,
	}
}

var coordinatorKeys = map[string]brokerKey{
	"offsets.topic.compression.codec": {func(b *Broker, key, v string) error {
		n, err := parseInt(key, v, 32, noMin)
		if err != nil {
			return err
		}
		if n < 0 || n > 4 {
			// Kafka's CompressionType.forId, thrown when the coordinator starts.
			return invalid(key, v, "Unknown compression type id: %d", n)
		}
		b.Coordinators.OffsetsTopicCompressionCodec = int8(n)
		return nil
	}, kmsg.ConfigTypeInt, func(d *Broker) string { return i64(int64(d.Coordinators.OffsetsTopicCompressionCodec)) }},
	"offsets.commit.timeout.ms":              msKey(func(b *Broker) *time.Duration { return &b.Coordinators.OffsetCommitTimeout }, 32, 1),
	"offsets.commit.required.acks":           intKey(func(b *Broker) *int16 { return &b.Coordinators.OffsetCommitRequiredAcks }, 16, noMin),
	"offsets.load.buffer.size":               intKey(func(b *Broker) *int32 { return &b.Coordinators.OffsetsLoadBufferSize }, 32, 1),
	"transaction.state.log.load.buffer.size": intKey(func(b *Broker) *int32 { return &b.Coordinators.TransactionLoadBufferSize }, 32, 1),
	"request.timeout.ms":                     msKey(func(b *Broker) *time.Duration { return &b.Coordinators.RequestTimeout }, 32, 0),
}

func init() {
	for k, v := range coordinatorKeys {
		brokerKeys[k] = v
		delete(ignoredKeys, k)
	}
}

// checkCoordinators is GroupCoordinatorConfig's rule for
// offsets.commit.required.acks (its message), plus Gregor's: a value
// above 1 passes Kafka's check and then fails every commit with
// INVALID_REQUIRED_ACKS (ReplicaManager accepts only -1, 0 and 1), so it
// is refused here instead.
func checkCoordinators(b *Broker) error {
	acks := b.Coordinators.OffsetCommitRequiredAcks
	v := i64(int64(acks))
	if acks < -1 || acks > b.OffsetsTopicReplicationFactor {
		return invalid("offsets.commit.required.acks", v, "offsets.commit.required.acks must be greater or equal to -1 and less or equal to offsets.topic.replication.factor")
	}
	if acks > 1 {
		return invalid("offsets.commit.required.acks", v, "only -1, 0 and 1 are valid acks (Kafka would fail every offset commit with INVALID_REQUIRED_ACKS)")
	}
	return nil
}

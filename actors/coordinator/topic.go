package coordinator

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage/record"
)

// OffsetsTopicName is Kafka's internal topic holding group metadata and
// committed offsets.
const OffsetsTopicName = "__consumer_offsets"

// OffsetsTopic is what the coordinator needs from the broker's replica side
// for __consumer_offsets. The broker's adapter implements it; tests fake it.
type OffsetsTopic interface {
	// Ensure creates __consumer_offsets if it does not exist:
	// offsets.topic.num.partitions partitions, replication factor
	// offsets.topic.replication.factor, configs cleanup.policy=compact,
	// segment.bytes=offsets.topic.segment.bytes, compression.type=producer.
	// Idempotent. While it cannot (fewer live brokers than the factor, as
	// Kafka refuses; no cluster metadata yet) it returns an error wrapping
	// COORDINATOR_NOT_AVAILABLE, which clients retry.
	Ensure(ctx context.Context) error
	// Append appends one record batch to a partition and returns its base
	// offset once it is committed (acks=all: replicated to the ISR).
	// Errors should be *kerr.Error where one applies (NOT_LEADER_OR_FOLLOWER,
	// NOT_ENOUGH_REPLICAS…) so the right code reaches the client.
	Append(ctx context.Context, partition int32, batch []byte) (offset int64, err error)
	// Load calls fn for every record of a partition from its log start
	// offset to its end, in offset order (value nil = tombstone), the
	// records of control batches (transaction markers) included, with
	// their batch's producer and attributes (LogRecord). fn must not keep
	// r or its slices after it returns.
	Load(ctx context.Context, partition int32, fn func(r *LogRecord) error) error
	// IsLocalLeader reports whether this broker leads the partition.
	IsLocalLeader(partition int32) bool
	// Leader returns the partition leader's advertised endpoint.
	Leader(partition int32) (brokerID int32, host string, port int32, ok bool)
}

// VerifiedAppender is an OffsetsTopic whose partitions check KIP-890
// verification (transaction.partition.verification.enable): a
// TxnOffsetCommit's transactional batch goes through AppendVerified with
// its Batch.VerificationGuard, and the partition refuses it with
// INVALID_TXN_STATE when it would open the producer's transaction there
// without that guard being the producer's current one (a marker came
// between). The broker's adapter implements it; an OffsetsTopic that does
// not (tests' MemTopic) appends every batch with Append.
type VerifiedAppender interface {
	AppendVerified(ctx context.Context, partition int32, batch []byte, guard uint64) (offset int64, err error)
}

// PartitionFor is the __consumer_offsets partition of group:
// abs(javaStringHashCode(group)) % partitions, with Kafka's Utils.abs
// (Integer.MIN_VALUE maps to 0).
func PartitionFor(group string, partitions int32) int32 {
	if partitions <= 0 {
		return 0
	}
	h := javaStringHashCode(group)
	if h == -1<<31 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % partitions
}

// javaStringHashCode is java.lang.String.hashCode: s[0]*31^(n-1)+…+s[n-1]
// over UTF-16 code units, in int32 arithmetic.
func javaStringHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// partitionStore is the Store of one group: it writes records as one
// batch, compressed with offsets.topic.compression.codec, to the group's
// __consumer_offsets partition.
type partitionStore struct {
	topic     OffsetsTopic
	partition int32
	ctx       context.Context
	timeout   time.Duration
	now       func() time.Time
	codec     record.Codec
}

func (s *partitionStore) Append(b Batch) (int64, error) {
	br := make([]record.BatchRecord, len(b.Records))
	for i, r := range b.Records {
		br[i] = record.BatchRecord{Key: r.Key, Value: r.Value}
	}
	opts := record.BatchOptions{PartitionLeaderEpoch: -1, BaseTimestamp: s.now().UnixMilli(), Codec: s.codec}
	if p := b.Producer; p != nil {
		// Kafka's AppendOrigin.COORDINATOR: a transactional batch of the
		// producer with no sequence (the partition checks only the epoch).
		opts.Transactional = true
		opts.Producer = &record.Producer{ID: p.ID, Epoch: p.Epoch, BaseSequence: record.NoSequence}
	}
	batch, err := record.BuildBatch(opts, br)
	if err != nil {
		return -1, err
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
	defer cancel()
	var off int64
	if va, ok := s.topic.(VerifiedAppender); ok && b.Producer != nil {
		off, err = va.AppendVerified(ctx, s.partition, batch, b.VerificationGuard)
	} else {
		off, err = s.topic.Append(ctx, s.partition, batch)
	}
	if err != nil && s.ctx.Err() != nil {
		// The coordinator is stopping (Stop cancelled the append): its
		// groups are no longer coordinated here, whatever the append said.
		return -1, errAbandoned{kerr.NotCoordinator.Code}
	}
	return off, err
}

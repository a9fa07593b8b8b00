package transactions

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// abortSpec is Kafka's AbortTransactionSpec: the ABORT marker to write to
// one partition for a producer.
type abortSpec struct {
	p                tp
	producerID       int64
	producerEpoch    int16
	coordinatorEpoch int32
}

// String is AbortTransactionSpec.toString, which Kafka's messages embed.
func (s abortSpec) String() string {
	return fmt.Sprintf("AbortTransactionSpec(topicPartition=%s, producerId=%d, producerEpoch=%d, coordinatorEpoch=%d)",
		s.p, s.producerID, s.producerEpoch, s.coordinatorEpoch)
}

// abort is `abort --topic T --partition P` with either --start-offset O
// (the open transaction starting at O, found with DescribeProducers; Kafka
// 3.0+ brokers) or --producer-id, --producer-epoch and --coordinator-epoch
// (older brokers). It writes an ABORT marker for that producer to the
// partition's leader (WriteTxnMarkers) and prints nothing on success.
func (t *tool) abort(ctx context.Context, a args) error {
	p := tp{a.str["topic"], int32(a.num["partition"])}
	startOffset, hasStart := a.num["start-offset"]
	producerID, hasProducer := a.num["producer-id"]
	if !hasStart && !hasProducer {
		return fail("The transaction to abort must be identified either with " +
			"--start-offset (for brokers on 3.0 or above) or with " +
			"--producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)")
	}
	var spec abortSpec
	if !hasStart {
		epoch, ok := a.num["producer-epoch"]
		if !ok {
			return fail("Missing required argument --producer-epoch")
		}
		coordEpoch, ok := a.num["coordinator-epoch"]
		if !ok {
			return fail("Missing required argument --coordinator-epoch")
		}
		// A transaction of a new producer id that hung before its first
		// marker shows coordinator epoch -1 in DescribeProducers; 0 is
		// at or below any real epoch, so Kafka uses it instead.
		spec = abortSpec{p: p, producerID: producerID, producerEpoch: int16(epoch), coordinatorEpoch: max(int32(coordEpoch), 0)}
	} else {
		var err error
		if spec, err = t.findAbortSpec(ctx, p, startOffset); err != nil {
			return err
		}
	}
	what := "Failed to abort transaction " + spec.String()
	if err := t.require(ctx, 27, 0); err != nil {
		return failWith(err, "%s", what)
	}
	return t.writeAbortMarker(ctx, spec, what)
}

// findAbortSpec is the marker for the open transaction that starts at
// startOffset on p, from the leader's producer states.
func (t *tool) findAbortSpec(ctx context.Context, p tp, startOffset int64) (abortSpec, error) {
	what := "Failed to validate producer state for partition " + p.String()
	if err := t.require(ctx, 61, 0); err != nil {
		return abortSpec{}, failWith(err, "%s", what)
	}
	res, err := t.producers(ctx, []tp{p}, nil)
	if err == nil {
		err = res[p].Err
	}
	if err != nil {
		return abortSpec{}, failWith(err, "%s", what)
	}
	for _, s := range sortedProducers(res[p]) {
		if s.CurrentTxnStartOffset >= 0 && s.CurrentTxnStartOffset == startOffset {
			return abortSpec{p: p, producerID: s.ProducerID, producerEpoch: s.ProducerEpoch, coordinatorEpoch: coordinatorEpochOr(s, 0)}, nil
		}
	}
	return abortSpec{}, fail("Could not find any open transactions starting at offset %d on partition %s", startOffset, p)
}

// writeAbortMarker sends the spec's ABORT marker and maps the partition's
// answer to AbortTransactionHandler's exceptions.
func (t *tool) writeAbortMarker(ctx context.Context, spec abortSpec, what string) error {
	m := kadm.TxnMarkers{ProducerID: spec.producerID, ProducerEpoch: spec.producerEpoch, Commit: false,
		CoordinatorEpoch: spec.coordinatorEpoch, Topics: kadm.TopicsSet{}}
	m.Topics.Add(spec.p.topic, spec.p.partition)
	rs, err := t.adm.WriteTxnMarkers(ctx, m)
	if err != nil {
		return failWith(markerError(spec, firstErr(err)), "%s", what)
	}
	var got *kadm.TxnMarkersPartitionResponse
	rs.EachPartition(func(r kadm.TxnMarkersPartitionResponse) {
		if r.ProducerID == spec.producerID && r.Topic == spec.p.topic && r.Partition == spec.p.partition {
			got = &r
		}
	})
	if got == nil {
		return failWith(fmt.Errorf("WriteTxnMarkers response included no entry for producerId %d and topic partition %s", spec.producerID, spec.p), "%s", what)
	}
	if got.Err != nil {
		return failWith(markerError(spec, got.Err), "%s", what)
	}
	return nil
}

// markerError is AbortTransactionHandler's exception for an error code
// answered to the marker; other errors pass through.
func markerError(spec abortSpec, err error) error {
	var ae *kadm.AuthError
	if errors.As(err, &ae) {
		err = ae.Err
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return err
	}
	prefix := "WriteTxnMarkers request with " + spec.String()
	switch ke {
	case kerr.ClusterAuthorizationFailed:
		return codeError(ke, prefix+" failed due to cluster authorization error", "")
	case kerr.InvalidProducerEpoch:
		return codeError(ke, prefix+" failed due an invalid producer epoch", "")
	case kerr.TransactionCoordinatorFenced:
		return codeError(ke, fmt.Sprintf("%s failed since the provided coordinator epoch %d has been fenced by the active coordinator", prefix, spec.coordinatorEpoch), "")
	case kerr.NotLeaderForPartition, kerr.ReplicaNotAvailable, kerr.BrokerNotAvailable, kerr.UnknownTopicOrPartition:
		// Kafka retries these until its timeout; the code's own
		// message says why it gave up.
		return codeError(ke, "", "")
	}
	return codeError(ke, prefix+" failed due to unexpected error: "+ke.Description, "")
}

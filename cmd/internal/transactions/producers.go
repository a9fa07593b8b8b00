package transactions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// producersHeaders are DescribeProducersCommand.HEADERS.
var producersHeaders = []string{"ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "LastTimestamp", "CurrentTransactionStartOffset"}

// describeProducers is `describe-producers --topic T --partition P
// [--broker-id B]`: the partition's active producers at its leader (or at
// replica B), one row each ordered by producer id (Kafka prints the
// broker's order). An epoch or start offset the broker reports as -1 (none)
// prints -1 and None, as Kafka's OptionalInt/OptionalLong do.
func (t *tool) describeProducers(ctx context.Context, a args) error {
	p := tp{a.str["topic"], int32(a.num["partition"])}
	broker, hasBroker := a.num["broker-id"]
	where := "leader"
	var brokerID *int32
	if hasBroker {
		id := int32(broker)
		brokerID = &id
		where = "broker " + strconv.Itoa(int(id))
	}
	what := fmt.Sprintf("Failed to describe producers for partition %s on %s", p, where)
	if err := t.require(ctx, 61, 0); err != nil {
		return failWith(err, "%s", what)
	}
	res, err := t.producers(ctx, []tp{p}, brokerID)
	if err != nil {
		return failWith(err, "%s", what)
	}
	if res[p].Err != nil {
		return failWith(res[p].Err, "%s", what)
	}
	printTable(t.out, producersHeaders, producerRows(res[p]))
	return nil
}

// producerRows are the describe-producers table's rows for d, by producer
// id.
func producerRows(d kadm.DescribedProducersPartition) [][]string {
	rows := [][]string{}
	for _, s := range sortedProducers(d) {
		start := "None"
		if s.CurrentTxnStartOffset >= 0 {
			start = strconv.FormatInt(s.CurrentTxnStartOffset, 10)
		}
		rows = append(rows, []string{strconv.FormatInt(s.ProducerID, 10), strconv.Itoa(int(s.ProducerEpoch)),
			strconv.Itoa(int(coordinatorEpochOr(s, -1))), strconv.Itoa(int(s.LastSequence)), strconv.FormatInt(s.LastTimestamp, 10), start})
	}
	return rows
}

// coordinatorEpochOr is the producer's coordinator epoch, or def when the
// broker has none (-1; Kafka's OptionalInt.orElse).
func coordinatorEpochOr(s kadm.DescribedProducer, def int32) int32 {
	if s.CoordinatorEpoch < 0 {
		return def
	}
	return s.CoordinatorEpoch
}

func sortedProducers(d kadm.DescribedProducersPartition) []kadm.DescribedProducer {
	out := make([]kadm.DescribedProducer, 0, len(d.ActiveProducers))
	for _, s := range d.ActiveProducers {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b kadm.DescribedProducer) int {
		switch {
		case a.ProducerID < b.ProducerID:
			return -1
		case a.ProducerID > b.ProducerID:
			return 1
		}
		return 0
	})
	return out
}

// producers describes the active producers of tps at their leaders (kadm),
// or all at broker *brokerID when given (a raw request to that broker,
// which kadm does not send). Every partition is in the result, its Err
// the exception Kafka's DescribeProducersHandler fails it with; err is a
// failure of the request as a whole.
func (t *tool) producers(ctx context.Context, tps []tp, brokerID *int32) (map[tp]kadm.DescribedProducersPartition, error) {
	var got map[tp]kadm.DescribedProducersPartition
	var err error
	if brokerID != nil {
		got, err = t.producersAt(ctx, tps, *brokerID)
	} else {
		set := kadm.TopicsSet{}
		for _, p := range tps {
			set.Add(p.topic, p.partition)
		}
		var dts kadm.DescribedProducersTopics
		dts, err = t.adm.DescribeProducers(ctx, set)
		got = map[tp]kadm.DescribedProducersPartition{}
		dts.EachPartition(func(d kadm.DescribedProducersPartition) { got[tp{d.Topic, d.Partition}] = d })
		if err != nil {
			// A partition kgo could not map to a leader fails as a
			// shard; its error is the partition's.
			var se *kadm.ShardErrors
			if !errors.As(err, &se) {
				return nil, err
			}
			for _, e := range se.Errs {
				if req, ok := e.Req.(*kmsg.DescribeProducersRequest); ok {
					for _, rt := range req.Topics {
						for _, p := range rt.Partitions {
							got[tp{rt.Topic, p}] = kadm.DescribedProducersPartition{Topic: rt.Topic, Partition: p, Err: e.Err}
						}
					}
				}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	out := make(map[tp]kadm.DescribedProducersPartition, len(tps))
	for _, p := range tps {
		d, ok := got[p]
		if !ok {
			d = kadm.DescribedProducersPartition{Topic: p.topic, Partition: p.partition, Err: kerr.UnknownTopicOrPartition}
		}
		d.Err = producersError(p, brokerID, d.Err, d.ErrMessage)
		out[p] = d
	}
	return out, nil
}

// producersAt sends one DescribeProducers request for tps to broker id.
func (t *tool) producersAt(ctx context.Context, tps []tp, id int32) (map[tp]kadm.DescribedProducersPartition, error) {
	req := kmsg.NewPtrDescribeProducersRequest()
	byTopic := map[string]int{}
	for _, p := range tps {
		i, ok := byTopic[p.topic]
		if !ok {
			i = len(req.Topics)
			byTopic[p.topic] = i
			rt := kmsg.NewDescribeProducersRequestTopic()
			rt.Topic = p.topic
			req.Topics = append(req.Topics, rt)
		}
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p.partition)
	}
	resp, err := req.RequestWith(ctx, t.cl.Broker(int(id)))
	if err != nil {
		return nil, err
	}
	out := map[tp]kadm.DescribedProducersPartition{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			d := kadm.DescribedProducersPartition{Leader: id, Topic: rt.Topic, Partition: rp.Partition,
				ActiveProducers: kadm.DescribedProducers{}, Err: kerr.ErrorForCode(rp.ErrorCode)}
			if rp.ErrorMessage != nil {
				d.ErrMessage = *rp.ErrorMessage
			}
			for _, s := range rp.ActiveProducers {
				d.ActiveProducers[s.ProducerID] = kadm.DescribedProducer{Leader: id, Topic: rt.Topic, Partition: rp.Partition,
					ProducerID: s.ProducerID, ProducerEpoch: int16(s.ProducerEpoch), LastSequence: s.LastSequence,
					LastTimestamp: s.LastTimestamp, CoordinatorEpoch: s.CoordinatorEpoch, CurrentTxnStartOffset: s.CurrentTxnStartOffset}
			}
			out[tp{rt.Topic, rp.Partition}] = d
		}
	}
	return out, nil
}

// producersError is DescribeProducersHandler's exception for an error code
// answered for partition p (brokerID: the --broker-id, nil for the leader).
func producersError(p tp, brokerID *int32, err error, brokerMsg string) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, kerr.NotLeaderForPartition) && brokerID != nil:
		return codeError(err, fmt.Sprintf("Failed to describe active producers for partition %s on brokerId %d", p, *brokerID), "")
	case errors.Is(err, kerr.NotLeaderForPartition), errors.Is(err, kerr.UnknownTopicOrPartition):
		// Kafka retries these until its timeout; the code's own
		// message says why it gave up.
		return codeError(err, "", brokerMsg)
	case errors.Is(err, kerr.InvalidTopicException):
		msg := brokerMsg
		if msg == "" {
			msg = kerr.InvalidTopicException.Description
		}
		return codeError(err, fmt.Sprintf("Failed to fetch metadata for partition %s due to invalid topic error: %s", p, msg), "")
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return codeError(err, fmt.Sprintf("Failed to describe active producers for partition %s due to authorization failure on topic `%s`", p, p.topic), "")
	case isCode(err):
		return codeError(err, fmt.Sprintf("Failed to describe active producers for partition %s due to unexpected error", p), "")
	}
	return err
}

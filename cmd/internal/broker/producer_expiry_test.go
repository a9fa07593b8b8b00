package broker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage/record"
)

// TestProducerIDExpirationFromConfig: producer.id.expiration.ms and
// producer.id.expiration.check.interval.ms (KIP-854) from server.properties
// reach the partitions. An idle idempotent producer is listed by
// DescribeProducers and its out-of-order sequence refused until the
// expiration passes; then it is forgotten (DescribeProducers lists nobody)
// and, as Kafka's ProducerAppendInfo.checkSequence accepts any sequence
// from a producer with no state, its old first batch is appended again
// (no longer a duplicate).
func TestProducerIDExpirationFromConfig(t *testing.T) {
	_, cl := startTxnNode(t, map[string]string{
		"producer.id.expiration.ms":                "1000",
		"producer.id.expiration.check.interval.ms": "50",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "exp"); err != nil {
		t.Fatal(err)
	}
	ir := kmsg.NewPtrInitProducerIDRequest()
	ir.TransactionTimeoutMillis = 60000
	init := request(t, cl, ir, func(r *kmsg.InitProducerIDResponse) int16 { return r.ErrorCode })
	if init.ErrorCode != 0 {
		t.Fatalf("init: %v", kerr.ErrorForCode(init.ErrorCode))
	}
	pid, epoch := init.ProducerID, init.ProducerEpoch

	produce := func(seq int32) (int16, int64) {
		t.Helper()
		b, err := record.BuildBatch(record.BatchOptions{BaseTimestamp: time.Now().UnixMilli(), PartitionLeaderEpoch: -1,
			Producer: &record.Producer{ID: pid, Epoch: epoch, BaseSequence: seq}},
			[]record.BatchRecord{{Value: []byte("v")}, {Value: []byte("w")}})
		if err != nil {
			t.Fatal(err)
		}
		r := kmsg.NewPtrProduceRequest()
		r.Acks, r.TimeoutMillis = -1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "exp"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = b
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		p := resp.Topics[0].Partitions[0]
		return p.ErrorCode, p.BaseOffset
	}
	producers := func() []kmsg.DescribeProducersResponseTopicPartitionActiveProducer {
		t.Helper()
		r := kmsg.NewPtrDescribeProducersRequest()
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = "exp", []int32{0}
		r.Topics = append(r.Topics, rt)
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			t.Fatalf("describe producers: %v", kerr.ErrorForCode(p.ErrorCode))
		}
		return p.ActiveProducers
	}

	if code, off := produce(0); code != 0 || off != 0 {
		t.Fatalf("first batch: %v at %d", kerr.ErrorForCode(code), off)
	}
	if ps := producers(); len(ps) != 1 || ps[0].ProducerID != pid || ps[0].LastSequence != 1 {
		t.Fatalf("producers after the first batch: %+v", ps)
	}
	// Known producer (checked before the expiration can have run: the
	// batch was appended just now): the same batch again is a duplicate,
	// answered with its first offset and not appended; sequence 5 after 1
	// is out of order.
	if code, off := produce(0); code != 0 || off != 0 {
		t.Fatalf("duplicate while known: %v at %d, want its offset 0", kerr.ErrorForCode(code), off)
	}
	if code, _ := produce(5); code != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("gap while known: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", kerr.ErrorForCode(code))
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(producers()) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("producer %d still listed long after producer.id.expiration.ms=1000", pid)
		}
		time.Sleep(25 * time.Millisecond) // polling the check interval's effect; no event to await over the wire
	}
	// Forgotten: its old first batch is no duplicate any more but a new
	// append, and after it the sequence goes on from there.
	if code, off := produce(0); code != 0 || off != 2 {
		t.Fatalf("old batch of the expired producer: %v at %d, want appended at 2", kerr.ErrorForCode(code), off)
	}
	if ps := producers(); len(ps) != 1 || ps[0].ProducerID != pid || ps[0].LastSequence != 1 {
		t.Fatalf("producers after the batch of the expired producer: %+v", ps)
	}
	if code, _ := produce(5); code != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("gap after the producer came back: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", kerr.ErrorForCode(code))
	}
}

package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// EndOffset asks the broker at addr for topic-p's latest offset (ListOffsets
// with timestamp -1, as a consumer: the high watermark), bounded by
// timeout. It returns the partition's offset and error code as the broker
// answered them (offset -1 with a non-zero code), or err when the request
// itself failed (a stopped broker, a timeout, a malformed response).
func EndOffset(addr, topic string, p int32, timeout time.Duration) (int64, int16, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return -1, 0, err
	}
	defer cl.Close()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = p
	rp.Timestamp = -1 // latest
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return -1, 0, fmt.Errorf("list offsets on %s: %w", addr, err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return -1, 0, fmt.Errorf("list offsets on %s: response %+v", addr, resp)
	}
	r := resp.Topics[0].Partitions[0]
	return r.Offset, r.ErrorCode, nil
}

// ProduceRequest is a ProduceRequest carrying batch for topic-p alone, with
// acks and the broker-side timeout (timeout_ms), for tests that send raw
// produces (no client batching, no retries). kgo overwrites a raw
// request's acks with the client's own RequiredAcks: build the client
// with the same acks.
func ProduceRequest(topic string, p int32, batch []byte, acks int16, timeout time.Duration) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = acks, int32(timeout/time.Millisecond)
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = p
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

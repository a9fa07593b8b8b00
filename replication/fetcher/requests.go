package fetcher

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/replication/throttle"
)

// result carries a finished request back to the fetcher actor.
type result struct {
	gen     uint64 // request generation; older results are ignored
	epoch   *kmsg.OffsetForLeaderEpochResponse
	fetch   *kmsg.FetchResponse
	offsets *leaderOffsets
	err     error
	sent    map[partition.TopicPartition]int32 // partitions and epochs the request covered
}

// leaderOffsets is the leader's answer to the two ListOffsets requests of
// an out-of-range reset: its log start (timestamp -2) and its log end
// (timestamp -1).
type leaderOffsets struct {
	earliest, latest *kmsg.ListOffsetsResponse
}

// requestOnce sends req on the request goroutine.
func requestOnce(req kmsg.Request) func(context.Context, *kgo.Broker) *result {
	return func(ctx context.Context, b *kgo.Broker) *result {
		resp, err := b.Request(ctx, req)
		r := &result{err: err}
		switch x := resp.(type) {
		case *kmsg.FetchResponse:
			r.fetch = x
		case *kmsg.OffsetForLeaderEpochResponse:
			r.epoch = x
		}
		return r
	}
}

// fetchOn sends req on fc from the request goroutine (see fetchConn).
func fetchOn(fc *fetchConn, req *kmsg.FetchRequest) func(context.Context, *kgo.Broker) *result {
	return func(ctx context.Context, _ *kgo.Broker) *result {
		resp, err := fc.fetch(ctx, req)
		return &result{fetch: resp, err: err}
	}
}

// epochRequest builds OffsetForLeaderEpoch for the partitions still to
// truncate. A partition whose log has no epochs is instead asked to
// truncate to its high watermark (a partition operation, see kick).
func (f *fetcherActor) epochRequest(sent map[partition.TopicPartition]int32, now time.Time) *kmsg.OffsetForLeaderEpochRequest {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = f.cfg.BrokerID
	topics := map[string]int{}
	for tp, ps := range f.parts {
		if !ps.truncating || !ps.ready(now) {
			continue
		}
		// A partition whose actor is restarting waits: its log's epochs
		// are unknown, not absent. Taking that for a log without epochs
		// truncated a follower to its high watermark — dropping records
		// the leader had acknowledged, lost for good if this follower
		// became leader next.
		h, v := f.openLog(tp, ps)
		if h == nil {
			continue
		}
		latest := latestEpoch(v)
		if latest < 0 {
			// Nothing to compare (empty or pre-epoch log): Kafka truncates
			// to the high watermark, which is all this replica can trust.
			f.truncate(tp, ps, h, opTruncate, v.HighWatermark, false)
			continue
		}
		i := topicSlot(&req.Topics, topics, tp.Topic, func(t *kmsg.OffsetForLeaderEpochRequestTopic) { t.Default(); t.Topic = tp.Topic })
		p := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		p.Partition, p.CurrentLeaderEpoch, p.LeaderEpoch = tp.Partition, ps.epoch, latest
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
		sent[tp] = ps.epoch
	}
	if len(req.Topics) == 0 {
		return nil
	}
	return req
}

// offsetsRequests builds the two ListOffsets requests (log start, log end)
// for the partitions out of the leader's range; nil when there are none.
// One request cannot name a partition twice, so they go one after the
// other on the request goroutine.
func (f *fetcherActor) offsetsRequests(sent map[partition.TopicPartition]int32, now time.Time) func(context.Context, *kgo.Broker) *result {
	build := func(ts int64) *kmsg.ListOffsetsRequest {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = f.cfg.BrokerID
		topics := map[string]int{}
		for tp, ps := range f.parts {
			if !ps.resetting || ps.truncating || !ps.ready(now) {
				continue
			}
			i := topicSlot(&req.Topics, topics, tp.Topic, func(t *kmsg.ListOffsetsRequestTopic) { t.Default(); t.Topic = tp.Topic })
			p := kmsg.NewListOffsetsRequestTopicPartition()
			p.Partition, p.Timestamp, p.CurrentLeaderEpoch = tp.Partition, ts, ps.epoch
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
			sent[tp] = ps.epoch
		}
		return req
	}
	earliest, latest := build(-2), build(-1)
	if len(earliest.Topics) == 0 {
		return nil
	}
	return func(ctx context.Context, b *kgo.Broker) *result {
		first, err := earliest.RequestWith(ctx, b)
		if err != nil {
			return &result{err: err}
		}
		last, err := latest.RequestWith(ctx, b)
		if err != nil {
			return &result{err: err}
		}
		return &result{offsets: &leaderOffsets{earliest: first, latest: last}}
	}
}

// fetchRequest builds the Fetch for the partitions ready to fetch, and
// counts those left out by the follower throttle (Config.Quota: throttled,
// not caught up, quota exceeded — Kafka's shouldFollowerThrottle).
func (f *fetcherActor) fetchRequest(sent map[partition.TopicPartition]int32, now time.Time) (*kmsg.FetchRequest, int) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = f.cfg.BrokerID
	req.MaxWaitMillis = int32(f.cfg.MaxWait / time.Millisecond)
	req.MinBytes = f.cfg.MinBytes
	req.MaxBytes = f.cfg.MaxBytes
	req.IsolationLevel = 0
	req.SessionEpoch = -1 // KIP-227: no session, full requests
	topics := map[string]int{}
	throttled := 0
	for tp, ps := range f.parts {
		if ps.truncating || ps.resetting || !ps.ready(now) {
			continue
		}
		h, v := f.openLog(tp, ps)
		if h == nil {
			continue
		}
		ps.offset = v.LogEndOffset
		if throttle.ShouldFollowerThrottle(f.cfg.Quota, tp.Topic, tp.Partition, ps.caughtUp(), now) {
			throttled++
			continue
		}
		i := topicSlot(&req.Topics, topics, tp.Topic, func(t *kmsg.FetchRequestTopic) { t.Default(); t.Topic = tp.Topic })
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition = tp.Partition
		p.CurrentLeaderEpoch = ps.epoch
		p.FetchOffset = ps.offset
		p.LastFetchedEpoch = latestEpoch(v)
		p.LogStartOffset = v.LogStartOffset
		p.PartitionMaxBytes = f.cfg.PartitionMaxBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
		sent[tp] = ps.epoch
	}
	f.cfg.Quota.NoteOmitted(throttled)
	return req, throttled
}

// throttleWait is how long a fetcher whose every partition is throttled
// waits before it looks again: until the follower quota is back at its
// bound, at least minThrottleWait (no spinning on rounding), at most
// replica.fetch.backoff.ms (what Kafka's fetcher thread waits when it has
// nothing to fetch).
func (f *fetcherActor) throttleWait(now time.Time) time.Duration {
	return min(max(f.cfg.Quota.ThrottleTime(now), minThrottleWait), f.cfg.Backoff)
}

// minThrottleWait bounds throttleWait from below.
const minThrottleWait = 10 * time.Millisecond

// topicSlot is the index of topic in a request's topic list (idx maps the
// names already there), appending a new entry set up by init when absent.
func topicSlot[T any](topics *[]T, idx map[string]int, topic string, init func(*T)) int {
	if i, ok := idx[topic]; ok {
		return i
	}
	var t T
	init(&t)
	*topics = append(*topics, t)
	idx[topic] = len(*topics) - 1
	return len(*topics) - 1
}

// openLog returns tp's replica and its view when its log is open; nil when
// tp is not hosted here, or its partition actor is restarting or offline
// (no log): then tp is retried after replica.fetch.backoff.ms, so a
// fetcher whose every partition is away still wakes up for them.
func (f *fetcherActor) openLog(tp partition.TopicPartition, ps *partState) (*partition.Handle, *partition.View) {
	h, ok := f.cfg.Replicas.Get(tp)
	if !ok {
		return nil, nil
	}
	v := h.View()
	if v.Log == nil {
		f.delay(ps)
		return nil, nil
	}
	return h, v
}

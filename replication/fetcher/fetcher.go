package fetcher

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/partition"
	"gregor/storage"
	"gregor/storage/record"
)

type addPartition struct {
	tp    partition.TopicPartition
	epoch int32
}

type removePartition struct{ tp partition.TopicPartition }

type ping struct{ ack chan struct{} }

// result carries a finished request back to the fetcher actor.
type result struct {
	gen   uint64 // request generation; older results are ignored
	epoch *kmsg.OffsetForLeaderEpochResponse
	fetch *kmsg.FetchResponse
	err   error
	sent  map[partition.TopicPartition]int32 // partitions and epochs the request covered
}

type retry struct{}

// requestGen numbers requests across fetcher incarnations, so a result
// sent by a goroutine of a previous incarnation is never taken for the
// current request.
var requestGen atomic.Uint64

// partState is one followed partition.
type partState struct {
	epoch      int32 // the leader epoch we follow under
	truncating bool  // OffsetForLeaderEpoch still to do
	offset     int64 // next fetch offset (the follower's log end offset)
	// retryAt delays this partition after a partition-level error
	// (replica.fetch.backoff.ms) without holding up the others.
	retryAt time.Time
}

func (ps *partState) ready(now time.Time) bool { return !now.Before(ps.retryAt) }

// fetcherActor replicates the partitions it was given from one leader. One
// request is in flight at a time, on a goroutine the actor owns (cancelled
// and awaited in Stopping); results come back as messages, so adding and
// removing partitions never waits for a long poll.
type fetcherActor struct {
	cfg   Config
	key   fetcherKey
	log   *zap.Logger
	parts map[partition.TopicPartition]*partState

	client   *kgo.Client
	addr     string
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	inflight bool
	gen      uint64
	timer    *time.Timer
}

// newFetcher builds a fetcher instance over parts, which the manager keeps
// across the actor's restarts.
func newFetcher(cfg Config, key fetcherKey, parts map[partition.TopicPartition]*partState) *fetcherActor {
	return &fetcherActor{cfg: cfg, key: key, log: cfg.Logger.With(zap.String("fetcher", key.name())), parts: parts}
}

func (f *fetcherActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		f.ctx, f.cancel = context.WithCancel(context.Background())
		for _, ps := range f.parts { // a restart: re-check every log first
			ps.truncating = true
		}
		f.kick(ctx)
	case *addPartition:
		f.parts[m.tp] = &partState{epoch: m.epoch, truncating: true, offset: -1}
		f.kick(ctx)
	case *removePartition:
		delete(f.parts, m.tp)
	case *ping:
		m.ack <- struct{}{}
	case *result:
		if m.gen != f.gen {
			return
		}
		f.inflight = false
		ok := f.handle(m)
		if !ok {
			f.backoff(ctx)
			return
		}
		f.kick(ctx)
	case *retry:
		f.timer = nil
		f.kick(ctx)
	case *actor.Restarting:
		f.shutdown()
	case *actor.Stopping:
		f.shutdown()
	}
}

// shutdown cancels the in-flight request, waits for its goroutine and
// closes the connection.
func (f *fetcherActor) shutdown() {
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
	if f.cancel != nil {
		f.cancel()
	}
	f.wg.Wait()
	if f.client != nil {
		f.client.Close()
		f.client = nil
	}
	f.inflight = false
}

func (f *fetcherActor) backoff(ctx actor.Context) {
	if f.timer != nil {
		return
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	f.timer = time.AfterFunc(f.cfg.Backoff, func() { root.Send(self, &retry{}) })
}

// delay holds tp back for replica.fetch.backoff.ms.
func (f *fetcherActor) delay(ps *partState) { ps.retryAt = time.Now().Add(f.cfg.Backoff) }

// wakeAt arms the retry timer for the earliest delayed partition.
func (f *fetcherActor) wakeAt(ctx actor.Context, now time.Time) {
	if f.timer != nil {
		return
	}
	var next time.Time
	for _, ps := range f.parts {
		if ps.retryAt.After(now) && (next.IsZero() || ps.retryAt.Before(next)) {
			next = ps.retryAt
		}
	}
	if next.IsZero() {
		return
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	f.timer = time.AfterFunc(next.Sub(now), func() { root.Send(self, &retry{}) })
}

// conn returns the client for the leader's current endpoint.
func (f *fetcherActor) conn() (*kgo.Client, error) {
	host, port, ok := f.cfg.Endpoints.BrokerEndpoint(f.key.leader)
	if !ok {
		return nil, fmt.Errorf("leader broker %d has no known endpoint", f.key.leader)
	}
	addr := net.JoinHostPort(host, strconv.Itoa(int(port)))
	if f.client != nil && f.addr == addr {
		return f.client, nil
	}
	if f.client != nil {
		f.client.Close()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr),
		kgo.ClientID(fmt.Sprintf("broker-%d-fetcher-%d", f.cfg.BrokerID, f.key.index)),
		kgo.DialTimeout(5*time.Second))
	if err != nil {
		return nil, err
	}
	f.client, f.addr = cl, addr
	return cl, nil
}

// kick sends the next request if none is in flight: OffsetForLeaderEpoch
// for partitions still to truncate, else Fetch for the others.
func (f *fetcherActor) kick(ctx actor.Context) {
	if f.inflight || f.timer != nil || len(f.parts) == 0 || f.ctx == nil {
		return
	}
	cl, err := f.conn()
	if err != nil {
		f.log.Warn("cannot reach leader", zap.Error(err))
		f.backoff(ctx)
		return
	}
	now := time.Now()
	sent := map[partition.TopicPartition]int32{}
	var req kmsg.Request
	if er := f.epochRequest(sent, now); er != nil {
		req = er
	} else {
		req = f.fetchRequest(sent, now)
	}
	if len(sent) == 0 {
		f.wakeAt(ctx, now) // every partition is backing off
		return
	}
	f.gen = requestGen.Add(1)
	gen, self, root, rctx := f.gen, ctx.Self(), ctx.ActorSystem().Root, f.ctx
	f.inflight = true
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		resp, err := cl.SeedBrokers()[0].Request(rctx, req)
		r := &result{gen: gen, err: err, sent: sent}
		switch x := resp.(type) {
		case *kmsg.FetchResponse:
			r.fetch = x
		case *kmsg.OffsetForLeaderEpochResponse:
			r.epoch = x
		}
		root.Send(self, r)
	}()
}

func (f *fetcherActor) epochRequest(sent map[partition.TopicPartition]int32, now time.Time) *kmsg.OffsetForLeaderEpochRequest {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = f.cfg.BrokerID
	topics := map[string]int{}
	for tp, ps := range f.parts {
		if !ps.truncating || !ps.ready(now) {
			continue
		}
		h, ok := f.cfg.Replicas.Get(tp)
		if !ok {
			continue
		}
		v := h.View()
		if v.Log == nil {
			// The partition actor is restarting (or offline): its log's
			// epochs are unknown, not absent. Taking that for a log without
			// epochs truncated a follower to its high watermark — dropping
			// records the leader had acknowledged, lost for good if this
			// follower became leader next. Wait for the log instead.
			f.delay(ps)
			continue
		}
		latest := latestEpoch(v)
		if latest < 0 {
			// Nothing to compare (empty or pre-epoch log): Kafka truncates
			// to the high watermark, which is all this replica can trust.
			if _, err := h.TruncateTo(ps.epoch, v.HighWatermark, false); err != nil {
				f.log.Debug("truncate to high watermark", zap.Stringer("partition", tp), zap.Error(err))
				f.delay(ps) // retried on the wake-up timer even when nothing else is fetched
				continue
			}
			ps.truncating, ps.offset = false, h.View().LogEndOffset
			continue
		}
		i, ok := topics[tp.Topic]
		if !ok {
			i = len(req.Topics)
			topics[tp.Topic] = i
			t := kmsg.NewOffsetForLeaderEpochRequestTopic()
			t.Topic = tp.Topic
			req.Topics = append(req.Topics, t)
		}
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

func (f *fetcherActor) fetchRequest(sent map[partition.TopicPartition]int32, now time.Time) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = f.cfg.BrokerID
	req.MaxWaitMillis = int32(f.cfg.MaxWait / time.Millisecond)
	req.MinBytes = f.cfg.MinBytes
	req.MaxBytes = f.cfg.MaxBytes
	req.IsolationLevel = 0
	req.SessionEpoch = -1 // KIP-227: no session, full requests
	topics := map[string]int{}
	for tp, ps := range f.parts {
		if ps.truncating || !ps.ready(now) {
			continue
		}
		h, ok := f.cfg.Replicas.Get(tp)
		if !ok {
			continue
		}
		v := h.View()
		if v.Log == nil {
			continue
		}
		ps.offset = v.LogEndOffset
		i, ok := topics[tp.Topic]
		if !ok {
			i = len(req.Topics)
			topics[tp.Topic] = i
			t := kmsg.NewFetchRequestTopic()
			t.Topic = tp.Topic
			req.Topics = append(req.Topics, t)
		}
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition = tp.Partition
		p.CurrentLeaderEpoch = ps.epoch
		p.FetchOffset = ps.offset
		p.LastFetchedEpoch = h.LatestEpoch()
		p.LogStartOffset = v.LogStartOffset
		p.PartitionMaxBytes = f.cfg.PartitionMaxBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
		sent[tp] = ps.epoch
	}
	return req
}

// current returns the state of tp if the result still applies to it.
func (f *fetcherActor) current(sent map[partition.TopicPartition]int32, tp partition.TopicPartition) (*partState, *partition.Handle) {
	ps, ok := f.parts[tp]
	if !ok || sent[tp] != ps.epoch {
		return nil, nil
	}
	h, ok := f.cfg.Replicas.Get(tp)
	if !ok {
		return nil, nil
	}
	return ps, h
}

// handle applies a result; false asks for a backoff before the next request.
func (f *fetcherActor) handle(r *result) bool {
	if r.err != nil {
		if !errors.Is(r.err, context.Canceled) {
			f.log.Warn("request to leader failed", zap.Int32("leader", f.key.leader), zap.Error(r.err))
		}
		if f.client != nil { // reconnect (maybe to a new endpoint) next time
			f.client.Close()
			f.client = nil
		}
		return false
	}
	if r.epoch != nil {
		return f.handleEpochs(r)
	}
	return f.handleFetch(r)
}

// handleEpochs truncates each partition to min(leader's end offset for our
// latest epoch, our own end offset for the epoch the leader answered)
// (KIP-101/KIP-279).
func (f *fetcherActor) handleEpochs(r *result) bool {
	const ok = true
	for _, rt := range r.epoch.Topics {
		for _, rp := range rt.Partitions {
			tp := partition.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}
			ps, h := f.current(r.sent, tp)
			if ps == nil || !ps.truncating {
				continue
			}
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				f.log.Info("OffsetForLeaderEpoch refused; retrying", zap.Stringer("partition", tp), zap.Error(err))
				f.delay(ps)
				continue
			}
			v := h.View()
			target := v.HighWatermark
			if rp.LeaderEpoch >= 0 && rp.EndOffset >= 0 {
				target = rp.EndOffset
				if v.Log != nil {
					if e, end := v.Log.EndOffsetForEpoch(rp.LeaderEpoch); e == rp.LeaderEpoch && end >= 0 {
						target = min(target, end)
					}
				}
			}
			leo, err := h.TruncateTo(ps.epoch, target, false)
			if err != nil {
				f.log.Info("truncation failed; retrying", zap.Stringer("partition", tp), zap.Error(err))
				f.delay(ps)
				continue
			}
			ps.truncating, ps.offset = false, leo
		}
	}
	return ok
}

// handleFetch appends each partition's batches and follows its errors.
func (f *fetcherActor) handleFetch(r *result) bool {
	if err := kerr.ErrorForCode(r.fetch.ErrorCode); err != nil {
		f.log.Warn("fetch refused", zap.Int32("leader", f.key.leader), zap.Error(err))
		return false
	}
	const ok = true
	for _, rt := range r.fetch.Topics {
		for i := range rt.Partitions {
			rp := &rt.Partitions[i]
			tp := partition.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}
			ps, h := f.current(r.sent, tp)
			if ps == nil || ps.truncating {
				continue
			}
			switch err := kerr.ErrorForCode(rp.ErrorCode); {
			case err == nil:
			case errors.Is(err, kerr.OffsetOutOfRange):
				if !f.outOfRange(tp, ps, h) {
					f.delay(ps)
				}
				continue
			default:
				// NOT_LEADER_OR_FOLLOWER, FENCED/UNKNOWN_LEADER_EPOCH, …: the
				// controller's next LeaderAndIsr settles it; retry meanwhile.
				f.log.Debug("fetch partition error", zap.Stringer("partition", tp), zap.Error(err))
				f.delay(ps)
				continue
			}
			if rp.DivergingEpoch.EndOffset >= 0 && rp.DivergingEpoch.Epoch >= 0 {
				target := rp.DivergingEpoch.EndOffset
				if v := h.View(); v.Log != nil {
					if e, end := v.Log.EndOffsetForEpoch(rp.DivergingEpoch.Epoch); e == rp.DivergingEpoch.Epoch && end >= 0 {
						target = min(target, end)
					}
				}
				leo, err := h.TruncateTo(ps.epoch, target, false)
				if err != nil {
					f.delay(ps)
					continue
				}
				ps.offset = leo
				continue
			}
			batches := wholeBatches(rp.RecordBatches)
			leo, err := h.AppendAsFollower(ps.epoch, batches, rp.HighWatermark, rp.LogStartOffset)
			switch {
			case errors.Is(err, partition.ErrFenced):
				continue // a newer LeaderAndIsr is being applied
			case errors.Is(err, storage.ErrUnexpectedAppendOffset):
				ps.truncating = true // our log moved under us: start over
				continue
			case err != nil:
				f.log.Warn("follower append failed", zap.Stringer("partition", tp), zap.Error(err))
				f.delay(ps)
				continue
			}
			ps.offset = leo
		}
	}
	return ok
}

// outOfRange resets a follower outside the leader's log (Kafka
// handleOutOfRangeError): behind the leader's log start → start over at
// it; ahead of the leader's log end (possible only after an unclean
// election) → truncate to it. The leader's offsets come from ListOffsets.
func (f *fetcherActor) outOfRange(tp partition.TopicPartition, ps *partState, h *partition.Handle) bool {
	earliest, latest, err := f.leaderOffsets(tp, ps.epoch)
	if err != nil {
		f.log.Info("leader offsets for out-of-range follower", zap.Stringer("partition", tp), zap.Error(err))
		return false
	}
	v := h.View()
	var leo int64
	if v.LogEndOffset > latest {
		leo, err = h.TruncateTo(ps.epoch, latest, false)
	} else {
		leo, err = h.TruncateTo(ps.epoch, earliest, true)
	}
	if err != nil {
		f.log.Warn("out-of-range reset failed", zap.Stringer("partition", tp), zap.Error(err))
		return false
	}
	f.log.Info("follower reset after OFFSET_OUT_OF_RANGE", zap.Stringer("partition", tp), zap.Int64("logEndOffset", leo),
		zap.Int64("leaderLogStartOffset", earliest), zap.Int64("leaderLatest", latest))
	ps.offset = leo
	return true
}

func (f *fetcherActor) leaderOffsets(tp partition.TopicPartition, epoch int32) (earliest, latest int64, err error) {
	if f.client == nil {
		return 0, 0, errors.New("no connection")
	}
	ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
	defer cancel()
	get := func(ts int64) (int64, error) {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = f.cfg.BrokerID
		t := kmsg.NewListOffsetsRequestTopic()
		t.Topic = tp.Topic
		p := kmsg.NewListOffsetsRequestTopicPartition()
		p.Partition, p.Timestamp, p.CurrentLeaderEpoch = tp.Partition, ts, epoch
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
		resp, err := req.RequestWith(ctx, f.client.SeedBrokers()[0])
		if err != nil {
			return 0, err
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return 0, errors.New("malformed ListOffsets response")
		}
		rp := resp.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
			return 0, err
		}
		return rp.Offset, nil
	}
	if earliest, err = get(-2); err != nil {
		return 0, 0, err
	}
	latest, err = get(-1)
	return earliest, latest, err
}

// latestEpoch is the newest leader epoch in the log of view v (-1 when
// the log has none), read from the same view the caller checked.
func latestEpoch(v *partition.View) int32 {
	if fl, ok := v.Log.(partition.FollowerLog); ok {
		if e, ok := fl.LatestEpoch(); ok {
			return e
		}
	}
	return -1
}

// wholeBatches drops a trailing partial batch (a leader may cut the last
// batch at the byte limit; Kafka clients and followers skip it).
func wholeBatches(b []byte) []byte {
	n := 0
	for len(b)-n >= record.HeaderSize {
		h, err := record.ParseHeader(b[n:])
		if err != nil || h.Size() > len(b)-n {
			break
		}
		n += h.Size()
	}
	return b[:n]
}

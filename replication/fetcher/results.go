package fetcher

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/partition"
	"gregor/storage/record"
)

// current returns the state of tp if the result still applies to it.
func (f *fetcherActor) current(sent map[partition.TopicPartition]int32, tp partition.TopicPartition) (*partState, *partition.Handle) {
	ps, ok := f.parts[tp]
	if !ok || sent[tp] != ps.epoch || ps.op != 0 {
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
		f.closeConns() // reconnect (maybe to a new endpoint) next time
		return false
	}
	switch {
	case r.epoch != nil:
		f.handleEpochs(r)
	case r.offsets != nil:
		f.handleOffsets(r)
	case r.fetch != nil:
		return f.handleFetch(r)
	}
	return true
}

// handleEpochs truncates each partition to min(leader's end offset for our
// latest epoch, our own end offset for the epoch the leader answered)
// (KIP-101/KIP-279).
func (f *fetcherActor) handleEpochs(r *result) {
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
			f.truncate(tp, ps, h, opTruncate, target, false)
		}
	}
}

// handleOffsets resets each out-of-range follower (Kafka
// handleOutOfRangeError): behind the leader's log start → start over at
// it; ahead of the leader's log end (possible only after an unclean
// election) → truncate to it.
func (f *fetcherActor) handleOffsets(r *result) {
	type span struct {
		earliest, latest int64
		err              error
		n                int
	}
	spans := map[partition.TopicPartition]*span{}
	collect := func(resp []kmsg.ListOffsetsResponseTopic, set func(*span, int64)) {
		for _, rt := range resp {
			for _, rp := range rt.Partitions {
				tp := partition.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}
				s := spans[tp]
				if s == nil {
					s = &span{}
					spans[tp] = s
				}
				s.n++
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil && s.err == nil {
					s.err = err
				}
				set(s, rp.Offset)
			}
		}
	}
	collect(r.offsets.earliest.Topics, func(s *span, o int64) { s.earliest = o })
	collect(r.offsets.latest.Topics, func(s *span, o int64) { s.latest = o })
	for tp, s := range spans {
		ps, h := f.current(r.sent, tp)
		if ps == nil || !ps.resetting {
			continue
		}
		if s.err == nil && s.n != 2 {
			s.err = errors.New("malformed ListOffsets response")
		}
		v := h.View()
		if s.err == nil && v.Log == nil {
			s.err = errors.New("follower log unavailable")
		}
		if s.err != nil {
			f.log.Info("leader offsets for out-of-range follower", zap.Stringer("partition", tp), zap.Error(s.err))
			f.delay(ps)
			continue
		}
		if v.LogEndOffset > s.latest {
			f.truncate(tp, ps, h, opReset, s.latest, false)
		} else {
			f.truncate(tp, ps, h, opReset, s.earliest, true)
		}
	}
}

// handleFetch hands each partition's batches to its partition actor and
// follows its errors; false asks for a backoff.
func (f *fetcherActor) handleFetch(r *result) bool {
	if err := kerr.ErrorForCode(r.fetch.ErrorCode); err != nil {
		f.log.Warn("fetch refused", zap.Int32("leader", f.key.leader), zap.Error(err))
		return false
	}
	for _, rt := range r.fetch.Topics {
		for i := range rt.Partitions {
			rp := &rt.Partitions[i]
			tp := partition.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}
			ps, h := f.current(r.sent, tp)
			if ps == nil || ps.truncating || ps.resetting {
				continue
			}
			switch err := kerr.ErrorForCode(rp.ErrorCode); {
			case err == nil:
			case errors.Is(err, kerr.OffsetOutOfRange):
				ps.resetting = true // ListOffsets next
				continue
			default:
				// NOT_LEADER_OR_FOLLOWER, FENCED/UNKNOWN_LEADER_EPOCH, …: the
				// controller's next LeaderAndIsr settles it; retry meanwhile.
				f.log.Debug("fetch partition error", zap.Stringer("partition", tp), zap.Error(err))
				f.delay(ps)
				continue
			}
			ps.leaderHW, ps.hwKnown = rp.HighWatermark, true
			v := h.View()
			if rp.DivergingEpoch.EndOffset >= 0 && rp.DivergingEpoch.Epoch >= 0 {
				target := rp.DivergingEpoch.EndOffset
				if v.Log != nil {
					if e, end := v.Log.EndOffsetForEpoch(rp.DivergingEpoch.Epoch); e == rp.DivergingEpoch.Epoch && end >= 0 {
						target = min(target, end)
					}
				}
				f.truncate(tp, ps, h, opDiverge, target, false)
				continue
			}
			batches := wholeBatches(rp.RecordBatches)
			if f.cfg.Quota.IsThrottled(tp.Topic, tp.Partition) {
				// in sync or not, as Kafka's processPartitionData
				f.cfg.Quota.Record(int64(len(batches)), time.Now())
			}
			if len(batches) == 0 && v.Log != nil && v.HighWatermark == min(rp.HighWatermark, v.LogEndOffset) && rp.LogStartOffset <= v.LogStartOffset {
				continue // nothing new: spare the partition actor a message
			}
			f.append(tp, ps, h, batches, rp.HighWatermark, rp.LogStartOffset)
		}
	}
	return true
}

// latestEpoch is the newest leader epoch in the log of view v (-1 when
// the log has none), read from the same view the caller checked.
func latestEpoch(v *partition.View) int32 {
	if v.Log == nil {
		return -1
	}
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

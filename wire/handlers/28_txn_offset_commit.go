package handlers

// TxnOffsetCommit: v0-4
//
// Behaviour (Kafka's KafkaApis.handleTxnOffsetCommitRequest and
// GroupCoordinator.handleTxnCommitOffsets, KIP-98 / KIP-447):
//   - Partitions of topics (or partition numbers) the cluster metadata does
//     not have get UNKNOWN_TOPIC_OR_PARTITION here; the rest go to the
//     group coordinator (GroupSource.TxnOffsetCommit).
//   - The coordinator checks the group (INVALID_GROUP_ID for "",
//     NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, then for v3+ requests
//     that name a member or generation UNKNOWN_MEMBER_ID,
//     FENCED_INSTANCE_ID, ILLEGAL_GENERATION; an unknown group is created
//     Empty), appends the offsets to __consumer_offsets in a
//     transactional batch of the producer and answers once the append is
//     done. The offsets stay pending (OffsetFetch shows the previous
//     commit; require_stable answers UNSTABLE_OFFSET_COMMIT) until the
//     transaction's COMMIT marker makes them the committed offsets (the
//     ABORT marker drops them).
//   - OFFSET_METADATA_TOO_LARGE per partition beyond
//     offset.metadata.max.bytes.
//
//   - KIP-890 (Kafka 3.6+, transaction.partition.verification.enable):
//     before the group sees the offsets, the transaction is verified with
//     its coordinator on the group's __consumer_offsets partition
//     (txn_offset_commit_verify.go); a transaction that did not add that
//     partition (no AddOffsetsToTxn) is refused, every partition with one
//     code, and nothing is written.
//
// Version notes: v1 same as v0; v2 LeaderEpoch; v3 flexible, Generation,
// MemberID, InstanceID (KIP-447); v4 answers TRANSACTION_ABORTABLE for a
// partition not in the transaction (older versions INVALID_TXN_STATE). v0–v1 answer
// COORDINATOR_LOAD_IN_PROGRESS as COORDINATOR_NOT_AVAILABLE (KAFKA-7296).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/metadata"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(28, 0, 4, handleTxnOffsetCommit) }

func handleTxnOffsetCommit(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.TxnOffsetCommitRequest)
	// Write on the transactional id, Read on the group, Read on each
	// topic (Kafka's checks, in that order).
	if b.Authorizer != nil {
		code := int16(0)
		switch {
		case !b.authorize(rc, acl.OpWrite, acl.ResourceTransactionalID, req.TransactionalID):
			code = kerr.TransactionalIDAuthorizationFailed.Code
		case !b.authorize(rc, acl.OpRead, acl.ResourceGroup, req.Group):
			code = kerr.GroupAuthorizationFailed.Code
		}
		if code != 0 {
			return wire.Now(wire.Response{Msg: fillTxnOffsetCommit(req, code)})
		}
	}
	readable := filterAuthorized(b, rc, acl.OpRead, acl.ResourceTopic, req.Topics, func(t kmsg.TxnOffsetCommitRequestTopic) string { return t.Topic })
	// known says whether each requested partition exists in the cluster
	// metadata; the coordinator sees only those that do.
	known := make([][]bool, len(req.Topics))
	fwd := *req
	fwd.Topics = nil
	var snap *metadata.Snapshot
	if b.Topics != nil {
		snap = b.Topics.Snapshot()
	}
	for ti, t := range req.Topics {
		known[ti] = make([]bool, len(t.Partitions))
		var ft *kmsg.TxnOffsetCommitRequestTopic
		for pi, p := range t.Partitions {
			if !allowed(readable, t.Topic) {
				continue
			}
			if snap != nil {
				if _, ok := snap.Partition(t.Topic, p.Partition); !ok {
					continue
				}
			}
			known[ti][pi] = true
			if ft == nil {
				fwd.Topics = append(fwd.Topics, kmsg.TxnOffsetCommitRequestTopic{Topic: t.Topic})
				ft = &fwd.Topics[len(fwd.Topics)-1]
			}
			ft.Partitions = append(ft.Partitions, p)
		}
	}
	merge := func(coord *kmsg.TxnOffsetCommitResponse) *kmsg.TxnOffsetCommitResponse {
		resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		// The coordinator answers fwd's partitions in fwd's order.
		var got []int16
		if coord != nil {
			resp.ThrottleMillis = coord.ThrottleMillis
			for _, t := range coord.Topics {
				for _, p := range t.Partitions {
					got = append(got, p.ErrorCode)
				}
			}
		}
		i := 0
		for ti, t := range req.Topics {
			rt := kmsg.NewTxnOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for pi, p := range t.Partitions {
				rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				rp.Partition = p.Partition
				switch {
				case !allowed(readable, t.Topic):
					rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				case !known[ti][pi]:
					rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				case coord == nil:
					rp.ErrorCode = noCoordinator
				case i < len(got):
					rp.ErrorCode = got[i]
					i++
				default:
					rp.ErrorCode = kerr.UnknownServerError.Code
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	if len(fwd.Topics) == 0 {
		// Nothing for the coordinator (Kafka answers without asking it).
		r := merge(kmsg.NewPtrTxnOffsetCommitResponse())
		return wire.Now(wire.Response{Msg: r})
	}
	if b.Groups == nil {
		return wire.Now(wire.Response{Msg: merge(nil)})
	}
	if b.TxnVerifier == nil || req.Group == "" {
		// No verification (transaction.partition.verification.enable=false),
		// or a request the coordinator refuses before any (INVALID_GROUP_ID,
		// Kafka's validateGroupStatus).
		ch := make(chan wire.Response, 1)
		b.Groups.TxnOffsetCommit(reqCtx(rc), &fwd, 0, func(r *kmsg.TxnOffsetCommitResponse) {
			ch <- wire.Response{Msg: merge(r)}
		})
		return wire.Later(ch)
	}
	return b.later(func() wire.Response {
		guard, code := b.verifyTxnOffsetCommit(rc, req)
		if code != 0 {
			return wire.Response{Msg: merge(fillTxnOffsetCommit(&fwd, code))}
		}
		ch := make(chan *kmsg.TxnOffsetCommitResponse, 1)
		b.Groups.TxnOffsetCommit(reqCtx(rc), &fwd, guard, func(r *kmsg.TxnOffsetCommitResponse) { ch <- r })
		// The coordinator always answers (bounded by its request timeout);
		// the connection or the handlers closing end the wait sooner.
		var done <-chan struct{}
		if rc.Ctx != nil {
			done = rc.Ctx.Done()
		}
		select {
		case r := <-ch:
			return wire.Response{Msg: merge(r)}
		case <-done:
		case <-b.closing():
		}
		return wire.Response{Msg: merge(fillTxnOffsetCommit(&fwd, kerr.CoordinatorNotAvailable.Code))}
	})
}

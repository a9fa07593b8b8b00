package handlers

// OffsetCommit: v0-8
//
// Behaviour (Kafka's GroupCoordinator.handleCommitOffsets):
//   - Offsets are appended to __consumer_offsets (OffsetCommitKey/Value)
//     and answered only once committed (acks=all semantics).
//   - Generation -1 with no member id is a "simple" commit (assign()-style
//     consumers), accepted while the group has no members (it creates an
//     Empty group); otherwise the member and generation are checked:
//     UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, FENCED_INSTANCE_ID,
//     REBALANCE_IN_PROGRESS in CompletingRebalance (commits are accepted in
//     PreparingRebalance).
//   - OFFSET_METADATA_TOO_LARGE per partition beyond
//     offset.metadata.max.bytes (default 4096, counted in UTF-16 units as
//     Kafka's String.length), the others still committed; an error of the
//     group's checks above is every partition's. Metadata strings are kept.
//
// Version notes: v0 no generation and stored in ZooKeeper at
// /consumers/<group>/offsets/<topic>/<partition>, not __consumer_offsets,
// by any broker (offsets_zk.go); v1 per-partition commit
// Timestamp; v2–v4 RetentionTimeMillis (an explicit expire time);
// v3 ThrottleMillis; v6 LeaderEpoch; v7 InstanceID; v8 flexible.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(8, 0, 8, handleOffsetCommit) }

func handleOffsetCommit(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.OffsetCommitRequest)
	if req.Version == 0 {
		return b.offsetCommitV0(rc, req) // ZooKeeper, /consumers (offsets_zk.go)
	}
	if b.Groups == nil {
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		resp.Topics = offsetCommitErrors(req.Topics, noCoordinator)
		return wire.Now(wire.Response{Msg: resp})
	}
	req, finish, now := b.authorizeOffsetCommit(rc, req) // group Read, topic Read
	if now != nil {
		return wire.Now(wire.Response{Msg: now})
	}
	reply, fn := groupReply[*kmsg.OffsetCommitResponse]()
	b.Groups.OffsetCommit(reqCtx(rc), req, then(fn, finish))
	return reply
}

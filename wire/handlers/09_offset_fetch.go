package handlers

// OffsetFetch: v0-8
//
// Behaviour (Kafka's GroupCoordinator.handleFetchOffsets):
//   - Offset -1 and empty metadata for partitions without a commit (and
//     for unknown groups); a null topic list (v2+) returns every committed
//     partition of the group.
//   - require_stable (v7+) never waits: a partition whose commit is still
//     being appended to __consumer_offsets gets UNSTABLE_OFFSET_COMMIT.
//
// Version notes: v0 reads /consumers/<group>/offsets/<topic>/<partition>
// in ZooKeeper on any broker (offsets_zk.go); v1 the same fields, offsets
// from __consumer_offsets;
// v2 top-level ErrorCode and null topics = all; v3 ThrottleMillis;
// v5 LeaderEpoch; v6 flexible; v7 RequireStable; v8 several groups.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(9, 0, 8, handleOffsetFetch) }

func handleOffsetFetch(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.OffsetFetchRequest)
	if req.Version == 0 {
		return b.offsetFetchV0(rc, req) // ZooKeeper, /consumers (offsets_zk.go)
	}
	if b.Groups == nil {
		resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
		resp.ErrorCode = noCoordinator
		for _, g := range req.Groups {
			rg := kmsg.NewOffsetFetchResponseGroup()
			rg.Group, rg.ErrorCode = g.Group, noCoordinator
			resp.Groups = append(resp.Groups, rg)
		}
		return wire.Now(wire.Response{Msg: resp})
	}
	req, finish, now := b.authorizeOffsetFetch(rc, req) // group Describe, topic Describe
	if now != nil {
		return wire.Now(wire.Response{Msg: now})
	}
	reply, fn := groupReply[*kmsg.OffsetFetchResponse]()
	b.Groups.OffsetFetch(reqCtx(rc), req, then(fn, finish))
	return reply
}

package handlers

import (
	"context"
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

// GroupSource is the group coordinator as the group handlers (FindCoordinator,
// JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch,
// OffsetDelete, DescribeGroups, ListGroups, DeleteGroups, TxnOffsetCommit)
// see it.
// *coordinator.Coordinator (actors/coordinator) implements it.
//
// Every method takes the decoded request and must call reply exactly once
// with the response at the request's version, now or later and from any
// goroutine (JoinGroup and SyncGroup wait for the rebalance). Methods must
// not block: they run on the connection's reader goroutine.
type GroupSource interface {
	FindCoordinator(ctx context.Context, req *kmsg.FindCoordinatorRequest, reply func(*kmsg.FindCoordinatorResponse))
	// JoinGroup: clientID is the request header's client id, clientHost
	// the client's address as Kafka shows it ("/127.0.0.1").
	JoinGroup(ctx context.Context, clientID, clientHost string, req *kmsg.JoinGroupRequest, reply func(*kmsg.JoinGroupResponse))
	SyncGroup(ctx context.Context, req *kmsg.SyncGroupRequest, reply func(*kmsg.SyncGroupResponse))
	Heartbeat(ctx context.Context, req *kmsg.HeartbeatRequest, reply func(*kmsg.HeartbeatResponse))
	LeaveGroup(ctx context.Context, req *kmsg.LeaveGroupRequest, reply func(*kmsg.LeaveGroupResponse))
	OffsetCommit(ctx context.Context, req *kmsg.OffsetCommitRequest, reply func(*kmsg.OffsetCommitResponse))
	OffsetFetch(ctx context.Context, req *kmsg.OffsetFetchRequest, reply func(*kmsg.OffsetFetchResponse))
	OffsetDelete(ctx context.Context, req *kmsg.OffsetDeleteRequest, reply func(*kmsg.OffsetDeleteResponse))
	DescribeGroups(ctx context.Context, req *kmsg.DescribeGroupsRequest, reply func(*kmsg.DescribeGroupsResponse))
	ListGroups(ctx context.Context, req *kmsg.ListGroupsRequest, reply func(*kmsg.ListGroupsResponse))
	DeleteGroups(ctx context.Context, req *kmsg.DeleteGroupsRequest, reply func(*kmsg.DeleteGroupsResponse))
	// TxnOffsetCommit stages a transactional producer's offsets for the
	// group (KIP-98, KIP-447), visible once the transaction commits. The
	// handler has already answered the partitions of unknown topics
	// (UNKNOWN_TOPIC_OR_PARTITION) and passes only the others; reply's
	// response carries exactly the request's partitions.
	// verificationGuard is the KIP-890 guard the handler verified the
	// transaction with on the group's __consumer_offsets partition
	// (partition.Handle.StartTxnVerification; 0: none needed, or
	// verification off): the offsets' append carries it.
	TxnOffsetCommit(ctx context.Context, req *kmsg.TxnOffsetCommitRequest, verificationGuard uint64, reply func(*kmsg.TxnOffsetCommitResponse))
	// PartitionFor is the __consumer_offsets partition holding group
	// (abs(hashCode(group)) % offsets.topic.num.partitions).
	PartitionFor(group string) int32
}

// groupReply returns the Later reply a group handler hands back and the
// callback that fills it.
func groupReply[T kmsg.Response]() (wire.Reply, func(T)) {
	ch := make(chan wire.Response, 1)
	return wire.Later(ch), func(r T) { ch <- wire.Response{Msg: r} }
}

// reqCtx is the request's context (Background when the server gave none).
func reqCtx(rc *wire.RequestContext) context.Context {
	if rc.Ctx != nil {
		return rc.Ctx
	}
	return context.Background()
}

// clientHost is the client address the way Kafka reports it in
// DescribeGroups ("/" + IP).
func clientHost(rc *wire.RequestContext) string {
	if rc.Remote == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(rc.Remote.String())
	if err != nil {
		host = rc.Remote.String()
	}
	return "/" + host
}

// noCoordinator is the code answered when the broker runs without a group
// coordinator: clients retry COORDINATOR_NOT_AVAILABLE.
var noCoordinator = kerr.CoordinatorNotAvailable.Code

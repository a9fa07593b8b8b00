package handlers

// AlterPartitionReassignments: v0
//
// Behaviour (controller.AlterPartitionReassignments, KIP-455): each
// partition with replicas starts moving to them (RS = target ∪ original
// until the target replicas are in sync, then the target alone); a
// partition with null replicas cancels its reassignment. Per partition:
// UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT (empty or
// duplicate replicas, brokers not alive), NO_REASSIGNMENT_IN_PROGRESS
// (cancel with none under way); a partition named twice answers
// INVALID_REQUEST. A broker that is not the controller forwards the
// request to it (forward.go, KIP-590); NOT_CONTROLLER or REQUEST_TIMED_OUT
// for the whole request when that fails.
//
// Version notes: v0 flexible. v1 (KIP-860, AllowReplicationFactorChange)
// is not served.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/replication/controller"
	"gregor/wire"
	"gregor/wire/security/acl"
)

// ReassignSource is the controller side of reassignment and elections
// (APIs 43, 45, 46). *controller.Controller implements it; the handlers
// find it on Broker.Cluster and answer NOT_CONTROLLER without one.
type ReassignSource interface {
	AlterPartitionReassignments(reqs map[partition.TopicPartition][]int32) (map[partition.TopicPartition]error, error)
	ListPartitionReassignments(filter []partition.TopicPartition) ([]controller.PartitionReassignment, error)
	ElectLeaders(typ controller.ElectionType, tps []partition.TopicPartition) (map[partition.TopicPartition]error, error)
}

var _ ReassignSource = (*controller.Controller)(nil)

func reassignSource(b *Broker) (ReassignSource, bool) {
	rs, ok := b.Cluster.(ReassignSource)
	return rs, ok && b.Cluster != nil
}

func init() { register(45, 0, 0, handleAlterPartitionReassignments) }

func handleAlterPartitionReassignments(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.AlterPartitionAssignmentsRequest)
	if !b.authorizeCluster(rc, acl.OpAlter) { // Kafka's check
		resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	return b.async(func() kmsg.Response { return alterPartitionReassignments(b, req) })
}

func alterPartitionReassignments(b *Broker, req *kmsg.AlterPartitionAssignmentsRequest) *kmsg.AlterPartitionAssignmentsResponse {
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	count := map[partition.TopicPartition]int{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			count[partition.TopicPartition{Topic: t.Topic, Partition: p.Partition}]++
		}
	}
	reqs := map[partition.TopicPartition][]int32{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := partition.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			if count[tp] == 1 {
				reqs[tp] = p.Replicas
			}
		}
	}
	var results map[partition.TopicPartition]error
	var err error
	src, ok := reassignSource(b)
	if !ok {
		err = controller.ErrNotController
	} else {
		results, err = src.AlterPartitionReassignments(reqs)
	}
	if isNotController(err) {
		fwd := *req // kgo sets the version it negotiates on what it sends
		r, ferr, sent, again := b.forwardWhole(&fwd, req.TimeoutMillis, func(r kmsg.Response) bool {
			return r.(*kmsg.AlterPartitionAssignmentsResponse).ErrorCode == kerr.NotController.Code
		})
		switch {
		case sent && ferr == nil:
			return r.(*kmsg.AlterPartitionAssignmentsResponse)
		case again && ok: // this broker became the controller meanwhile
			results, err = src.AlterPartitionReassignments(reqs)
		case ferr != nil:
			err = ferr
		}
	}
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = controller.Code(err)
		return resp
	}
	for _, t := range req.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			tp := partition.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition = p.Partition
			if count[tp] > 1 {
				rp.ErrorCode = kerr.InvalidRequest.Code
				msg := "Duplicate partition in request."
				rp.ErrorMessage = &msg
			} else {
				rp.ErrorCode, rp.ErrorMessage = controller.Code(results[tp])
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

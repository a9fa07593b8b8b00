package handlers

// ListPartitionReassignments: v0
//
// Behaviour (controller.ListPartitionReassignments, KIP-455): the ongoing
// reassignments, each with its full replica set and the replicas being
// added and removed; null topics = all of them, else only the listed
// partitions that are being reassigned (others are left out, as Kafka
// does). Not the controller: forwarded to it (forward.go, KIP-590).
//
// Version notes: v0 flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/replication/controller"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(46, 0, 0, handleListPartitionReassignments) }

func handleListPartitionReassignments(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.ListPartitionReassignmentsRequest)
	if !b.authorizeCluster(rc, acl.OpDescribe) { // Kafka's check
		resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	return b.async(func() kmsg.Response { return listPartitionReassignments(b, req) })
}

func listPartitionReassignments(b *Broker, req *kmsg.ListPartitionReassignmentsRequest) *kmsg.ListPartitionReassignmentsResponse {
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	var filter []partition.TopicPartition
	if req.Topics != nil {
		filter = []partition.TopicPartition{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				filter = append(filter, partition.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
	}
	var list []controller.PartitionReassignment
	var err error
	src, ok := reassignSource(b)
	if !ok {
		err = controller.ErrNotController
	} else {
		list, err = src.ListPartitionReassignments(filter)
	}
	if isNotController(err) {
		fwd := *req // kgo sets the version it negotiates on what it sends
		r, ferr, sent, again := b.forwardWhole(&fwd, req.TimeoutMillis, func(r kmsg.Response) bool {
			return r.(*kmsg.ListPartitionReassignmentsResponse).ErrorCode == kerr.NotController.Code
		})
		switch {
		case sent && ferr == nil:
			return r.(*kmsg.ListPartitionReassignmentsResponse)
		case again && ok: // this broker became the controller meanwhile
			list, err = src.ListPartitionReassignments(filter)
		case ferr != nil:
			err = ferr
		}
	}
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = controller.Code(err)
		return resp
	}
	idx := map[string]int{}
	for _, r := range list {
		i, ok := idx[r.Topic]
		if !ok {
			t := kmsg.NewListPartitionReassignmentsResponseTopic()
			t.Topic = r.Topic
			resp.Topics = append(resp.Topics, t)
			i = len(resp.Topics) - 1
			idx[r.Topic] = i
		}
		p := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		p.Partition = r.Partition
		p.Replicas, p.AddingReplicas, p.RemovingReplicas = nonNil(r.Replicas), nonNil(r.Adding), nonNil(r.Removing)
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, p)
	}
	return resp
}

func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

package handlers

// CreatePartitions: v0-3
//
// Behaviour (controller.CreatePartitions, Kafka AdminZkClient.addPartitions):
// the count must exceed the current one (INVALID_PARTITIONS otherwise); a
// manual assignment needs one replica list per new partition with the
// topic's replication factor and live brokers (INVALID_REPLICA_ASSIGNMENT);
// an unknown topic answers UNKNOWN_TOPIC_OR_PARTITION; a topic named twice
// answers INVALID_REQUEST for each entry. ValidateOnly checks only. New
// partitions are started before the response.
//
// Version notes: v1 same as v0 (throttle after response); v2 flexible;
// v3: THROTTLING_QUOTA_EXCEEDED per topic (KIP-599 strict controller
// mutation quota; before v3 the partitions are added and throttled).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/quota/clientquota"
	"gregor/replication/controller"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(37, 0, 3, handleCreatePartitions) }

func handleCreatePartitions(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.CreatePartitionsRequest)
	// Alter on each topic (Kafka's check).
	alterable := filterAuthorized(b, rc, acl.OpAlter, acl.ResourceTopic, req.Topics, func(t kmsg.CreatePartitionsRequestTopic) string { return t.Topic })
	var mq *clientquota.MutationQuota
	if !req.ValidateOnly {
		// KIP-599: strict from v3 (THROTTLING_QUOTA_EXCEEDED), permissive
		// before; charged once, here (forward_quota.go).
		mq = b.mutationQuota(rc, req.Version >= 3)
	}
	return b.async(func() kmsg.Response {
		resp := createPartitions(b, req, alterable, mq)
		resp.ThrottleMillis = throttleMillis(mq.Throttle())
		return resp
	})
}

// createPartitions grows req's topics; alterable (nil: all) holds those
// the client may alter. mq (nil: unbounded) is the request's controller
// mutation quota: as ZkAdminManager records after validation, the
// increases are validated first and each valid one takes the partitions
// it adds from the quota, in request order; one the strict quota refuses
// answers THROTTLING_QUOTA_EXCEEDED and adds nothing.
func createPartitions(b *Broker, req *kmsg.CreatePartitionsRequest, alterable map[string]bool, mq *clientquota.MutationQuota) *kmsg.CreatePartitionsResponse {
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	count := map[string]int{}
	for _, t := range req.Topics {
		count[t.Topic]++
	}
	var incs []controller.PartitionIncrease
	for _, t := range req.Topics {
		if count[t.Topic] > 1 || !allowed(alterable, t.Topic) {
			continue
		}
		inc := controller.PartitionIncrease{Topic: t.Topic, Count: t.Count}
		if t.Assignment != nil {
			inc.Assignment = make([][]int32, 0, len(t.Assignment))
			for _, a := range t.Assignment {
				inc.Assignment = append(inc.Assignment, a.Replicas)
			}
		}
		incs = append(incs, inc)
	}
	byName := make(map[string]error, len(incs))
	if mq != nil {
		snap := b.Topics.Snapshot()
		checked := b.createPartitionsVia(newestVersion, req.TimeoutMillis, incs, true)
		var admitted []controller.PartitionIncrease
		for i, inc := range incs {
			if i < len(checked) && checked[i] != nil {
				byName[inc.Topic] = checked[i]
				continue
			}
			add := int(inc.Count)
			if t, ok := snap.Topics[inc.Topic]; ok {
				add -= len(t.Partitions)
			}
			if !mq.Record(add) {
				byName[inc.Topic] = &controller.Error{Code: kerr.ThrottlingQuotaExceeded, Message: kerr.ThrottlingQuotaExceeded.Description}
				continue
			}
			admitted = append(admitted, inc)
		}
		incs = admitted
	}
	errs := b.createPartitionsVia(req.Version, req.TimeoutMillis, incs, req.ValidateOnly)
	for i, inc := range incs {
		byName[inc.Topic] = errs[i]
	}
	for _, t := range req.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		if count[t.Topic] > 1 {
			rt.ErrorCode = kerr.InvalidRequest.Code
			msg := "Duplicate topic in request."
			rt.ErrorMessage = &msg
		} else if !allowed(alterable, t.Topic) {
			msg := "The topic authorization is failed."
			rt.ErrorCode, rt.ErrorMessage = kerr.TopicAuthorizationFailed.Code, &msg
		} else {
			rt.ErrorCode, rt.ErrorMessage = controller.Code(byName[t.Topic])
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

package handlers

// CreateTopics: v0-7
//
// Behaviour (Kafka's ZkAdminManager.createTopics rules, see
// controller.CreateTopics): INVALID_TOPIC_EXCEPTION for illegal names and
// '.'/'_' collisions, TOPIC_ALREADY_EXISTS, INVALID_PARTITIONS,
// INVALID_REPLICATION_FACTOR (more than the live brokers), INVALID_REQUEST
// when counts and a manual assignment are both set,
// INVALID_REPLICA_ASSIGNMENT, INVALID_CONFIG. -1 partitions / replication
// factor take num.partitions / default.replication.factor (v4+ clients send
// them). A topic named twice in one request fails with INVALID_REQUEST for
// each entry ("Found multiple entries for this topic."), and
// __cluster_metadata with INVALID_REQUEST, as Kafka 3.9. Creation is
// synchronous: the topic is usable when the response is sent, so
// TimeoutMillis is not needed.
//
// Version notes:
//   - v1: ValidateOnly, ErrorMessage.  v2: ThrottleMillis.
//   - v3: same as v2.  v4: -1 defaults allowed (KIP-464).
//   - v5: flexible; NumPartitions, ReplicationFactor and Configs in the
//     response (KIP-525).  v6: THROTTLING_QUOTA_EXCEEDED per topic
//     (KIP-599 strict quota; before v6 topics are created and throttled).
//     v7: TopicID.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"gregor/quota/clientquota"

	"gregor/replication/controller"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(19, 0, 7, handleCreateTopics) }

// clusterMetadataTopic is KRaft's metadata log (Topic.CLUSTER_METADATA_TOPIC_NAME):
// Kafka 3.9 refuses to create it by CreateTopics in ZooKeeper mode too
// (INVALID_REQUEST, before the duplicate and authorization checks).
const clusterMetadataTopic = "__cluster_metadata"

func handleCreateTopics(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.CreateTopicsRequest)
	// Create on the cluster, or else on each topic (Kafka's check):
	// TOPIC_AUTHORIZATION_FAILED for the others.
	// A topic's configs, partition count, replication factor and id are
	// shown only with DescribeConfigs on it (ZkAdminManager fills them
	// for those alone); without it ConfigErrorCode is
	// TOPIC_AUTHORIZATION_FAILED (v5+), unless its creation was tried
	// and failed, which resets it to NONE (KafkaApis).
	topicName := func(t kmsg.CreateTopicsRequestTopic) string { return t.Topic }
	var creatable, configsVisible map[string]bool
	if b.Authorizer != nil {
		if !b.authorizeQuiet(rc, acl.OpCreate, acl.ResourceCluster, acl.ClusterName) {
			creatable = filterAuthorized(b, rc, acl.OpCreate, acl.ResourceTopic, req.Topics, topicName)
		}
		configsVisible = map[string]bool{}
		for _, t := range req.Topics {
			configsVisible[t.Topic] = b.authorizeQuiet(rc, acl.OpDescribeConfigs, acl.ResourceTopic, t.Topic)
		}
	}
	var mq *clientquota.MutationQuota
	if !req.ValidateOnly {
		// KIP-599: strict from v6 (THROTTLING_QUOTA_EXCEEDED), permissive
		// before; charged once, here (forward_quota.go).
		mq = b.mutationQuota(rc, req.Version >= 6)
	}
	return b.async(func() kmsg.Response {
		resp := createTopics(b, req, creatable, mq)
		resp.ThrottleMillis = throttleMillis(mq.Throttle())
		count := map[string]int{}
		for _, t := range req.Topics {
			count[t.Topic]++
		}
		for i := range resp.Topics {
			rt := &resp.Topics[i]
			if allowed(configsVisible, rt.Topic) {
				continue
			}
			rt.Configs, rt.NumPartitions, rt.ReplicationFactor, rt.TopicID = nil, -1, -1, [16]byte{}
			tried := count[rt.Topic] == 1 && allowed(creatable, rt.Topic)
			if rt.Topic != clusterMetadataTopic && (rt.ErrorCode == 0 || !tried) {
				rt.ConfigErrorCode = kerr.TopicAuthorizationFailed.Code
			}
		}
		return resp
	})
}

// createTopics creates req's topics; creatable (nil: all) holds those the
// client may create.
// mq (nil: unbounded) is the request's controller mutation quota: as
// ZkAdminManager records after a topic's validation, the topics are
// first validated (validate-only) and each valid one takes its partition
// count from the quota, in request order; a topic the strict quota
// refuses answers THROTTLING_QUOTA_EXCEEDED and is not created, one that
// fails validation answers its error and costs nothing.
func createTopics(b *Broker, req *kmsg.CreateTopicsRequest, creatable map[string]bool, mq *clientquota.MutationQuota) *kmsg.CreateTopicsResponse {
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	count := map[string]int{}
	for _, t := range req.Topics {
		count[t.Topic]++
	}
	var todo []controller.NewTopic
	throttled := map[string]bool{}
	for _, t := range req.Topics {
		if t.Topic == clusterMetadataTopic || count[t.Topic] > 1 || !allowed(creatable, t.Topic) {
			continue
		}
		nt := controller.NewTopic{Name: t.Topic, NumPartitions: t.NumPartitions, ReplicationFactor: t.ReplicationFactor,
			Configs: map[string]string{}}
		if len(t.ReplicaAssignment) > 0 {
			nt.Assignment = map[int32][]int32{}
			for _, a := range t.ReplicaAssignment {
				nt.Assignment[a.Partition] = a.Replicas
			}
		}
		for _, c := range t.Configs {
			if c.Value != nil {
				nt.Configs[c.Name] = *c.Value
			}
		}
		todo = append(todo, nt)
	}
	byName := make(map[string]controller.CreatedTopic, len(todo))
	if mq != nil {
		// Validate first; only the valid topics are counted, and only
		// those the quota admits are created.
		var admitted []controller.NewTopic
		checked := b.createTopicsVia(newestVersion, req.TimeoutMillis, todo, true)
		for i, nt := range todo {
			if i < len(checked) && checked[i].Err != nil {
				byName[nt.Name] = checked[i]
				continue
			}
			parts := int(nt.NumPartitions)
			if i < len(checked) && checked[i].NumPartitions > 0 {
				parts = int(checked[i].NumPartitions)
			} else if len(nt.Assignment) > 0 {
				parts = len(nt.Assignment)
			}
			if !mq.Record(parts) {
				throttled[nt.Name] = true
				continue
			}
			admitted = append(admitted, nt)
		}
		todo = admitted
	}
	for _, r := range b.createTopicsVia(req.Version, req.TimeoutMillis, todo, req.ValidateOnly) {
		byName[r.Name] = r
	}
	for _, t := range req.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		rt.NumPartitions, rt.ReplicationFactor = -1, -1
		if t.Topic == clusterMetadataTopic {
			rt.ErrorCode = kerr.InvalidRequest.Code
			msg := "Creation of internal topic " + clusterMetadataTopic + " is prohibited."
			rt.ErrorMessage = &msg
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		if count[t.Topic] > 1 {
			rt.ErrorCode = kerr.InvalidRequest.Code
			msg := "Found multiple entries for this topic." // KafkaApis, since 2.2
			rt.ErrorMessage = &msg
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		r, ok := byName[t.Topic]
		if throttled[t.Topic] {
			r.Err = &controller.Error{Code: kerr.ThrottlingQuotaExceeded, Message: kerr.ThrottlingQuotaExceeded.Description}
		}
		if !ok && !allowed(creatable, t.Topic) {
			r.Err = &controller.Error{Code: kerr.TopicAuthorizationFailed, Message: "Authorization failed."}
		}
		rt.ErrorCode, rt.ErrorMessage = controller.Code(r.Err)
		if r.Err == nil {
			rt.TopicID = r.TopicID
			rt.NumPartitions, rt.ReplicationFactor = r.NumPartitions, r.ReplicationFactor
			for _, e := range r.Configs {
				c := kmsg.NewCreateTopicsResponseTopicConfig()
				c.Name = e.Name
				if !e.Sensitive {
					val := e.Value
					c.Value = &val
				}
				c.Source = int8(e.Source)
				c.ReadOnly, c.IsSensitive = e.ReadOnly, e.Sensitive
				rt.Configs = append(rt.Configs, c)
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

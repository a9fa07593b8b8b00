package handlers

// DescribeTopicPartitions: v0 (KIP-966)
//
// Behaviour (Kafka 3.9's DescribeTopicPartitionsRequestHandler, served
// here in ZooKeeper mode too):
//   - Topics empty = every topic; else the named ones. Topics are answered
//     in name order, starting at the cursor's topic (names before it are
//     skipped) and, in that topic, at the cursor's partition.
//   - At most min(ResponsePartitionLimit, max.request.partition.size.limit)
//     partitions (at least 1) are returned; when more remain, NextCursor
//     names the first topic and partition not returned. A topic is never
//     split unless it alone exceeds what is left.
//   - A named topic that does not exist: UNKNOWN_TOPIC_OR_PARTITION
//     (INVALID_TOPIC_EXCEPTION for an illegal name); in a full listing
//     nothing. Describe on the topic is required: a named topic without it
//     answers TOPIC_AUTHORIZATION_FAILED with a zero id (its existence not
//     disclosed), a full listing leaves it out. TopicAuthorizedOperations is
//     always filled.
//   - A cursor whose topic is not among the named ones, or with a negative
//     partition: INVALID_REQUEST on every named topic (Kafka's error
//     response).
//   - Partitions carry leader, epoch, replicas, ISR and offline replicas as
//     Metadata does; ZooKeeper mode has no eligible leader replicas (ELR,
//     KIP-966 part 1), so EligibleLeaderReplicas and LastKnownELR are empty.

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/controller"
	"gregor/replication/metadata"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(75, 0, 0, handleDescribeTopicPartitions) }

func handleDescribeTopicPartitions(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.DescribeTopicPartitionsRequest)
	return wire.Now(wire.Response{Msg: describeTopicPartitions(b, rc, req, b.Topics.Snapshot())})
}

func describeTopicPartitions(b *Broker, rc *wire.RequestContext, req *kmsg.DescribeTopicPartitionsRequest, snap *metadata.Snapshot) *kmsg.DescribeTopicPartitionsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	all := len(req.Topics) == 0
	cursorTopic, cursorPartition := "", int32(0)
	if req.Cursor != nil {
		cursorTopic, cursorPartition = req.Cursor.Topic, req.Cursor.Partition
	}
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if n >= cursorTopic && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if all {
		for _, n := range snap.TopicNames() {
			add(n)
		}
	} else {
		for _, t := range req.Topics {
			add(t.Topic)
		}
	}
	if (req.Cursor != nil && !all && !seen[cursorTopic]) || cursorPartition < 0 {
		for _, t := range req.Topics {
			rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
			name := t.Topic
			rt.Topic, rt.ErrorCode = &name, kerr.InvalidRequest.Code
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	sort.Strings(names)

	limit := int32(defaultPartitionLimit)
	if b.Config != nil {
		limit = b.Config.MaxRequestPartitionSizeLimit
	}
	limit = max(min(limit, req.ResponsePartitionLimit), 1)
	remaining := limit
	var denied []kmsg.DescribeTopicPartitionsResponseTopic
	for _, name := range names {
		may := true
		if all {
			may = b.authorizeQuiet(rc, acl.OpDescribe, acl.ResourceTopic, name)
		} else {
			may = b.authorize(rc, acl.OpDescribe, acl.ResourceTopic, name)
		}
		if !may {
			if !all {
				n := name
				rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
				rt.Topic, rt.ErrorCode = &n, kerr.TopicAuthorizationFailed.Code
				denied = append(denied, rt)
			}
			continue
		}
		if remaining == 0 {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: 0}
			break
		}
		t, ok := snap.Topics[name]
		if !ok {
			if !all {
				n := name
				rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
				rt.Topic, rt.ErrorCode, rt.IsInternal = &n, kerr.UnknownTopicOrPartition.Code, metadata.IsInternal(n)
				if controller.ValidateTopicName(n) != "" {
					rt.ErrorCode = kerr.InvalidTopicException.Code
				}
				rt.AuthorizedOperations = b.authorizedOperations(rc, acl.ResourceTopic, n)
				resp.Topics = append(resp.Topics, rt)
			}
			continue
		}
		start := int32(0)
		if name == cursorTopic {
			start = cursorPartition
		}
		rt, next := describeTopicPartitionsTopic(t, start, remaining)
		rt.AuthorizedOperations = b.authorizedOperations(rc, acl.ResourceTopic, name)
		resp.Topics = append(resp.Topics, rt)
		if next >= 0 {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: next}
			break
		}
		remaining -= int32(len(rt.Partitions))
	}
	resp.Topics = append(resp.Topics, denied...)
	return resp
}

// defaultPartitionLimit is max.request.partition.size.limit's default,
// for a Broker without a config (tests).
const defaultPartitionLimit = 2000

// describeTopicPartitionsTopic returns t's partitions from start, at most
// max of them, and the first partition left out (-1: none).
func describeTopicPartitionsTopic(t *metadata.Topic, start, max int32) (kmsg.DescribeTopicPartitionsResponseTopic, int32) {
	rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
	name := t.Name
	rt.Topic, rt.TopicID, rt.IsInternal = &name, t.ID, t.Internal
	byID := make(map[int32]*metadata.Partition, len(t.Partitions))
	for i := range t.Partitions {
		byID[t.Partitions[i].Partition] = &t.Partitions[i]
	}
	n := int32(len(t.Partitions))
	upper := min(n, start+max)
	next := int32(-1)
	if upper < n {
		next = upper
	}
	for id := start; id < upper; id++ {
		p, ok := byID[id]
		if !ok {
			continue
		}
		rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
		rp.Partition, rp.LeaderID, rp.LeaderEpoch = id, p.Leader, p.LeaderEpoch
		rp.Replicas, rp.ISR, rp.OfflineReplicas = orEmpty(p.Replicas), orEmpty(p.ISR), orEmpty(p.OfflineReplicas)
		rp.EligibleLeaderReplicas, rp.LastKnownELR = []int32{}, []int32{}
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt, next
}

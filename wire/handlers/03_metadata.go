package handlers

// Metadata: v0-12
//
// Behaviour:
//   - Brokers: the live brokers, each with the address of the listener the
//     client connected on.
//   - Topics: v0 empty list = all topics; v1+ null = all topics, empty = none.
//     v10+: a topic may be asked by TopicID (then Topic is ignored); an
//     unknown id answers UNKNOWN_TOPIC_ID.
//   - Unknown topics are auto-created when auto.create.topics.enable and the
//     request allows it (v0-3 always allow; v4+ AllowAutoTopicCreation);
//     the response that created a topic says LEADER_NOT_AVAILABLE for it
//     (as Kafka, whose creation completes asynchronously); later responses
//     list it. An illegal name answers INVALID_TOPIC_EXCEPTION; otherwise
//     UNKNOWN_TOPIC_OR_PARTITION.
//   - A partition without a leader answers LEADER_NOT_AVAILABLE with leader -1.
//   - Authorized operations (v8+) are -2147483648 ("not requested/unknown");
//     Gregor has no ACLs.
//
// Version notes:
//   - v1: ControllerID, IsInternal, Rack; null topics = all.
//   - v2: ClusterID.  v3: ThrottleMillis.  v4: AllowAutoTopicCreation.
//   - v5: OfflineReplicas.  v7: LeaderEpoch.  v8: AuthorizedOperations.
//   - v9: flexible.  v10: TopicID.  v11: cluster authorized operations removed.
//   - v12: topic name nullable when asked by id.

import (
	"errors"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/controller"
	"gregor/replication/metadata"
	"gregor/wire"
)

func init() { register(3, 0, 12, handleMetadata) }

// authorizedOpsUnknown is Kafka's "authorized operations not requested".
const authorizedOpsUnknown = -2147483648

func handleMetadata(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.MetadataRequest)
	snap := b.Topics.Snapshot()

	// Decide which names need auto-creation first: creating writes to disk,
	// so it runs off the reader goroutine.
	allowAuto := b.Config != nil && b.Config.AutoCreateTopicsEnable && (req.Version < 4 || req.AllowAutoTopicCreation)
	var create []string
	if allowAuto {
		for _, t := range req.Topics {
			if t.TopicID == ([16]byte{}) && t.Topic != nil {
				if _, ok := snap.Topics[*t.Topic]; !ok {
					create = append(create, *t.Topic)
				}
			}
		}
	}
	if len(create) == 0 {
		return wire.Now(wire.Response{Msg: buildMetadata(req, rc.Listener, snap, nil)})
	}
	return b.later(func() wire.Response {
		errs := b.Topics.AutoCreateTopics(create)
		created := map[string]error{}
		for _, n := range create {
			created[n] = errs[n] // nil = created now
		}
		return wire.Response{Msg: buildMetadata(req, rc.Listener, snap, created)}
	})
}

// buildMetadata answers from snap; created lists names this request tried
// to auto-create (nil error = created: LEADER_NOT_AVAILABLE).
func buildMetadata(req *kmsg.MetadataRequest, listener string, snap *metadata.Snapshot, created map[string]error) *kmsg.MetadataResponse {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	for _, br := range snap.Brokers {
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID = br.ID
		mb.Host, mb.Port = br.Endpoint(listener)
		mb.Rack = br.Rack
		resp.Brokers = append(resp.Brokers, mb)
	}
	if snap.ClusterID != "" {
		id := snap.ClusterID
		resp.ClusterID = &id
	}
	resp.ControllerID = snap.ControllerID
	resp.AuthorizedOperations = authorizedOpsUnknown

	all := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	if all {
		for _, name := range snap.TopicNames() {
			resp.Topics = append(resp.Topics, metadataTopic(snap.Topics[name]))
		}
		return resp
	}
	seen := map[string]bool{}
	for _, rt := range req.Topics {
		if rt.TopicID != ([16]byte{}) {
			t, ok := snap.TopicsByID[rt.TopicID]
			if !ok {
				mt := kmsg.NewMetadataResponseTopic()
				mt.TopicID = rt.TopicID
				mt.ErrorCode = kerr.UnknownTopicID.Code
				mt.AuthorizedOperations = authorizedOpsUnknown
				resp.Topics = append(resp.Topics, mt)
				continue
			}
			if !seen[t.Name] {
				seen[t.Name] = true
				resp.Topics = append(resp.Topics, metadataTopic(t))
			}
			continue
		}
		if rt.Topic == nil || seen[*rt.Topic] {
			continue
		}
		name := *rt.Topic
		seen[name] = true
		if t, ok := snap.Topics[name]; ok {
			resp.Topics = append(resp.Topics, metadataTopic(t))
			continue
		}
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic = &name
		mt.AuthorizedOperations = authorizedOpsUnknown
		err, tried := created[name]
		switch {
		case tried && err == nil:
			mt.ErrorCode = kerr.LeaderNotAvailable.Code
		case tried && errors.Is(err, kerr.TopicAlreadyExists):
			// Created meanwhile by another broker, or this broker's cache
			// has not caught up (e.g. just restarted): Kafka answers
			// LEADER_NOT_AVAILABLE, which clients retry.
			mt.ErrorCode = kerr.LeaderNotAvailable.Code
		case tried:
			mt.ErrorCode, _ = controller.Code(err)
		case controller.ValidateTopicName(name) != "":
			mt.ErrorCode = kerr.InvalidTopicException.Code
		default:
			mt.ErrorCode = kerr.UnknownTopicOrPartition.Code
		}
		resp.Topics = append(resp.Topics, mt)
	}
	return resp
}

func metadataTopic(t *metadata.Topic) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	name := t.Name
	mt.Topic = &name
	mt.TopicID = t.ID
	mt.IsInternal = t.Internal
	mt.AuthorizedOperations = authorizedOpsUnknown
	for _, p := range t.Partitions {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = p.Partition
		mp.Leader = p.Leader
		mp.LeaderEpoch = p.LeaderEpoch
		mp.Replicas = orEmpty(p.Replicas)
		mp.ISR = orEmpty(p.ISR)
		mp.OfflineReplicas = orEmpty(p.OfflineReplicas)
		if p.Leader < 0 {
			mp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		mt.Partitions = append(mt.Partitions, mp)
	}
	return mt
}

func orEmpty(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

package handlers

// DeleteTopics: v0-6
//
// Behaviour: deletes by name (controller.DeleteTopics): the replicas stop,
// their logs are deleted and the topic's znodes removed before the answer
// (Kafka completes asynchronously; here the topic is gone when the response
// is sent). Errors: TOPIC_DELETION_DISABLED (delete.topic.enable=false),
// UNKNOWN_TOPIC_OR_PARTITION. v6 topics named by TopicID only are resolved
// through the metadata cache; an unknown id answers UNKNOWN_TOPIC_ID; an
// entry with both a name and an id makes the request INVALID_REQUEST for
// every entry, nothing deleted (Kafka's InvalidRequestException); one
// with neither answers TOPIC_AUTHORIZATION_FAILED (Kafka's authorizer
// filter never lets a null name through).
//
// Version notes:
//   - v1: ThrottleMillis.  v2, v3: same.  v4: flexible.
//   - v5: ErrorMessage; THROTTLING_QUOTA_EXCEEDED per topic (KIP-599
//     strict controller mutation quota; before v5 deleted and throttled).
//   - v6: Topics with names or ids (KIP-516).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/quota/clientquota"
	"gregor/replication/controller"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(20, 0, 6, handleDeleteTopics) }

func handleDeleteTopics(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.DeleteTopicsRequest)
	return b.async(func() kmsg.Response { return deleteTopics(b, rc, req) })
}

func deleteTopics(b *Broker, rc *wire.RequestContext, req *kmsg.DeleteTopicsRequest) *kmsg.DeleteTopicsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	type entry struct {
		name  string
		named bool // name is known (sent, or resolved from id): answered, even ""
		id    [16]byte
		err   error
	}
	var entries []entry
	if req.Version >= 6 {
		// Kafka throws InvalidRequestException ("Topic name and topic ID
		// can not both be specified.") for an entry with both: the
		// whole request answers INVALID_REQUEST, each entry as sent,
		// and nothing is deleted.
		for _, t := range req.Topics {
			if t.Topic != nil && t.TopicID != ([16]byte{}) {
				for _, t := range req.Topics {
					rt := kmsg.NewDeleteTopicsResponseTopic()
					rt.Topic, rt.TopicID, rt.ErrorCode = t.Topic, t.TopicID, kerr.InvalidRequest.Code
					resp.Topics = append(resp.Topics, rt)
				}
				return resp
			}
		}
		snap := b.Topics.Snapshot()
		for _, t := range req.Topics {
			e := entry{id: t.TopicID}
			switch {
			case t.Topic != nil:
				e.name, e.named = *t.Topic, true
			case t.TopicID != ([16]byte{}):
				if mt, ok := snap.TopicsByID[t.TopicID]; ok {
					e.name, e.named = mt.Name, true
				} else {
					e.err = &controller.Error{Code: kerr.UnknownTopicID, Message: "Topic id is unknown."}
				}
			default:
				// Kafka 3.9 (KafkaApis.handleDeleteTopicsRequest) keeps
				// the entry with a null name and filters the authorized
				// names from the non-null ones, so an entry with neither
				// a name nor an id is never authorized: a null name, the
				// zero id and TOPIC_AUTHORIZATION_FAILED, no message,
				// with or without an authorizer.
				e.err = &controller.Error{Code: kerr.TopicAuthorizationFailed}
			}
			entries = append(entries, e)
		}
	} else {
		for _, n := range req.TopicNames {
			entries = append(entries, entry{name: n, named: true})
		}
	}
	// Delete on each topic, and Describe on one named by id (Kafka's
	// checks): TOPIC_AUTHORIZATION_FAILED.
	if b.Authorizer != nil {
		for i, e := range entries {
			byID := e.id != ([16]byte{})
			if e.err == nil && (byID && !b.authorize(rc, acl.OpDescribe, acl.ResourceTopic, e.name) ||
				!b.authorize(rc, acl.OpDelete, acl.ResourceTopic, e.name)) {
				entries[i].err = &controller.Error{Code: kerr.TopicAuthorizationFailed}
			}
		}
	}
	snap := b.Topics.Snapshot() // ids and partition counts of the topics about to go
	// KIP-599: each existing topic takes its partition count from the
	// controller mutation quota, in request order (strict from v5:
	// THROTTLING_QUOTA_EXCEEDED, the topic stays; permissive before).
	// Kafka answers TOPIC_DELETION_DISABLED and unknown topics before
	// the quota, so those cost nothing. Charged once, here
	// (forward_quota.go).
	var mq *clientquota.MutationQuota
	if b.Config.DeleteTopicEnable {
		mq = b.mutationQuota(rc, req.Version >= 5)
	}
	var names []string
	var idx []int
	for i, e := range entries {
		if e.err != nil {
			continue
		}
		if t, ok := snap.Topics[e.name]; ok && !mq.Record(len(t.Partitions)) {
			entries[i].err = &controller.Error{Code: kerr.ThrottlingQuotaExceeded} // no message, as Kafka
			entries[i].id = t.ID
			continue
		}
		names = append(names, e.name)
		idx = append(idx, i)
	}
	errs := b.Topics.DeleteTopics(names)
	b.forwardDeleteTopics(req.Version, names, errs, req.TimeoutMillis)
	for j, i := range idx {
		entries[i].err = errs[j]
		if t, ok := snap.Topics[entries[i].name]; ok && entries[i].id == ([16]byte{}) {
			entries[i].id = t.ID
		}
	}
	for _, e := range entries {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		if e.named {
			n := e.name
			rt.Topic = &n
		}
		rt.TopicID = e.id
		rt.ErrorCode, rt.ErrorMessage = controller.Code(e.err)
		resp.Topics = append(resp.Topics, rt)
	}
	resp.ThrottleMillis = throttleMillis(mq.Throttle())
	return resp
}

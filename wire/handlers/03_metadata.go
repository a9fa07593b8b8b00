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
//     UNKNOWN_TOPIC_OR_PARTITION. Auto-created partitions count against
//     the client's controller_mutation_rate, permissively (KIP-599).
//   - A partition without a leader answers LEADER_NOT_AVAILABLE with leader -1.
//   - Authorization (Kafka's checks): Describe on each topic; a full
//     listing leaves the topics without it out, a topic asked for by name
//     answers TOPIC_AUTHORIZATION_FAILED (by id: with its id, no name).
//     Auto-creation needs Create on the cluster or on the topic, else
//     TOPIC_AUTHORIZATION_FAILED. Authorized operations (v8+) are filled
//     when asked (cluster: v8-10, 0 without cluster Describe), else
//     -2147483648.
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

	"gregor/quota/clientquota"
	"gregor/replication/controller"
	"gregor/replication/metadata"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(3, 0, 12, handleMetadata) }

// authorizedOpsUnknown is Kafka's "authorized operations not requested".
const authorizedOpsUnknown = -2147483648

// metadataAuth is what the authorizer decided for one Metadata request.
type metadataAuth struct {
	rc *wire.RequestContext
	// describe holds the topic names the client may Describe; nil = all.
	describe map[string]bool
	// createDenied are missing topics the client may not auto-create.
	createDenied map[string]bool
}

func handleMetadata(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.MetadataRequest)
	snap := b.Topics.Snapshot()
	all := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	az := metadataAuth{rc: rc}
	if b.Authorizer != nil {
		az.describe = b.metadataDescribable(rc, req, snap, all)
	}

	// Decide which names need auto-creation first: creating writes to disk,
	// so it runs off the reader goroutine.
	allowAuto := b.Config != nil && b.Config.AutoCreateTopicsEnable && (req.Version < 4 || req.AllowAutoTopicCreation)
	var create []string
	if allowAuto {
		for _, t := range req.Topics {
			if t.TopicID == ([16]byte{}) && t.Topic != nil && allowed(az.describe, *t.Topic) {
				if _, ok := snap.Topics[*t.Topic]; !ok {
					create = append(create, *t.Topic)
				}
			}
		}
	}
	if len(create) > 0 && !b.authorizeQuiet(rc, acl.OpCreate, acl.ResourceCluster, acl.ClusterName) {
		may := filterAuthorized(b, rc, acl.OpCreate, acl.ResourceTopic, create, func(n string) string { return n })
		az.createDenied = map[string]bool{}
		kept := create[:0]
		for _, n := range create {
			if may[n] {
				kept = append(kept, n)
			} else {
				az.createDenied[n] = true
			}
		}
		create = kept
	}
	if len(create) == 0 {
		return wire.Now(wire.Response{Msg: b.buildMetadata(req, rc.Listener, snap, nil, az)})
	}
	return b.later(func() wire.Response {
		errs := b.Topics.AutoCreateTopics(create)
		created := map[string]error{}
		// KIP-599: auto-created partitions count against the client's
		// controller_mutation_rate, permissively (Kafka's
		// newPermissiveQuotaFor): a later CreateTopics pays for them;
		// the Metadata response itself is not throttled by it.
		var mq *clientquota.MutationQuota
		if b.Quotas != nil {
			mq = b.Quotas.Mutation(rc.Principal.Name, rc.ClientID, false)
		}
		for _, n := range create {
			created[n] = errs[n] // nil = created now
			if errs[n] == nil {
				mq.Record(int(b.Config.NumPartitions))
			}
		}
		return wire.Response{Msg: b.buildMetadata(req, rc.Listener, snap, created, az)}
	})
}

// metadataDescribable asks the authorizer for Describe on every topic the
// request names (by name or by id), or on every topic for a full listing
// (without logging each denial: Kafka filters those quietly).
func (b *Broker) metadataDescribable(rc *wire.RequestContext, req *kmsg.MetadataRequest, snap *metadata.Snapshot, all bool) map[string]bool {
	if all {
		out := map[string]bool{}
		for _, n := range snap.TopicNames() {
			out[n] = b.authorizeQuiet(rc, acl.OpDescribe, acl.ResourceTopic, n)
		}
		return out
	}
	var names []string
	for _, rt := range req.Topics {
		if rt.TopicID != ([16]byte{}) {
			if t, ok := snap.TopicsByID[rt.TopicID]; ok {
				names = append(names, t.Name)
			}
		} else if rt.Topic != nil {
			names = append(names, *rt.Topic)
		}
	}
	return filterAuthorized(b, rc, acl.OpDescribe, acl.ResourceTopic, names, func(n string) string { return n })
}

// buildMetadata answers from snap; created lists names this request tried
// to auto-create (nil error = created: LEADER_NOT_AVAILABLE).
func (b *Broker) buildMetadata(req *kmsg.MetadataRequest, listener string, snap *metadata.Snapshot, created map[string]error, az metadataAuth) *kmsg.MetadataResponse {
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
	if req.Version >= 8 && req.Version <= 10 && req.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = 0
		if b.authorizeCluster(az.rc, acl.OpDescribe) {
			resp.AuthorizedOperations = b.authorizedOperations(az.rc, acl.ResourceCluster, acl.ClusterName)
		}
	}
	// authorizedTopic is a topic the client may see, with its operations when asked.
	authorizedTopic := func(mt kmsg.MetadataResponseTopic) kmsg.MetadataResponseTopic {
		if req.Version >= 8 && req.IncludeTopicAuthorizedOperations && mt.Topic != nil {
			mt.AuthorizedOperations = b.authorizedOperations(az.rc, acl.ResourceTopic, *mt.Topic)
		}
		return mt
	}
	denied := func(name *string, id [16]byte) kmsg.MetadataResponseTopic {
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic, mt.TopicID = name, id
		mt.ErrorCode = kerr.TopicAuthorizationFailed.Code
		mt.AuthorizedOperations = authorizedOpsUnknown
		return mt
	}

	all := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	if all {
		listing := b.metadataListing(snap)
		if az.describe == nil && !(req.Version >= 8 && req.IncludeTopicAuthorizedOperations) {
			resp.Topics = listing.topics // shared, read-only: the common case costs no building
			return resp
		}
		resp.Topics = make([]kmsg.MetadataResponseTopic, 0, len(listing.topics))
		for _, mt := range listing.topics {
			if allowed(az.describe, *mt.Topic) {
				resp.Topics = append(resp.Topics, authorizedTopic(mt))
			}
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
				if !allowed(az.describe, t.Name) {
					resp.Topics = append(resp.Topics, denied(nil, t.ID)) // ids are not secret; the name is
					continue
				}
				resp.Topics = append(resp.Topics, authorizedTopic(metadataTopic(t)))
			}
			continue
		}
		if rt.Topic == nil || seen[*rt.Topic] {
			continue
		}
		name := *rt.Topic
		seen[name] = true
		if !allowed(az.describe, name) || az.createDenied[name] {
			resp.Topics = append(resp.Topics, denied(&name, [16]byte{})) // existence not disclosed
			continue
		}
		if t, ok := snap.Topics[name]; ok {
			resp.Topics = append(resp.Topics, authorizedTopic(metadataTopic(t)))
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
		resp.Topics = append(resp.Topics, authorizedTopic(mt))
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

package handlers

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
	"gregor/wire/security/acl"
)

// The group APIs' authorization (Kafka's KafkaApis checks), kept out of
// the handlers' bodies: each handler calls one of these first.

var groupAuthFailed = kerr.GroupAuthorizationFailed.Code

// groupReadDenied answers JoinGroup, SyncGroup, Heartbeat and LeaveGroup
// from a principal without Read on the group: GROUP_AUTHORIZATION_FAILED,
// as each request's getErrorResponse shapes it. ok: go on.
func (b *Broker) groupReadDenied(rc *wire.RequestContext, req kmsg.Request, group string) (wire.Reply, bool) {
	if b.authorize(rc, acl.OpRead, acl.ResourceGroup, group) {
		return wire.Reply{}, true
	}
	resp := req.ResponseKind()
	switch r := resp.(type) {
	case *kmsg.JoinGroupResponse:
		r.ErrorCode, r.Generation, r.MemberID = groupAuthFailed, -1, ""
	case *kmsg.SyncGroupResponse:
		r.ErrorCode = groupAuthFailed
	case *kmsg.HeartbeatResponse:
		r.ErrorCode = groupAuthFailed
	case *kmsg.LeaveGroupResponse:
		r.ErrorCode = groupAuthFailed
	}
	return wire.Now(wire.Response{Msg: resp}), false
}

// offsetCommitErrors answers every partition of topics with code.
func offsetCommitErrors(topics []kmsg.OffsetCommitRequestTopic, code int16) []kmsg.OffsetCommitResponseTopic {
	out := make([]kmsg.OffsetCommitResponseTopic, 0, len(topics))
	for _, t := range topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		out = append(out, rt)
	}
	return out
}

// authorizeOffsetCommit applies OffsetCommit's checks: Read on the group
// (else every partition GROUP_AUTHORIZATION_FAILED), then Read on each
// topic (a denied topic's partitions TOPIC_AUTHORIZATION_FAILED, the
// others committed). It returns the request to commit (nil: nothing
// left, answer done now) and a function that adds the denied topics to
// the coordinator's answer.
func (b *Broker) authorizeOffsetCommit(rc *wire.RequestContext, req *kmsg.OffsetCommitRequest) (*kmsg.OffsetCommitRequest, func(*kmsg.OffsetCommitResponse), *kmsg.OffsetCommitResponse) {
	if b.Authorizer == nil {
		return req, nil, nil
	}
	if !b.authorize(rc, acl.OpRead, acl.ResourceGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		resp.Topics = offsetCommitErrors(req.Topics, groupAuthFailed)
		return nil, nil, resp
	}
	readable := filterAuthorized(b, rc, acl.OpRead, acl.ResourceTopic, req.Topics, func(t kmsg.OffsetCommitRequestTopic) string { return t.Topic })
	var kept, denied []kmsg.OffsetCommitRequestTopic
	for _, t := range req.Topics {
		if readable[t.Topic] {
			kept = append(kept, t)
		} else {
			denied = append(denied, t)
		}
	}
	if len(denied) == 0 {
		return req, nil, nil
	}
	deniedTopics := offsetCommitErrors(denied, kerr.TopicAuthorizationFailed.Code)
	if len(kept) == 0 {
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		resp.Topics = deniedTopics
		return nil, nil, resp
	}
	cp := *req
	cp.Topics = kept
	return &cp, func(r *kmsg.OffsetCommitResponse) { r.Topics = append(r.Topics, deniedTopics...) }, nil
}

// authorizeOffsetFetch applies OffsetFetch's checks: Describe on each
// group (else GROUP_AUTHORIZATION_FAILED for it) and Describe on each
// topic: requested topics without it answer TOPIC_AUTHORIZATION_FAILED
// per partition (offset -1); an all-topics fetch leaves them out. It
// returns the request for the coordinator (nil: answer resp now) and the
// function that completes the coordinator's answer.
func (b *Broker) authorizeOffsetFetch(rc *wire.RequestContext, req *kmsg.OffsetFetchRequest) (*kmsg.OffsetFetchRequest, func(*kmsg.OffsetFetchResponse), *kmsg.OffsetFetchResponse) {
	if b.Authorizer == nil {
		return req, nil, nil
	}
	describable := func(topic string) bool { return b.authorize(rc, acl.OpDescribe, acl.ResourceTopic, topic) }
	cp := *req
	if req.Version < 8 {
		if !b.authorize(rc, acl.OpDescribe, acl.ResourceGroup, req.Group) {
			resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
			resp.ErrorCode = groupAuthFailed
			if req.Version < 2 { // no top-level error before v2: on each partition
				for _, t := range req.Topics {
					rt := kmsg.NewOffsetFetchResponseTopic()
					rt.Topic = t.Topic
					for _, p := range t.Partitions {
						rp := kmsg.NewOffsetFetchResponseTopicPartition()
						rp.Partition, rp.Offset, rp.ErrorCode = p, -1, groupAuthFailed
						rt.Partitions = append(rt.Partitions, rp)
					}
					resp.Topics = append(resp.Topics, rt)
				}
			}
			return nil, nil, resp
		}
		var denied []kmsg.OffsetFetchResponseTopic
		if req.Topics != nil {
			cp.Topics = nil
			for _, t := range req.Topics {
				if describable(t.Topic) {
					cp.Topics = append(cp.Topics, t)
					continue
				}
				rt := kmsg.NewOffsetFetchResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseTopicPartition()
					rp.Partition, rp.Offset, rp.ErrorCode = p, -1, kerr.TopicAuthorizationFailed.Code
					rt.Partitions = append(rt.Partitions, rp)
				}
				denied = append(denied, rt)
			}
			if cp.Topics == nil {
				cp.Topics = []kmsg.OffsetFetchRequestTopic{} // still "these topics", not all
			}
		}
		all := req.Topics == nil
		return &cp, func(r *kmsg.OffsetFetchResponse) {
			if all && r.ErrorCode == 0 {
				kept := r.Topics[:0]
				for _, t := range r.Topics {
					if describable(t.Topic) {
						kept = append(kept, t)
					}
				}
				r.Topics = kept
			}
			if r.ErrorCode == 0 {
				r.Topics = append(r.Topics, denied...)
			}
		}, nil
	}
	// v8+: a batch of groups.
	deniedGroups := map[string]bool{}
	deniedTopics := map[string][]kmsg.OffsetFetchResponseGroupTopic{}
	allTopics := map[string]bool{}
	cp.Groups = nil
	for _, g := range req.Groups {
		if !b.authorize(rc, acl.OpDescribe, acl.ResourceGroup, g.Group) {
			deniedGroups[g.Group] = true
			continue
		}
		gc := g
		if g.Topics == nil {
			allTopics[g.Group] = true
		} else {
			gc.Topics = []kmsg.OffsetFetchRequestGroupTopic{}
			for _, t := range g.Topics {
				if describable(t.Topic) {
					gc.Topics = append(gc.Topics, t)
					continue
				}
				rt := kmsg.NewOffsetFetchResponseGroupTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					rp.Partition, rp.Offset, rp.ErrorCode = p, -1, kerr.TopicAuthorizationFailed.Code
					rt.Partitions = append(rt.Partitions, rp)
				}
				deniedTopics[g.Group] = append(deniedTopics[g.Group], rt)
			}
		}
		cp.Groups = append(cp.Groups, gc)
	}
	finish := func(r *kmsg.OffsetFetchResponse) {
		for i := range r.Groups {
			g := &r.Groups[i]
			if g.ErrorCode != 0 {
				continue
			}
			if allTopics[g.Group] {
				kept := g.Topics[:0]
				for _, t := range g.Topics {
					if describable(t.Topic) {
						kept = append(kept, t)
					}
				}
				g.Topics = kept
			}
			g.Topics = append(g.Topics, deniedTopics[g.Group]...)
		}
		var out []kmsg.OffsetFetchResponseGroup // request order, denied groups in place
		j := 0
		for _, g := range req.Groups {
			if deniedGroups[g.Group] {
				rg := kmsg.NewOffsetFetchResponseGroup()
				rg.Group, rg.ErrorCode = g.Group, groupAuthFailed
				out = append(out, rg)
			} else if j < len(r.Groups) {
				out = append(out, r.Groups[j])
				j++
			}
		}
		r.Groups = append(out, r.Groups[j:]...)
	}
	if len(cp.Groups) == 0 {
		resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
		finish(resp)
		return nil, nil, resp
	}
	return &cp, finish, nil
}

// then wraps a coordinator callback with a completion step (nil: none).
func then[T kmsg.Response](fn func(T), step func(T)) func(T) {
	if step == nil {
		return fn
	}
	return func(r T) { step(r); fn(r) }
}

// authorizeFindCoordinator applies FindCoordinator's check per key:
// Describe on the group (key type 0) or the transactional id (1), else
// GROUP_AUTHORIZATION_FAILED / TRANSACTIONAL_ID_AUTHORIZATION_FAILED for
// that key. It returns the request for the coordinator (nil: answer resp
// now) and the step that puts the denied keys back in request order.
func (b *Broker) authorizeFindCoordinator(rc *wire.RequestContext, req *kmsg.FindCoordinatorRequest) (*kmsg.FindCoordinatorRequest, func(*kmsg.FindCoordinatorResponse), *kmsg.FindCoordinatorResponse) {
	if b.Authorizer == nil || req.CoordinatorType > 1 {
		return req, nil, nil
	}
	rt, code := acl.ResourceGroup, groupAuthFailed
	if req.CoordinatorType == 1 {
		rt, code = acl.ResourceTransactionalID, kerr.TransactionalIDAuthorizationFailed.Code
	}
	deniedKey := func(k string) kmsg.FindCoordinatorResponseCoordinator {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		msg := kerr.ErrorForCode(code).Error()
		c.Key, c.ErrorCode, c.ErrorMessage, c.NodeID, c.Port = k, code, &msg, -1, -1
		return c
	}
	if req.Version < 4 {
		if b.authorize(rc, acl.OpDescribe, rt, req.CoordinatorKey) {
			return req, nil, nil
		}
		resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
		c := deniedKey(req.CoordinatorKey)
		resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Port = c.ErrorCode, c.ErrorMessage, -1, -1
		return nil, nil, resp
	}
	denied := map[string]bool{}
	cp := *req
	cp.CoordinatorKeys = nil
	for _, k := range req.CoordinatorKeys {
		if b.authorize(rc, acl.OpDescribe, rt, k) {
			cp.CoordinatorKeys = append(cp.CoordinatorKeys, k)
		} else {
			denied[k] = true
		}
	}
	if len(denied) == 0 {
		return req, nil, nil
	}
	finish := func(r *kmsg.FindCoordinatorResponse) {
		got := map[string]kmsg.FindCoordinatorResponseCoordinator{}
		for _, c := range r.Coordinators {
			got[c.Key] = c
		}
		r.Coordinators = r.Coordinators[:0]
		for _, k := range req.CoordinatorKeys {
			if denied[k] {
				r.Coordinators = append(r.Coordinators, deniedKey(k))
			} else if c, ok := got[k]; ok {
				r.Coordinators = append(r.Coordinators, c)
			}
		}
	}
	if len(cp.CoordinatorKeys) == 0 {
		resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
		finish(resp)
		return nil, nil, resp
	}
	return &cp, finish, nil
}

// splitGroups separates the groups rc may do op on from the others,
// each group asked once (duplicates kept in place in allowed).
func (b *Broker) splitGroups(rc *wire.RequestContext, op acl.Operation, groups []string) (allowedGroups, denied []string) {
	may := filterAuthorized(b, rc, op, acl.ResourceGroup, groups, func(g string) string { return g })
	if may == nil {
		return groups, nil
	}
	for _, g := range groups {
		if may[g] {
			allowedGroups = append(allowedGroups, g)
		} else {
			denied = append(denied, g)
		}
	}
	return allowedGroups, denied
}

// authorizeDescribeGroups applies DescribeGroups' checks: Describe on
// each group, else GROUP_AUTHORIZATION_FAILED for it (listed first, as
// Kafka does); v3+ include_authorized_operations fills each described
// group's bitfield.
func (b *Broker) authorizeDescribeGroups(rc *wire.RequestContext, req *kmsg.DescribeGroupsRequest) (*kmsg.DescribeGroupsRequest, func(*kmsg.DescribeGroupsResponse), *kmsg.DescribeGroupsResponse) {
	ok, denied := b.splitGroups(rc, acl.OpDescribe, req.Groups)
	ops := req.Version >= 3 && req.IncludeAuthorizedOperations
	if len(denied) == 0 && !ops {
		return req, nil, nil
	}
	finish := func(r *kmsg.DescribeGroupsResponse) {
		if ops {
			for i := range r.Groups {
				if r.Groups[i].ErrorCode == 0 {
					r.Groups[i].AuthorizedOperations = b.authorizedOperations(rc, acl.ResourceGroup, r.Groups[i].Group)
				}
			}
		}
		if len(denied) > 0 {
			out := make([]kmsg.DescribeGroupsResponseGroup, 0, len(denied)+len(r.Groups))
			for _, g := range denied {
				rg := kmsg.NewDescribeGroupsResponseGroup()
				rg.Group, rg.ErrorCode = g, groupAuthFailed
				out = append(out, rg)
			}
			r.Groups = append(out, r.Groups...)
		}
	}
	if len(ok) == 0 {
		resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
		finish(resp)
		return nil, nil, resp
	}
	cp := *req
	cp.Groups = ok
	return &cp, finish, nil
}

// authorizeListGroups applies ListGroups' check: with Describe on the
// cluster every group is listed, else only the groups rc may Describe
// (quietly: a filter).
func (b *Broker) authorizeListGroups(rc *wire.RequestContext) func(*kmsg.ListGroupsResponse) {
	if b.Authorizer == nil || b.authorizeQuiet(rc, acl.OpDescribe, acl.ResourceCluster, acl.ClusterName) {
		return nil
	}
	return func(r *kmsg.ListGroupsResponse) {
		kept := r.Groups[:0]
		for _, g := range r.Groups {
			if b.authorizeQuiet(rc, acl.OpDescribe, acl.ResourceGroup, g.Group) {
				kept = append(kept, g)
			}
		}
		r.Groups = kept
	}
}

// authorizeDeleteGroups applies DeleteGroups' check: Delete on each
// group, else GROUP_AUTHORIZATION_FAILED for it.
func (b *Broker) authorizeDeleteGroups(rc *wire.RequestContext, req *kmsg.DeleteGroupsRequest) (*kmsg.DeleteGroupsRequest, func(*kmsg.DeleteGroupsResponse), *kmsg.DeleteGroupsResponse) {
	ok, denied := b.splitGroups(rc, acl.OpDelete, req.Groups)
	if len(denied) == 0 {
		return req, nil, nil
	}
	finish := func(r *kmsg.DeleteGroupsResponse) {
		for _, g := range denied {
			rg := kmsg.NewDeleteGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, groupAuthFailed
			r.Groups = append(r.Groups, rg)
		}
	}
	if len(ok) == 0 {
		resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
		finish(resp)
		return nil, nil, resp
	}
	cp := *req
	cp.Groups = ok
	return &cp, finish, nil
}

// authorizeOffsetDelete applies OffsetDelete's checks: Delete on the
// group (else GROUP_AUTHORIZATION_FAILED), Read on each topic (else its
// partitions TOPIC_AUTHORIZATION_FAILED).
func (b *Broker) authorizeOffsetDelete(rc *wire.RequestContext, req *kmsg.OffsetDeleteRequest) (*kmsg.OffsetDeleteRequest, func(*kmsg.OffsetDeleteResponse), *kmsg.OffsetDeleteResponse) {
	if b.Authorizer == nil {
		return req, nil, nil
	}
	if !b.authorize(rc, acl.OpDelete, acl.ResourceGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = groupAuthFailed
		return nil, nil, resp
	}
	readable := filterAuthorized(b, rc, acl.OpRead, acl.ResourceTopic, req.Topics, func(t kmsg.OffsetDeleteRequestTopic) string { return t.Topic })
	var kept []kmsg.OffsetDeleteRequestTopic
	var denied []kmsg.OffsetDeleteResponseTopic
	for _, t := range req.Topics {
		if readable[t.Topic] {
			kept = append(kept, t)
			continue
		}
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, kerr.TopicAuthorizationFailed.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	if len(denied) == 0 {
		return req, nil, nil
	}
	finish := func(r *kmsg.OffsetDeleteResponse) {
		if r.ErrorCode == 0 {
			r.Topics = append(r.Topics, denied...)
		}
	}
	if len(kept) == 0 {
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		finish(resp)
		return nil, nil, resp
	}
	cp := *req
	cp.Topics = kept
	return &cp, finish, nil
}

package coordinator

import (
	"context"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/actors"
)

// This file is the request-level API that wire/handlers calls (it
// implements handlers.GroupSource): each method takes the decoded kmsg
// request and calls reply exactly once with the response at the request's
// version — possibly later, from another goroutine (JoinGroup waits for
// the rebalance, a commit for its append). Methods never block. Answers given on a group actor go
// through the group's outbox (viaOutbox), so they are released only once
// what the request changed is visible to other requests (publish.go).

func strp(s string) *string { return &s }

func optString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// FindCoordinator answers FindCoordinator v0–v6 for key type GROUP (0):
// the leader of the group's __consumer_offsets partition, creating the
// topic on first use. While the topic or its leader is not ready the code
// is COORDINATOR_NOT_AVAILABLE (clients retry). Other key types
// (transactions) are not served by this coordinator: COORDINATOR_NOT_AVAILABLE
// for TRANSACTION (1), INVALID_REQUEST otherwise.
func (c *Coordinator) FindCoordinator(ctx context.Context, req *kmsg.FindCoordinatorRequest, reply func(*kmsg.FindCoordinatorResponse)) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		reply(FindCoordinatorResponse(req, func(key string) (int32, string, int32, int16) { return c.lookup(ctx, req.CoordinatorType, key) }))
	}()
}

func (c *Coordinator) lookup(ctx context.Context, keyType int8, key string) (int32, string, int32, int16) {
	switch keyType {
	case 0:
	case 1:
		return -1, "", -1, kerr.CoordinatorNotAvailable.Code
	default:
		return -1, "", -1, kerr.InvalidRequest.Code
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.AppendTimeout)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	if err := c.ensureTopic(ctx); err != nil {
		c.warnEnsure(err)
		return -1, "", -1, kerr.CoordinatorNotAvailable.Code
	}
	id, host, port, ok := c.opts.Topic.Leader(c.PartitionFor(key))
	if !ok {
		return -1, "", -1, kerr.CoordinatorNotAvailable.Code
	}
	return id, host, port, 0
}

// warnEnsure logs why __consumer_offsets could not be created (too few
// live brokers for offsets.topic.replication.factor, no cluster metadata
// yet…), at most every 10 s: clients retry FindCoordinator often, and an
// operator whose groups never form needs to see the reason.
func (c *Coordinator) warnEnsure(err error) {
	now := time.Now().UnixNano()
	last := c.ensureWarned.Load()
	if now-last < int64(10*time.Second) || !c.ensureWarned.CompareAndSwap(last, now) {
		return
	}
	c.log.Warn("cannot create "+OffsetsTopicName+"; answering COORDINATOR_NOT_AVAILABLE", zap.Error(err))
}

// JoinGroup serves JoinGroup v0–v9. clientID and clientHost (the client's
// address, Kafka shows "/ip") describe the connection.
func (c *Coordinator) JoinGroup(_ context.Context, clientID, clientHost string, req *kmsg.JoinGroupRequest, reply func(*kmsg.JoinGroupResponse)) {
	out := func(r *kmsg.JoinGroupResponse) {
		r.Version = req.Version
		reply(r)
	}
	if req.Group == "" {
		out(joinError(req.MemberID, kerr.InvalidGroupID.Code))
		return
	}
	r := actors.ReplyOnce(c.opts.RequestTimeout, out, func() *kmsg.JoinGroupResponse {
		return joinError(req.MemberID, kerr.CoordinatorNotAvailable.Code)
	})
	jr := JoinRequest{
		Version:          req.Version,
		MemberID:         req.MemberID,
		InstanceID:       optString(req.InstanceID),
		ClientID:         clientID,
		ClientHost:       clientHost,
		ProtocolType:     req.ProtocolType,
		SessionTimeout:   time.Duration(req.SessionTimeoutMillis) * time.Millisecond,
		RebalanceTimeout: time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond,
	}
	if req.Version == 0 {
		jr.RebalanceTimeout = jr.SessionTimeout
	}
	for _, p := range req.Protocols {
		jr.Protocols = append(jr.Protocols, Protocol{Name: p.Name, Metadata: p.Metadata})
	}
	c.send(&GroupRequest{Group: req.Group, API: "JoinGroup",
		Apply: func(g *Group, now time.Time) { g.Join(now, jr, viaOutbox(g, r)) },
		Fail:  func(code int16) { r(joinError(req.MemberID, code)) },
	})
}

// SyncGroup serves SyncGroup v0–v5.
func (c *Coordinator) SyncGroup(_ context.Context, req *kmsg.SyncGroupRequest, reply func(*kmsg.SyncGroupResponse)) {
	out := func(r *kmsg.SyncGroupResponse) {
		r.Version = req.Version
		reply(r)
	}
	if req.Group == "" {
		out(syncError(kerr.InvalidGroupID.Code))
		return
	}
	r := actors.ReplyOnce(c.opts.RequestTimeout, out, func() *kmsg.SyncGroupResponse { return syncError(kerr.CoordinatorNotAvailable.Code) })
	sr := SyncRequest{MemberID: req.MemberID, InstanceID: optString(req.InstanceID), Generation: req.Generation,
		ProtocolType: req.ProtocolType, Protocol: req.Protocol, Assignments: map[string][]byte{}}
	for _, a := range req.GroupAssignment {
		sr.Assignments[a.MemberID] = a.MemberAssignment
	}
	c.send(&GroupRequest{Group: req.Group, API: "SyncGroup",
		Apply: func(g *Group, now time.Time) { g.Sync(now, sr, viaOutbox(g, r)) },
		Fail:  func(code int16) { r(syncError(code)) },
	})
}

// Heartbeat serves Heartbeat v0–v4.
func (c *Coordinator) Heartbeat(_ context.Context, req *kmsg.HeartbeatRequest, reply func(*kmsg.HeartbeatResponse)) {
	out := func(code int16) {
		resp := kmsg.NewPtrHeartbeatResponse()
		resp.Version = req.Version
		resp.ErrorCode = code
		reply(resp)
	}
	if req.Group == "" {
		out(kerr.InvalidGroupID.Code)
		return
	}
	r := actors.ReplyOnce(c.opts.RequestTimeout, out, func() int16 { return kerr.CoordinatorNotAvailable.Code })
	inst := optString(req.InstanceID)
	c.send(&GroupRequest{Group: req.Group, API: "Heartbeat",
		Apply: func(g *Group, now time.Time) { viaOutbox(g, r)(g.Heartbeat(now, req.MemberID, inst, req.Generation)) },
		Fail:  r,
	})
}

// LeaveGroup serves LeaveGroup v0–v5 (v3+ batches members, KIP-345; for
// v0–v2 the member's error is the top-level error).
func (c *Coordinator) LeaveGroup(_ context.Context, req *kmsg.LeaveGroupRequest, reply func(*kmsg.LeaveGroupResponse)) {
	var members []LeaveMember
	if req.Version < 3 {
		members = []LeaveMember{{MemberID: req.MemberID}}
	} else {
		for _, m := range req.Members {
			members = append(members, LeaveMember{MemberID: m.MemberID, InstanceID: optString(m.InstanceID)})
		}
	}
	out := func(top int16, codes []int16) {
		resp := kmsg.NewPtrLeaveGroupResponse()
		resp.Version = req.Version
		resp.ErrorCode = top
		if req.Version < 3 {
			if top == 0 && len(codes) > 0 {
				resp.ErrorCode = codes[0]
			}
		} else if top == 0 {
			for i, m := range req.Members {
				rm := kmsg.NewLeaveGroupResponseMember()
				rm.MemberID, rm.InstanceID = m.MemberID, m.InstanceID
				if i < len(codes) {
					rm.ErrorCode = codes[i]
				}
				resp.Members = append(resp.Members, rm)
			}
		}
		reply(resp)
	}
	if req.Group == "" {
		out(kerr.InvalidGroupID.Code, nil)
		return
	}
	type res struct {
		top   int16
		codes []int16
	}
	r := actors.ReplyOnce(c.opts.RequestTimeout, func(x res) { out(x.top, x.codes) }, func() res { return res{top: kerr.CoordinatorNotAvailable.Code} })
	c.send(&GroupRequest{Group: req.Group, API: "LeaveGroup",
		Apply: func(g *Group, now time.Time) {
			top, codes := g.Leave(now, members)
			viaOutbox(g, r)(res{top, codes})
		},
		Fail: func(code int16) { r(res{top: code}) },
	})
}

// OffsetCommit serves OffsetCommit v0–v8. A partition whose metadata is
// longer than offset.metadata.max.bytes gets OFFSET_METADATA_TOO_LARGE
// (Kafka's GroupMetadataManager.storeOffsets); the others are committed
// together, durably, before the answer: the group actor appends them off
// its goroutine and answers when the append completes or fails, serving
// the group's heartbeats meanwhile. As in Kafka, the group's checks
// (coordinator, member, generation, state) come first: an error there is
// every partition's, the oversized ones included, and a request whose
// partitions are all oversized is still checked (and may create the group).
func (c *Coordinator) OffsetCommit(_ context.Context, req *kmsg.OffsetCommitRequest, reply func(*kmsg.OffsetCommitResponse)) {
	now := c.opts.Now()
	codes := make([][]int16, len(req.Topics))
	offs := map[TopicPartition]OffsetAndMetadata{}
	n := 0
	for ti, t := range req.Topics {
		codes[ti] = make([]int16, len(t.Partitions))
		for pi, p := range t.Partitions {
			n++
			md := optString(p.Metadata)
			if metadataTooLarge(md, c.opts.Config.MaxMetadataSize) {
				codes[ti][pi] = kerr.OffsetMetadataTooLarge.Code
				continue
			}
			o := OffsetAndMetadata{Offset: p.Offset, LeaderEpoch: -1, Metadata: md, CommitTime: now}
			if req.Version >= 6 {
				o.LeaderEpoch = p.LeaderEpoch
			}
			if req.Version == 1 && p.Timestamp != -1 {
				o.CommitTime = time.UnixMilli(p.Timestamp)
			}
			if req.Version >= 2 && req.Version <= 4 && req.RetentionTimeMillis != -1 {
				o.ExpireTime = now.Add(time.Duration(req.RetentionTimeMillis) * time.Millisecond)
			}
			offs[TopicPartition{t.Topic, p.Partition}] = o
		}
	}
	// out answers with res.code for every partition, except that the
	// oversized ones keep OFFSET_METADATA_TOO_LARGE once the group
	// accepted the commit (res.code is then the write's outcome).
	out := func(res commitResult) {
		resp := kmsg.NewPtrOffsetCommitResponse()
		resp.Version = req.Version
		for ti, t := range req.Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for pi, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition = p.Partition
				rp.ErrorCode = res.code
				if res.accepted && codes[ti][pi] != 0 {
					rp.ErrorCode = codes[ti][pi]
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		reply(resp)
	}
	gen := req.Generation
	if req.Version == 0 {
		gen = -1
	}
	if n == 0 {
		out(commitResult{})
		return
	}
	r := actors.ReplyOnce(c.opts.RequestTimeout, out, func() commitResult { return commitResult{code: kerr.CoordinatorNotAvailable.Code} })
	cr := CommitRequest{MemberID: req.MemberID, InstanceID: optString(req.InstanceID), Generation: gen, Offsets: offs}
	c.send(&GroupRequest{Group: req.Group, API: "OffsetCommit",
		Apply: func(g *Group, now time.Time) { g.commit(now, cr, viaOutbox(g, r)) },
		Fail:  func(code int16) { r(commitResult{code: code}) },
	})
}

// commitResult is a group's answer to an OffsetCommit: accepted when the
// group's checks passed (code is then the write's outcome).
type commitResult struct {
	code     int16
	accepted bool
}

// metadataTooLarge is Kafka's !validateOffsetMetadataLength: metadata
// longer than max in Java String.length units (UTF-16 code units; a byte
// per character for ASCII). Kafka reads null metadata as "" first.
func metadataTooLarge(md string, max int) bool {
	if len(md) <= max { // UTF-16 never needs more units than UTF-8 bytes
		return false
	}
	n := 0
	for _, r := range md {
		n += utf16.RuneLen(r)
	}
	return n > max
}

// fetchGroup is one group of an OffsetFetch: its topics (nil = all).
type fetchGroup struct {
	group string
	tps   []TopicPartition
}

type fetchResult struct {
	code    int16
	offsets []FetchedOffset
}

// OffsetFetch serves OffsetFetch v0–v8 (v8+: several groups at once).
// require_stable (v7+) never waits: a partition whose commit is still
// being appended is answered UNSTABLE_OFFSET_COMMIT (retriable), as Kafka
// does (see Group.fetchOffsets); without it the last committed offset.
func (c *Coordinator) OffsetFetch(_ context.Context, req *kmsg.OffsetFetchRequest, reply func(*kmsg.OffsetFetchResponse)) {
	var groups []fetchGroup
	if req.Version < 8 {
		fg := fetchGroup{group: req.Group}
		if req.Topics != nil || req.Version < 2 {
			fg.tps = []TopicPartition{}
			for _, t := range req.Topics {
				for _, p := range t.Partitions {
					fg.tps = append(fg.tps, TopicPartition{t.Topic, p})
				}
			}
		}
		groups = append(groups, fg)
	} else {
		for _, rg := range req.Groups {
			fg := fetchGroup{group: rg.Group}
			if rg.Topics != nil {
				fg.tps = []TopicPartition{}
				for _, t := range rg.Topics {
					for _, p := range t.Partitions {
						fg.tps = append(fg.tps, TopicPartition{t.Topic, p})
					}
				}
			}
			groups = append(groups, fg)
		}
	}
	results := make([]fetchResult, len(groups))
	finish := func() { reply(buildOffsetFetch(req, groups, results)) }
	c.fanOut(len(groups), finish, func(i int, done func()) {
		fg := groups[i]
		set := func(res fetchResult) { results[i] = res; done() }
		r := actors.ReplyOnce(c.opts.RequestTimeout, set, func() fetchResult { return fetchResult{code: kerr.CoordinatorNotAvailable.Code} })
		c.send(&GroupRequest{Group: fg.group, API: "OffsetFetch",
			Apply: func(g *Group, _ time.Time) {
				viaOutbox(g, r)(fetchResult{offsets: g.fetchOffsets(fg.tps, req.Version >= 7 && req.RequireStable)})
			},
			Fail: func(code int16) { r(fetchResult{code: code}) },
		})
	})
}

// fanOut runs start(i, done) for n items and calls finish once every item
// called done (at once when n is 0).
func (c *Coordinator) fanOut(n int, finish func(), start func(i int, done func())) {
	if n == 0 {
		finish()
		return
	}
	var mu sync.Mutex
	left := n
	done := func() {
		mu.Lock()
		left--
		last := left == 0
		mu.Unlock()
		if last {
			finish()
		}
	}
	for i := 0; i < n; i++ {
		start(i, done)
	}
}

func buildOffsetFetch(req *kmsg.OffsetFetchRequest, groups []fetchGroup, results []fetchResult) *kmsg.OffsetFetchResponse {
	resp := kmsg.NewPtrOffsetFetchResponse()
	resp.Version = req.Version
	if req.Version >= 8 {
		for i, fg := range groups {
			rg := kmsg.NewOffsetFetchResponseGroup()
			rg.Group = fg.group
			rg.ErrorCode = results[i].code
			var cur *kmsg.OffsetFetchResponseGroupTopic
			for _, o := range results[i].offsets {
				if cur == nil || cur.Topic != o.Topic {
					rg.Topics = append(rg.Topics, kmsg.NewOffsetFetchResponseGroupTopic())
					cur = &rg.Topics[len(rg.Topics)-1]
					cur.Topic = o.Topic
				}
				p := kmsg.NewOffsetFetchResponseGroupTopicPartition()
				p.Partition, p.Offset, p.LeaderEpoch, p.Metadata = o.Partition, o.Offset, o.LeaderEpoch, strp(o.Metadata)
				p.ErrorCode = o.ErrorCode
				cur.Partitions = append(cur.Partitions, p)
			}
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	}
	res := results[0]
	if res.code != 0 {
		if req.Version >= 2 {
			resp.ErrorCode = res.code
		}
		// v0–v1 carry the error on every requested partition.
		if req.Version < 2 {
			for _, tp := range groups[0].tps {
				res.offsets = append(res.offsets, FetchedOffset{TopicPartition: tp, OffsetAndMetadata: OffsetAndMetadata{Offset: -1, LeaderEpoch: -1}})
			}
		}
	}
	var cur *kmsg.OffsetFetchResponseTopic
	for _, o := range res.offsets {
		if cur == nil || cur.Topic != o.Topic {
			resp.Topics = append(resp.Topics, kmsg.NewOffsetFetchResponseTopic())
			cur = &resp.Topics[len(resp.Topics)-1]
			cur.Topic = o.Topic
		}
		p := kmsg.NewOffsetFetchResponseTopicPartition()
		p.Partition, p.Offset, p.LeaderEpoch, p.Metadata = o.Partition, o.Offset, o.LeaderEpoch, strp(o.Metadata)
		p.ErrorCode = o.ErrorCode
		if res.code != 0 && req.Version < 2 {
			p.ErrorCode = res.code
		}
		cur.Partitions = append(cur.Partitions, p)
	}
	return resp
}

// OffsetDelete serves OffsetDelete v0 (KIP-496).
func (c *Coordinator) OffsetDelete(_ context.Context, req *kmsg.OffsetDeleteRequest, reply func(*kmsg.OffsetDeleteResponse)) {
	var tps []TopicPartition
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tps = append(tps, TopicPartition{t.Topic, p.Partition})
		}
	}
	type res struct {
		top   int16
		codes []int16
	}
	out := func(x res) {
		resp := kmsg.NewPtrOffsetDeleteResponse()
		resp.Version = req.Version
		resp.ErrorCode = x.top
		if x.top == 0 {
			i := 0
			for _, t := range req.Topics {
				rt := kmsg.NewOffsetDeleteResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetDeleteResponseTopicPartition()
					rp.Partition = p.Partition
					if i < len(x.codes) {
						rp.ErrorCode = x.codes[i]
					}
					i++
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
		}
		reply(resp)
	}
	if req.Group == "" {
		out(res{top: kerr.InvalidGroupID.Code})
		return
	}
	r := actors.ReplyOnce(c.opts.RequestTimeout, out, func() res { return res{top: kerr.CoordinatorNotAvailable.Code} })
	c.send(&GroupRequest{Group: req.Group, API: "OffsetDelete",
		Apply: func(g *Group, now time.Time) {
			out := viaOutbox(g, r)
			g.deleteOffsets(now, tps, func(top int16, codes []int16) { out(res{top, codes}) })
		},
		Fail: func(code int16) { r(res{top: code}) },
	})
}

// DescribeGroups serves DescribeGroups v0–v5.
func (c *Coordinator) DescribeGroups(_ context.Context, req *kmsg.DescribeGroupsRequest, reply func(*kmsg.DescribeGroupsResponse)) {
	out := make([]kmsg.DescribeGroupsResponseGroup, len(req.Groups))
	finish := func() {
		resp := kmsg.NewPtrDescribeGroupsResponse()
		resp.Version = req.Version
		resp.Groups = out
		reply(resp)
	}
	c.fanOut(len(req.Groups), finish, func(i int, done func()) {
		id := req.Groups[i]
		failed := func(code int16) kmsg.DescribeGroupsResponseGroup {
			d := kmsg.NewDescribeGroupsResponseGroup()
			d.Group, d.ErrorCode = id, code
			return d
		}
		r := actors.ReplyOnce(c.opts.RequestTimeout, func(d kmsg.DescribeGroupsResponseGroup) { out[i] = d; done() },
			func() kmsg.DescribeGroupsResponseGroup { return failed(kerr.CoordinatorNotAvailable.Code) })
		c.send(&GroupRequest{Group: id, API: "DescribeGroups",
			Apply: func(g *Group, _ time.Time) { viaOutbox(g, r)(g.Describe()) },
			Fail:  func(code int16) { r(failed(code)) },
		})
	})
}

// ListGroups serves ListGroups v0–v4 (v4: states filter, case-insensitive)
// with the groups of every __consumer_offsets partition led here.
func (c *Coordinator) ListGroups(_ context.Context, req *kmsg.ListGroupsRequest, reply func(*kmsg.ListGroupsResponse)) {
	var states map[State]bool
	if req.Version >= 4 && len(req.StatesFilter) > 0 {
		states = map[State]bool{}
		for _, s := range req.StatesFilter {
			if st, ok := ParseState(s); ok {
				states[st] = true
			}
		}
	}
	out := func(ls []Listing) {
		resp := kmsg.NewPtrListGroupsResponse()
		resp.Version = req.Version
		for _, l := range ls {
			if states != nil && !states[l.State] {
				continue
			}
			g := kmsg.NewListGroupsResponseGroup()
			g.Group, g.ProtocolType, g.GroupState = l.Group, l.ProtocolType, l.State.String()
			resp.Groups = append(resp.Groups, g)
		}
		sortListGroups(resp.Groups)
		reply(resp)
	}
	r := actors.ReplyOnce(c.opts.RequestTimeout, out, func() []Listing { return nil })
	c.sys.Root.Send(c.router, &listGroupsReq{reply: r})
}

func sortListGroups(gs []kmsg.ListGroupsResponseGroup) {
	for i := 1; i < len(gs); i++ {
		for j := i; j > 0 && gs[j].Group < gs[j-1].Group; j-- {
			gs[j], gs[j-1] = gs[j-1], gs[j]
		}
	}
}

// DeleteGroups serves DeleteGroups v0–v2.
func (c *Coordinator) DeleteGroups(_ context.Context, req *kmsg.DeleteGroupsRequest, reply func(*kmsg.DeleteGroupsResponse)) {
	out := make([]kmsg.DeleteGroupsResponseGroup, len(req.Groups))
	finish := func() {
		resp := kmsg.NewPtrDeleteGroupsResponse()
		resp.Version = req.Version
		resp.Groups = out
		reply(resp)
	}
	c.fanOut(len(req.Groups), finish, func(i int, done func()) {
		id := req.Groups[i]
		r := actors.ReplyOnce(c.opts.RequestTimeout, func(code int16) {
			d := kmsg.NewDeleteGroupsResponseGroup()
			d.Group, d.ErrorCode = id, code
			out[i] = d
			done()
		}, func() int16 { return kerr.CoordinatorNotAvailable.Code })
		c.send(&GroupRequest{Group: id, API: "DeleteGroups",
			Apply: func(g *Group, now time.Time) { g.delete(now, viaOutbox(g, r)) },
			Fail:  r,
		})
	})
}

// TxnOffsetCommit serves TxnOffsetCommit v0–v4 (KIP-98; v3+ carries the
// consumer's generation, member id and group instance id, KIP-447): the
// offsets are checked as Kafka's GroupCoordinator.handleTxnCommitOffsets
// does (Group.txnCommit), appended to the group's __consumer_offsets
// partition in a transactional batch of the producer and staged as the
// producer's pending offsets, which the transaction's COMMIT marker makes
// visible (CompleteTxnOffsets). The answer comes once the append is done.
// Per partition: OFFSET_METADATA_TOO_LARGE beyond offset.metadata.max.bytes
// once the group accepted the commit, else the group's code
// (INVALID_GROUP_ID for an empty group id, NOT_COORDINATOR,
// COORDINATOR_NOT_AVAILABLE, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID,
// ILLEGAL_GENERATION) or the append's (storeErrorCode). v0–v1 answer
// COORDINATOR_LOAD_IN_PROGRESS as COORDINATOR_NOT_AVAILABLE, as Kafka's
// KafkaApis does for pre-2.0 clients (KAFKA-7296). guard is the KIP-890
// verification guard the handler got for the transaction on the group's
// partition (verificationGuard; 0: none needed, or verification off); the append carries it
// (Batch.VerificationGuard) and fails INVALID_TXN_STATE when it is void.
func (c *Coordinator) TxnOffsetCommit(_ context.Context, req *kmsg.TxnOffsetCommitRequest, verificationGuard uint64, reply func(*kmsg.TxnOffsetCommitResponse)) {
	now := c.opts.Now()
	codes := make([][]int16, len(req.Topics))
	offs := map[TopicPartition]OffsetAndMetadata{}
	for ti, t := range req.Topics {
		codes[ti] = make([]int16, len(t.Partitions))
		for pi, p := range t.Partitions {
			md := optString(p.Metadata)
			if metadataTooLarge(md, c.opts.Config.MaxMetadataSize) {
				codes[ti][pi] = kerr.OffsetMetadataTooLarge.Code
				continue
			}
			o := OffsetAndMetadata{Offset: p.Offset, LeaderEpoch: -1, Metadata: md, CommitTime: now}
			if req.Version >= 2 {
				o.LeaderEpoch = p.LeaderEpoch
			}
			offs[TopicPartition{t.Topic, p.Partition}] = o
		}
	}
	out := func(res commitResult) {
		resp := kmsg.NewPtrTxnOffsetCommitResponse()
		resp.Version = req.Version
		for ti, t := range req.Topics {
			rt := kmsg.NewTxnOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for pi, p := range t.Partitions {
				rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				rp.Partition = p.Partition
				rp.ErrorCode = res.code
				if res.accepted && codes[ti][pi] != 0 {
					rp.ErrorCode = codes[ti][pi]
				}
				if req.Version < 2 && rp.ErrorCode == kerr.CoordinatorLoadInProgress.Code {
					rp.ErrorCode = kerr.CoordinatorNotAvailable.Code
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		reply(resp)
	}
	n := 0
	for _, t := range req.Topics {
		n += len(t.Partitions)
	}
	if n == 0 {
		// Nothing to commit: answered without the group, as KafkaApis
		// does when no partition is left to send to the coordinator.
		out(commitResult{})
		return
	}
	if req.Group == "" {
		out(commitResult{code: kerr.InvalidGroupID.Code})
		return
	}
	tr := TxnCommitRequest{Producer: TxnProducer{ID: req.ProducerID, Epoch: req.ProducerEpoch}, Generation: -1, Offsets: offs, VerificationGuard: verificationGuard}
	if req.Version >= 3 {
		tr.MemberID, tr.InstanceID, tr.Generation = req.MemberID, optString(req.InstanceID), req.Generation
	}
	r := actors.ReplyOnce(c.opts.RequestTimeout, out, func() commitResult { return commitResult{code: kerr.CoordinatorNotAvailable.Code} })
	gr := &GroupRequest{Group: req.Group, API: "TxnOffsetCommit",
		Apply: func(g *Group, now time.Time) { g.txnCommit(now, tr, viaOutbox(g, r)) },
		Fail:  func(code int16) { r(commitResult{code: code}) },
	}
	if pid := req.ProducerID; pid >= 0 {
		gr.txnProducer = &pid
	}
	c.send(gr)
}

// CompleteTxnOffsets ends producerID's transaction for the groups of
// __consumer_offsets partition offsetsPartition once its COMMIT (commit)
// or ABORT marker is in that partition's log (Kafka's
// GroupCoordinator.scheduleHandleTxnCompletion): every group there with
// pending offsets of the producer makes them its committed offsets or
// drops them (Group.CompleteTxn). The partition's WriteTxnMarkers handler
// calls it (handlers.GroupTxnCompleter). It never blocks; a partition not
// led here is left alone (its leader loads the marker from the log), and
// one still loading applies it once loaded. producerEpoch is the marker's
// epoch (informational: Kafka completes whatever the producer staged).
func (c *Coordinator) CompleteTxnOffsets(offsetsPartition int32, producerID int64, producerEpoch int16, commit bool) {
	c.tell(&txnCompletion{partition: offsetsPartition, producer: producerID, epoch: producerEpoch, commit: commit})
}

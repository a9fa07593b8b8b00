package handlers

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupAPIs are the group coordinator's API keys, in the order of a
// group's life: FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
// OffsetCommit, OffsetFetch, DescribeGroups, ListGroups, OffsetDelete,
// DeleteGroups, LeaveGroup.
var groupAPIs = []int16{10, 11, 14, 12, 8, 9, 15, 16, 47, 42, 13}

// wireCall is groupCall for a request that first goes through the wire
// encoding at its version, as a client's would: a field the version does
// not have (InstanceID before v5, OffsetCommit's generation at v0, the
// ListGroups states filter before v4…) never reaches the coordinator.
func wireCall[T kmsg.Response](t *testing.T, b *Broker, req kmsg.Request) T {
	t.Helper()
	fresh := kmsg.RequestForKey(req.Key())
	fresh.SetVersion(req.GetVersion())
	if err := fresh.ReadFrom(req.AppendTo(nil)); err != nil {
		t.Fatalf("key %d v%d: request does not decode: %v", req.Key(), req.GetVersion(), err)
	}
	return groupCall[T](t, b, fresh)
}

// noThrottle checks a response's throttle_time_ms where version v has the
// field (from v since): Gregor has no quotas, so it is always 0.
func noThrottle(t *testing.T, api string, v, since int16, got int32) {
	t.Helper()
	if v >= since && got != 0 {
		t.Errorf("%s v%d: throttle_time_ms %d, want 0", api, v, got)
	}
}

// fetchedOffset is one partition of an OffsetFetch answer, whatever its version.
type fetchedOffset struct {
	offset   int64
	epoch    int32
	metadata string
	code     int16
}

// offsetsOf flattens an OffsetFetch answer (v0–v7 top-level topics, v8+
// the first group's) into partition → offset for topic.
func offsetsOf(t *testing.T, r *kmsg.OffsetFetchResponse, topic string) map[int32]fetchedOffset {
	t.Helper()
	out := map[int32]fetchedOffset{}
	md := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	if r.Version >= 8 {
		if len(r.Groups) == 0 {
			t.Fatalf("OffsetFetch v%d: no groups", r.Version)
		}
		for _, rt := range r.Groups[0].Topics {
			for _, p := range rt.Partitions {
				if rt.Topic == topic {
					out[p.Partition] = fetchedOffset{p.Offset, p.LeaderEpoch, md(p.Metadata), p.ErrorCode}
				}
			}
		}
		return out
	}
	for _, rt := range r.Topics {
		for _, p := range rt.Partitions {
			if rt.Topic == topic {
				out[p.Partition] = fetchedOffset{p.Offset, p.LeaderEpoch, md(p.Metadata), p.ErrorCode}
			}
		}
	}
	return out
}

// TestGroupHandlersEveryVersion runs one group's whole life — find the
// coordinator, join, sync, heartbeat, commit, fetch, describe, list,
// delete offsets, leave, commit as a simple (assign()) consumer, delete
// the group — once per step i, each API at version min(i, its max) of
// the handler table, so every registered version of every group API is
// answered, encoded and decoded at that version at least once, and what
// each version changes is asserted: MEMBER_ID_REQUIRED from JoinGroup v4
// (KIP-394) and a static member's immediate id from v5 (KIP-345), SyncGroup
// v5's protocol check, OffsetCommit v0's missing generation, OffsetFetch
// v2's "null topics = all" and v8's groups, FindCoordinator v1's key type
// and v4's batched keys, DescribeGroups v3's authorized operations and v4's
// instance ids, ListGroups v4's states filter, LeaveGroup v3's batched
// members, the throttle field where the version has one.
func TestGroupHandlersEveryVersion(t *testing.T) {
	ranges := map[int16][2]int16{}
	top := int16(0)
	for _, k := range groupAPIs {
		e, ok := registry[k]
		if !ok {
			t.Fatalf("API key %d is not registered", k)
		}
		ranges[k] = [2]int16{e.r.MinVersion, e.r.MaxVersion}
		top = max(top, e.r.MaxVersion)
	}
	seen := map[int16]map[int16]bool{}
	for i := int16(0); i <= top; i++ {
		vs := map[int16]int16{}
		var name []string
		for _, k := range groupAPIs {
			v := min(max(i, ranges[k][0]), ranges[k][1])
			vs[k] = v
			if seen[k] == nil {
				seen[k] = map[int16]bool{}
			}
			seen[k][v] = true
			name = append(name, fmt.Sprintf("%s%d", kmsg.NameForKey(k), v))
		}
		t.Run(fmt.Sprintf("step%d", i), func(t *testing.T) {
			t.Log(strings.Join(name, " "))
			groupLifeAt(t, vs)
		})
	}
	for _, k := range groupAPIs {
		for v := ranges[k][0]; v <= ranges[k][1]; v++ {
			if !seen[k][v] {
				t.Errorf("%s v%d never exercised", kmsg.NameForKey(k), v)
			}
		}
	}
}

func groupLifeAt(t *testing.T, vs map[int16]int16) {
	b, _ := groupBroker(t)
	const group, topic = "life", "orders"
	fcv, jv, sv, hv := vs[10], vs[11], vs[14], vs[12]
	cv, fv, dv, lgv := vs[8], vs[9], vs[15], vs[16]
	odv, dgv, lv := vs[47], vs[42], vs[13]

	// FindCoordinator: before v1 there is no key type on the wire, so a
	// transaction key type is dropped and the group's coordinator is
	// found; from v1 TRANSACTION is not served here. v4+ batches keys.
	fc := func(keyType int8) *kmsg.FindCoordinatorResponse {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorType = fcv, keyType
		req.CoordinatorKey, req.CoordinatorKeys = group, []string{group, "other"}
		r := wireCall[*kmsg.FindCoordinatorResponse](t, b, req)
		noThrottle(t, "FindCoordinator", fcv, 1, r.ThrottleMillis)
		return r
	}
	if fcv < 4 {
		if r := fc(0); r.ErrorCode != 0 || r.NodeID != 0 || r.Host != "127.0.0.1" || r.Port != 9092 || len(r.Coordinators) != 0 {
			t.Fatalf("FindCoordinator v%d group key: %+v", fcv, r)
		}
		r := fc(1)
		if fcv == 0 && (r.ErrorCode != 0 || r.Host != "127.0.0.1") {
			t.Fatalf("FindCoordinator v0 has no key type, want the group's coordinator: %+v", r)
		}
		if fcv >= 1 && (r.ErrorCode != kerr.CoordinatorNotAvailable.Code || r.NodeID != -1 || r.Port != -1 || r.ErrorMessage == nil) {
			t.Fatalf("FindCoordinator v%d transaction key: %+v", fcv, r)
		}
	} else {
		r := fc(0)
		if r.ErrorCode != 0 || r.Host != "" || len(r.Coordinators) != 2 {
			t.Fatalf("FindCoordinator v%d: want one coordinator per key and nothing top-level: %+v", fcv, r)
		}
		for i, key := range []string{group, "other"} {
			if c := r.Coordinators[i]; c.Key != key || c.ErrorCode != 0 || c.NodeID != 0 || c.Host != "127.0.0.1" || c.Port != 9092 {
				t.Fatalf("FindCoordinator v%d coordinator %d: %+v", fcv, i, c)
			}
		}
		for i, c := range fc(1).Coordinators {
			if c.ErrorCode != kerr.CoordinatorNotAvailable.Code || c.NodeID != -1 {
				t.Fatalf("FindCoordinator v%d transaction key %d: %+v", fcv, i, c)
			}
		}
	}

	// JoinGroup: v4+ hands a new dynamic member its id with
	// MEMBER_ID_REQUIRED and expects it back; v0–v3 join at once.
	sub := kmsg.NewConsumerMemberMetadata()
	sub.Topics = []string{topic}
	meta := sub.AppendTo(nil)
	join := func(memberID string, instance *string) *kmsg.JoinGroupResponse {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Version, req.Group, req.MemberID, req.InstanceID, req.ProtocolType = jv, group, memberID, instance, "consumer"
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 10000
		if instance != nil {
			req.Group = group + "-static"
		}
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "range", meta
		req.Protocols = []kmsg.JoinGroupRequestProtocol{p}
		r := wireCall[*kmsg.JoinGroupResponse](t, b, req)
		noThrottle(t, "JoinGroup", jv, 2, r.ThrottleMillis)
		return r
	}
	j := join("", nil)
	if jv >= 4 {
		if j.ErrorCode != kerr.MemberIDRequired.Code || !strings.HasPrefix(j.MemberID, "cli-") || j.Generation != -1 {
			t.Fatalf("JoinGroup v%d first join without a member id: want MEMBER_ID_REQUIRED and an id: %+v", jv, j)
		}
		j = join(j.MemberID, nil)
	} else if j.ErrorCode == kerr.MemberIDRequired.Code {
		t.Fatalf("JoinGroup v%d: MEMBER_ID_REQUIRED is v4+ (KIP-394)", jv)
	}
	member := j.MemberID
	if j.ErrorCode != 0 || !strings.HasPrefix(member, "cli-") || j.Generation != 1 || j.LeaderID != member ||
		j.Protocol == nil || *j.Protocol != "range" || len(j.Members) != 1 || j.Members[0].MemberID != member ||
		!bytes.Equal(j.Members[0].ProtocolMetadata, meta) || j.SkipAssignment {
		t.Fatalf("JoinGroup v%d: %+v", jv, j)
	}
	if got := j.ProtocolType; (jv >= 7) != (got != nil) || (got != nil && *got != "consumer") {
		t.Fatalf("JoinGroup v%d protocol type %v: it is in the answer from v7", jv, got)
	}
	if jv >= 5 && j.Members[0].InstanceID != nil {
		t.Fatalf("JoinGroup v%d: a dynamic member has instance id %q", jv, *j.Members[0].InstanceID)
	}

	// SyncGroup: v5+ names the protocol, and a wrong one is refused; before
	// v5 the field is not on the wire, so the same request is just the
	// leader's assignment.
	asg := kmsg.NewConsumerMemberAssignment()
	at := kmsg.NewConsumerMemberAssignmentTopic()
	at.Topic, at.Partitions = topic, []int32{0, 1, 2}
	asg.Topics = []kmsg.ConsumerMemberAssignmentTopic{at}
	assignment := asg.AppendTo(nil)
	syncAs := func(protocol string) *kmsg.SyncGroupResponse {
		req := kmsg.NewPtrSyncGroupRequest()
		req.Version, req.Group, req.MemberID, req.Generation = sv, group, member, 1
		req.ProtocolType, req.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr(protocol)
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = member, assignment
		req.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{a}
		r := wireCall[*kmsg.SyncGroupResponse](t, b, req)
		noThrottle(t, "SyncGroup", sv, 1, r.ThrottleMillis)
		return r
	}
	s := syncAs("roundrobin")
	if sv >= 5 {
		if s.ErrorCode != kerr.InconsistentGroupProtocol.Code {
			t.Fatalf("SyncGroup v%d naming another protocol: %+v", sv, s)
		}
		s = syncAs("range")
	}
	if s.ErrorCode != 0 || !bytes.Equal(s.MemberAssignment, assignment) {
		t.Fatalf("SyncGroup v%d: %+v", sv, s)
	}
	if sv >= 5 && (s.ProtocolType == nil || *s.ProtocolType != "consumer" || s.Protocol == nil || *s.Protocol != "range") {
		t.Fatalf("SyncGroup v%d: protocol type/name missing: %+v", sv, s)
	}
	if sv < 5 && (s.ProtocolType != nil || s.Protocol != nil) {
		t.Fatalf("SyncGroup v%d decoded a v5 field: %+v", sv, s)
	}

	// Heartbeat.
	heartbeat := func(id string, gen int32) int16 {
		req := kmsg.NewPtrHeartbeatRequest()
		req.Version, req.Group, req.MemberID, req.Generation = hv, group, id, gen
		r := wireCall[*kmsg.HeartbeatResponse](t, b, req)
		noThrottle(t, "Heartbeat", hv, 1, r.ThrottleMillis)
		return r.ErrorCode
	}
	if c := heartbeat(member, 1); c != 0 {
		t.Fatalf("Heartbeat v%d: %d", hv, c)
	}
	if c := heartbeat(member, 2); c != kerr.IllegalGeneration.Code {
		t.Fatalf("Heartbeat v%d wrong generation: %d", hv, c)
	}

	// OffsetCommit by the member. v0 has no generation or member id and
	// goes to ZooKeeper (/consumers/<group>/offsets), not the coordinator,
	// so the group's members do not matter to it. Oversized metadata is
	// refused per partition at every version the commit is accepted at.
	commit := func(gen int32, id string, parts map[int32]int64, epoch int32) map[int32]int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.Generation, req.MemberID = cv, group, gen, id
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		for p, o := range parts {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = p, o, epoch, kmsg.StringPtr("m")
			if p == 9 {
				rp.Metadata = kmsg.StringPtr(strings.Repeat("x", 5000))
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = []kmsg.OffsetCommitRequestTopic{rt}
		r := wireCall[*kmsg.OffsetCommitResponse](t, b, req)
		noThrottle(t, "OffsetCommit", cv, 3, r.ThrottleMillis)
		codes := map[int32]int16{}
		for _, rt := range r.Topics {
			for _, p := range rt.Partitions {
				codes[p.Partition] = p.ErrorCode
			}
		}
		return codes
	}
	// The group's check comes first (Kafka's doCommitOffsets): its error
	// is every partition's, the oversized one's too.
	codes := commit(1, member, map[int32]int64{0: 100, 1: 101, 9: 0}, 7)
	want, want9 := int16(0), kerr.OffsetMetadataTooLarge.Code
	if codes[0] != want || codes[1] != want || codes[9] != want9 {
		t.Fatalf("OffsetCommit v%d by the member: codes %v, want %d for 0 and 1, %d for 9", cv, codes, want, want9)
	}
	if cv >= 1 {
		if c := commit(5, member, map[int32]int64{0: 1}, -1); c[0] != kerr.IllegalGeneration.Code {
			t.Fatalf("OffsetCommit v%d stale generation: %v", cv, c)
		}
	}
	// What a fetch at fv shows of a commit at cv: the leader epoch is
	// committed from v6 and fetched from v5.
	epoch := func(committed int32) int32 {
		if cv < 6 || fv < 5 {
			return -1
		}
		return committed
	}
	// ZooKeeper keeps only the offset: a v0 fetch of a v0 commit has no
	// metadata. (cv and fv are both 0 in the same step only.)
	md := "m"
	if cv == 0 {
		md = ""
	}

	// OffsetFetch of explicit partitions (9 was refused, so has nothing).
	fetch := func(parts []int32) *kmsg.OffsetFetchResponse {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version, req.Group, req.RequireStable = fv, group, true
		var topics []kmsg.OffsetFetchRequestTopic
		if parts != nil {
			ft := kmsg.NewOffsetFetchRequestTopic()
			ft.Topic, ft.Partitions = topic, parts
			topics = []kmsg.OffsetFetchRequestTopic{ft}
		}
		req.Topics = topics
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group = group
		if parts != nil {
			gt := kmsg.NewOffsetFetchRequestGroupTopic()
			gt.Topic, gt.Partitions = topic, parts
			g.Topics = []kmsg.OffsetFetchRequestGroupTopic{gt}
		}
		nobody := kmsg.NewOffsetFetchRequestGroup()
		nobody.Group = "nobody"
		req.Groups = []kmsg.OffsetFetchRequestGroup{g, nobody}
		r := wireCall[*kmsg.OffsetFetchResponse](t, b, req)
		noThrottle(t, "OffsetFetch", fv, 3, r.ThrottleMillis)
		if fv >= 8 {
			if len(r.Groups) != 2 || r.Groups[0].Group != group || r.Groups[1].Group != "nobody" || r.Groups[1].ErrorCode != 0 || len(r.Groups[1].Topics) != 0 || len(r.Topics) != 0 {
				t.Fatalf("OffsetFetch v%d: want one answer per group (the unknown one empty), nothing top-level: %+v", fv, r)
			}
		} else if len(r.Groups) != 0 || r.ErrorCode != 0 {
			t.Fatalf("OffsetFetch v%d: %+v", fv, r)
		}
		return r
	}
	got := offsetsOf(t, fetch([]int32{0, 1, 9}), topic)
	wantOff := map[int32]fetchedOffset{0: {100, epoch(7), md, 0}, 1: {101, epoch(7), md, 0}, 9: {-1, -1, "", 0}}
	if fmt.Sprint(got) != fmt.Sprint(wantOff) {
		t.Fatalf("OffsetFetch v%d after OffsetCommit v%d: %v, want %v", fv, cv, got, wantOff)
	}

	// DescribeGroups: the Stable group with its member, and an unknown
	// group as Dead.
	describe := func() kmsg.DescribeGroupsResponseGroup {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Version, req.Groups = dv, []string{group, "nobody"}
		r := wireCall[*kmsg.DescribeGroupsResponse](t, b, req)
		noThrottle(t, "DescribeGroups", dv, 1, r.ThrottleMillis)
		if len(r.Groups) != 2 || r.Groups[1].Group != "nobody" || r.Groups[1].State != "Dead" || r.Groups[1].ErrorCode != 0 {
			t.Fatalf("DescribeGroups v%d: %+v", dv, r.Groups)
		}
		for _, g := range r.Groups {
			// Not computed (no ACLs) and not asked for: Kafka's "omitted", INT32_MIN.
			if dv >= 3 && g.AuthorizedOperations != math.MinInt32 {
				t.Fatalf("DescribeGroups v%d %s: authorized operations %d", dv, g.Group, g.AuthorizedOperations)
			}
		}
		return r.Groups[0]
	}
	d := describe()
	if d.ErrorCode != 0 || d.Group != group || d.State != "Stable" || d.ProtocolType != "consumer" || d.Protocol != "range" || len(d.Members) != 1 {
		t.Fatalf("DescribeGroups v%d: %+v", dv, d)
	}
	if m := d.Members[0]; m.MemberID != member || m.ClientID != "cli" || m.ClientHost != "/127.0.0.1" || m.InstanceID != nil ||
		!bytes.Equal(m.ProtocolMetadata, meta) || !bytes.Equal(m.MemberAssignment, assignment) {
		t.Fatalf("DescribeGroups v%d member: %+v", dv, m)
	}

	// ListGroups: v4's states filter is case-insensitive; before v4 it is
	// not on the wire and every group is listed.
	list := func(states ...string) []kmsg.ListGroupsResponseGroup {
		req := kmsg.NewPtrListGroupsRequest()
		req.Version, req.StatesFilter = lgv, states
		r := wireCall[*kmsg.ListGroupsResponse](t, b, req)
		noThrottle(t, "ListGroups", lgv, 1, r.ThrottleMillis)
		if r.ErrorCode != 0 {
			t.Fatalf("ListGroups v%d: %d", lgv, r.ErrorCode)
		}
		return r.Groups
	}
	if l := list("stable"); len(l) != 1 || l[0].Group != group || l[0].ProtocolType != "consumer" || (lgv >= 4) != (l[0].GroupState == "Stable") {
		t.Fatalf("ListGroups v%d states [stable]: %+v", lgv, l)
	}
	if l := list("Empty"); (lgv >= 4) != (len(l) == 0) {
		t.Fatalf("ListGroups v%d states [Empty] of a Stable group: %+v", lgv, l)
	}

	// OffsetDelete of a topic the members subscribe to, and DeleteGroups,
	// are refused while the group has members.
	offsetDelete := func(parts ...int32) *kmsg.OffsetDeleteResponse {
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Version, req.Group = odv, group
		rt := kmsg.NewOffsetDeleteRequestTopic()
		rt.Topic = topic
		for _, p := range parts {
			rp := kmsg.NewOffsetDeleteRequestTopicPartition()
			rp.Partition = p
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = []kmsg.OffsetDeleteRequestTopic{rt}
		r := wireCall[*kmsg.OffsetDeleteResponse](t, b, req)
		noThrottle(t, "OffsetDelete", odv, 0, r.ThrottleMillis)
		return r
	}
	if r := offsetDelete(0); r.ErrorCode != 0 || len(r.Topics) != 1 || r.Topics[0].Partitions[0].ErrorCode != kerr.GroupSubscribedToTopic.Code {
		t.Fatalf("OffsetDelete v%d of a subscribed topic: %+v", odv, r)
	}
	deleteGroups := func(groups ...string) map[string]int16 {
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Version, req.Groups = dgv, groups
		r := wireCall[*kmsg.DeleteGroupsResponse](t, b, req)
		noThrottle(t, "DeleteGroups", dgv, 0, r.ThrottleMillis)
		out := map[string]int16{}
		for _, g := range r.Groups {
			out[g.Group] = g.ErrorCode
		}
		return out
	}
	if c := deleteGroups(group); c[group] != kerr.NonEmptyGroup.Code {
		t.Fatalf("DeleteGroups v%d of a group with members: %v", dgv, c)
	}

	// LeaveGroup: v3+ batches members, each with its own code; v0–v2 name
	// one member and carry its code at the top.
	leave := func(ids ...string) *kmsg.LeaveGroupResponse {
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Version, req.Group, req.MemberID = lv, group, ids[0]
		for _, id := range ids {
			m := kmsg.NewLeaveGroupRequestMember()
			m.MemberID, m.Reason = id, kmsg.StringPtr("test")
			req.Members = append(req.Members, m)
		}
		r := wireCall[*kmsg.LeaveGroupResponse](t, b, req)
		noThrottle(t, "LeaveGroup", lv, 1, r.ThrottleMillis)
		return r
	}
	if lv >= 3 {
		r := leave(member, "ghost")
		if r.ErrorCode != 0 || len(r.Members) != 2 || r.Members[0].MemberID != member || r.Members[0].ErrorCode != 0 ||
			r.Members[1].MemberID != "ghost" || r.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
			t.Fatalf("LeaveGroup v%d batch: %+v", lv, r)
		}
	} else {
		if r := leave("ghost"); r.ErrorCode != kerr.UnknownMemberID.Code || len(r.Members) != 0 {
			t.Fatalf("LeaveGroup v%d of an unknown member: %+v", lv, r)
		}
		if r := leave(member); r.ErrorCode != 0 {
			t.Fatalf("LeaveGroup v%d: %+v", lv, r)
		}
	}
	if d := describe(); d.State != "Empty" || d.Protocol != "" || len(d.Members) != 0 {
		t.Fatalf("DescribeGroups v%d after the member left: %+v", dv, d)
	}
	if c := heartbeat(member, 1); c != kerr.UnknownMemberID.Code {
		t.Fatalf("Heartbeat v%d after leaving: %d", hv, c)
	}

	// A simple commit (generation -1, no member id) to the Empty group is
	// accepted at every version.
	if c := commit(-1, "", map[int32]int64{2: 42}, 3); c[2] != 0 {
		t.Fatalf("OffsetCommit v%d simple commit to an Empty group: %v", cv, c)
	}
	// v2+ fetches every committed partition for null topics; v0–v1 have
	// no null, so they name theirs.
	var all *kmsg.OffsetFetchResponse
	if fv >= 2 {
		all = fetch(nil)
	} else {
		all = fetch([]int32{0, 1, 2})
	}
	got = offsetsOf(t, all, topic)
	wantOff = map[int32]fetchedOffset{0: {100, epoch(7), md, 0}, 1: {101, epoch(7), md, 0}, 2: {42, epoch(3), md, 0}}
	if fmt.Sprint(got) != fmt.Sprint(wantOff) {
		t.Fatalf("OffsetFetch v%d of every partition: %v, want %v", fv, got, wantOff)
	}

	// Offsets of an Empty group can be deleted; then the group itself.
	if r := offsetDelete(2); r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("OffsetDelete v%d of an Empty group: %+v", odv, r)
	}
	if c := deleteGroups(group, "nobody"); c[group] != 0 || c["nobody"] != kerr.GroupIDNotFound.Code {
		t.Fatalf("DeleteGroups v%d: %v", dgv, c)
	}
	// As in Kafka, a group is gone from ListGroups once its DeleteGroups
	// is answered.
	if l := list(); len(l) != 0 {
		t.Fatalf("ListGroups v%d after DeleteGroups: %+v", lgv, l)
	}

	// A static member (v5+ group.instance.id) gets its id at once; before
	// v5 the instance id is not on the wire, so v4 asks for the id again.
	sj := join("", kmsg.StringPtr("inst"))
	switch {
	case jv == 4:
		if sj.ErrorCode != kerr.MemberIDRequired.Code {
			t.Fatalf("JoinGroup v4 (no instance id on the wire): %+v", sj)
		}
	case sj.ErrorCode != 0 || sj.Generation != 1 || len(sj.Members) != 1:
		t.Fatalf("JoinGroup v%d with an instance id: %+v", jv, sj)
	case jv >= 5 && (!strings.HasPrefix(sj.MemberID, "inst-") || sj.Members[0].InstanceID == nil || *sj.Members[0].InstanceID != "inst"):
		t.Fatalf("JoinGroup v%d static member: %+v", jv, sj)
	case jv < 5 && sj.Members[0].InstanceID != nil:
		t.Fatalf("JoinGroup v%d decoded a v5 field: %+v", jv, sj)
	}
}

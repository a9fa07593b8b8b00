package handlers

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/actors/coordinator"
	"gregor/config"
	"gregor/replication/metadata"
	"gregor/replication/metastore"
	"gregor/wire"
	"gregor/wire/security"
)

func groupBroker(t *testing.T) (*Broker, *coordinator.MemTopic) {
	t.Helper()
	sys := actors.NewSystem(zap.NewNop())
	topic := coordinator.NewMemTopic()
	cfg := coordinator.DefaultConfig()
	cfg.InitialRebalanceDelay = 0
	c, err := coordinator.New(sys, coordinator.Options{Config: cfg, Partitions: 50, Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(); sys.Shutdown() })
	// OffsetCommit/OffsetFetch v0 go to ZooKeeper (offsets_zk.go), not
	// the coordinator: an ensemble session and a topic "orders" of 10
	// partitions for them.
	zk := metastore.NewMemory().Open()
	t.Cleanup(func() { zk.Close() })
	bcfg, err := config.Parse(map[string]string{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	orders := &metadata.Topic{Name: "orders", Partitions: make([]metadata.Partition, 10)}
	for i := range orders.Partitions {
		orders.Partitions[i].Partition = int32(i)
	}
	snap := &metadata.Snapshot{ControllerID: -1, Topics: map[string]*metadata.Topic{"orders": orders}}
	return &Broker{Config: bcfg, Log: zap.NewNop(), Groups: c, ConsumerStore: zk, Topics: snapshotTopics{s: snap}}, topic
}

// call runs one request through Broker.Handle, waits for the (possibly
// delayed) answer, and round-trips it through the wire encoding at the
// request's version.
func groupCall[T kmsg.Response](t *testing.T, b *Broker, req kmsg.Request) T {
	t.Helper()
	return groupCallAs[T](t, b, security.Anonymous, req)
}

// groupCallAs is groupCall from principal who.
func groupCallAs[T kmsg.Response](t *testing.T, b *Broker, who security.Principal, req kmsg.Request) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc := &wire.RequestContext{Ctx: ctx, Key: req.Key(), Version: req.GetVersion(), ClientID: "cli",
		Remote: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5555}, Principal: who}
	resp, ok := b.Handle(rc, req).Resolve(ctx)
	if !ok || resp.Msg == nil {
		t.Fatalf("key %d: no answer", req.Key())
	}
	resp.Msg.SetVersion(req.GetVersion())
	back := resp.Msg.(kmsg.Response)
	fresh := kmsg.ResponseForKey(req.Key())
	fresh.SetVersion(req.GetVersion())
	if err := fresh.ReadFrom(back.AppendTo(nil)); err != nil {
		t.Fatalf("key %d v%d: response does not decode: %v", req.Key(), req.GetVersion(), err)
	}
	return fresh.(T)
}

func TestGroupHandlersEndToEnd(t *testing.T) {
	b, _ := groupBroker(t)
	for _, v := range []int16{0, 3, 4} {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.Version, fc.CoordinatorKey, fc.CoordinatorKeys = v, "g", []string{"g"}
		r := groupCall[*kmsg.FindCoordinatorResponse](t, b, fc)
		if v < 4 && (r.ErrorCode != 0 || r.Host != "127.0.0.1" || r.Port != 9092) {
			t.Fatalf("FindCoordinator v%d %+v", v, r)
		}
		if v >= 4 && (len(r.Coordinators) != 1 || r.Coordinators[0].Host != "127.0.0.1") {
			t.Fatalf("FindCoordinator v%d %+v", v, r)
		}
	}
	for _, v := range []int16{3, 4} { // v3: no MEMBER_ID_REQUIRED; v4: KIP-394
		group := "g" + string(rune('0'+v))
		jr := kmsg.NewPtrJoinGroupRequest()
		jr.Version, jr.Group, jr.ProtocolType = v, group, "consumer"
		jr.SessionTimeoutMillis, jr.RebalanceTimeoutMillis = 10000, 10000
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "range", []byte("md")
		jr.Protocols = append(jr.Protocols, p)
		j := groupCall[*kmsg.JoinGroupResponse](t, b, jr)
		if v >= 4 {
			if j.ErrorCode != kerr.MemberIDRequired.Code {
				t.Fatalf("v4 first join %d", j.ErrorCode)
			}
			jr.MemberID = j.MemberID
			j = groupCall[*kmsg.JoinGroupResponse](t, b, jr)
		}
		if j.ErrorCode != 0 || j.Generation != 1 || j.LeaderID != j.MemberID || len(j.Members) != 1 {
			t.Fatalf("v%d join %+v", v, j)
		}
		sr := kmsg.NewPtrSyncGroupRequest()
		sr.Version, sr.Group, sr.MemberID, sr.Generation = 3, group, j.MemberID, 1
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = j.MemberID, []byte("A")
		sr.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{a}
		if s := groupCall[*kmsg.SyncGroupResponse](t, b, sr); s.ErrorCode != 0 || string(s.MemberAssignment) != "A" {
			t.Fatalf("sync %+v", s)
		}
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Version, hb.Group, hb.MemberID, hb.Generation = 2, group, j.MemberID, 1
		if h := groupCall[*kmsg.HeartbeatResponse](t, b, hb); h.ErrorCode != 0 {
			t.Fatalf("heartbeat %d", h.ErrorCode)
		}
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Version, oc.Group, oc.MemberID, oc.Generation = 8, group, j.MemberID, 1
		ot := kmsg.NewOffsetCommitRequestTopic()
		ot.Topic = "orders"
		for part := int32(0); part < 2; part++ {
			op := kmsg.NewOffsetCommitRequestTopicPartition()
			op.Partition, op.Offset, op.Metadata = part, 100+int64(part), kmsg.StringPtr("m")
			ot.Partitions = append(ot.Partitions, op)
		}
		big := kmsg.NewOffsetCommitRequestTopicPartition()
		big.Partition, big.Metadata = 9, kmsg.StringPtr(string(make([]byte, 5000)))
		ot.Partitions = append(ot.Partitions, big)
		oc.Topics = []kmsg.OffsetCommitRequestTopic{ot}
		c := groupCall[*kmsg.OffsetCommitResponse](t, b, oc)
		if ps := c.Topics[0].Partitions; ps[0].ErrorCode != 0 || ps[1].ErrorCode != 0 || ps[2].ErrorCode != kerr.OffsetMetadataTooLarge.Code {
			t.Fatalf("commit %+v", ps)
		}
	}
	// OffsetFetch v8: two groups at once, all partitions of one, some of the other.
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version = 8
	g1 := kmsg.NewOffsetFetchRequestGroup()
	g1.Group = "g3"
	g2 := kmsg.NewOffsetFetchRequestGroup()
	g2.Group = "g4"
	gt := kmsg.NewOffsetFetchRequestGroupTopic()
	gt.Topic, gt.Partitions = "orders", []int32{1, 5}
	g2.Topics = []kmsg.OffsetFetchRequestGroupTopic{gt}
	of.Groups = []kmsg.OffsetFetchRequestGroup{g1, g2}
	f := groupCall[*kmsg.OffsetFetchResponse](t, b, of)
	if len(f.Groups) != 2 || len(f.Groups[0].Topics[0].Partitions) != 2 || f.Groups[0].Topics[0].Partitions[1].Offset != 101 {
		t.Fatalf("fetch v8 group 0 %+v", f.Groups)
	}
	if ps := f.Groups[1].Topics[0].Partitions; ps[0].Offset != 101 || ps[1].Offset != -1 || *ps[0].Metadata != "m" {
		t.Fatalf("fetch v8 group 1 %+v", ps)
	}
	// OffsetFetch v1 with explicit partitions.
	of1 := kmsg.NewPtrOffsetFetchRequest()
	of1.Version, of1.Group = 1, "g3"
	ft := kmsg.NewOffsetFetchRequestTopic()
	ft.Topic, ft.Partitions = "orders", []int32{0}
	of1.Topics = []kmsg.OffsetFetchRequestTopic{ft}
	if r := groupCall[*kmsg.OffsetFetchResponse](t, b, of1); r.Topics[0].Partitions[0].Offset != 100 {
		t.Fatalf("fetch v1 %+v", r.Topics)
	}
	lg := kmsg.NewPtrListGroupsRequest()
	lg.Version = 4
	if l := groupCall[*kmsg.ListGroupsResponse](t, b, lg); len(l.Groups) != 2 || l.Groups[0].GroupState != "Stable" || l.Groups[0].ProtocolType != "consumer" {
		t.Fatalf("list %+v", l.Groups)
	}
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Version, dg.Groups = 4, []string{"g3"}
	d := groupCall[*kmsg.DescribeGroupsResponse](t, b, dg)
	if d.Groups[0].State != "Stable" || d.Groups[0].Members[0].ClientHost != "/127.0.0.1" || d.Groups[0].Members[0].ClientID != "cli" {
		t.Fatalf("describe %+v", d.Groups[0])
	}
	// Leave v3 batched, then OffsetDelete and DeleteGroups.
	lv := kmsg.NewPtrLeaveGroupRequest()
	lv.Version, lv.Group = 3, "g3"
	m := kmsg.NewLeaveGroupRequestMember()
	m.MemberID = d.Groups[0].Members[0].MemberID
	ghost := kmsg.NewLeaveGroupRequestMember()
	ghost.MemberID = "ghost"
	lv.Members = []kmsg.LeaveGroupRequestMember{m, ghost}
	l := groupCall[*kmsg.LeaveGroupResponse](t, b, lv)
	if l.ErrorCode != 0 || l.Members[0].ErrorCode != 0 || l.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("leave %+v", l)
	}
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = "g3"
	odt := kmsg.NewOffsetDeleteRequestTopic()
	odt.Topic = "orders"
	odp := kmsg.NewOffsetDeleteRequestTopicPartition()
	odp.Partition = 0
	odt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{odp}
	od.Topics = []kmsg.OffsetDeleteRequestTopic{odt}
	if r := groupCall[*kmsg.OffsetDeleteResponse](t, b, od); r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("offset delete %+v", r)
	}
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Version, del.Groups = 2, []string{"g3", "g4", "none"}
	r := groupCall[*kmsg.DeleteGroupsResponse](t, b, del)
	if r.Groups[0].ErrorCode != 0 || r.Groups[1].ErrorCode != kerr.NonEmptyGroup.Code || r.Groups[2].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("delete %+v", r.Groups)
	}
}

func TestGroupHandlersWithoutCoordinator(t *testing.T) {
	b := &Broker{Log: zap.NewNop()}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version = 4
	if r := groupCall[*kmsg.HeartbeatResponse](t, b, hb); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("heartbeat %d", r.ErrorCode)
	}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorKeys = 4, []string{"a"}
	if r := groupCall[*kmsg.FindCoordinatorResponse](t, b, fc); r.Coordinators[0].ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("find %+v", r)
	}
	jr := kmsg.NewPtrJoinGroupRequest()
	jr.Version = 9
	if r := groupCall[*kmsg.JoinGroupResponse](t, b, jr); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("join %d", r.ErrorCode)
	}
}

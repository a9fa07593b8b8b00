package handlers

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/metastore"
	"gregor/wire"
	"gregor/wire/security"
	"gregor/wire/security/acl"
)

// aclBroker is a handlers.Broker with an authorizer over an in-memory
// store (super users as given) and nothing else.
func aclBroker(t *testing.T, superUsers ...security.Principal) *Broker {
	t.Helper()
	s := metastore.NewMemory().Open()
	t.Cleanup(func() { s.Close() })
	a := acl.NewAuthorizer(acl.Config{SuperUsers: superUsers}, nil)
	b := &Broker{Authorizer: a, ACLs: &acl.Admin{Store: s, Auth: a}}
	t.Cleanup(b.Close)
	return b
}

func aclRC(key, version int16, who security.Principal) *wire.RequestContext {
	return &wire.RequestContext{Ctx: context.Background(), Key: key, Version: version, Principal: who,
		Remote: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}}
}

func resolveMsg(t *testing.T, r wire.Reply) kmsg.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, ok := r.Resolve(ctx)
	if !ok {
		t.Fatal("no response")
	}
	return resp.Msg
}

func TestACLAPIs(t *testing.T) {
	admin := security.User("admin")
	b := aclBroker(t, admin)
	create := kmsg.NewPtrCreateACLsRequest()
	create.Version = 3
	add := func(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType, principal string, op kmsg.ACLOperation) {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, name, pt
		c.Principal, c.Host, c.Operation, c.PermissionType = principal, "*", op, kmsg.ACLPermissionTypeAllow
		create.Creations = append(create.Creations, c)
	}
	add(kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral, "User:alice", kmsg.ACLOperationRead)
	add(kmsg.ACLResourceTypeTopic, "log-", kmsg.ACLResourcePatternTypePrefixed, "User:alice", kmsg.ACLOperationWrite)
	add(kmsg.ACLResourceTypeCluster, "other", kmsg.ACLResourcePatternTypeLiteral, "User:alice", kmsg.ACLOperationAlter)
	add(kmsg.ACLResourceTypeGroup, "", kmsg.ACLResourcePatternTypeLiteral, "User:alice", kmsg.ACLOperationRead)
	add(kmsg.ACLResourceTypeGroup, "g", kmsg.ACLResourcePatternTypeMatch, "User:alice", kmsg.ACLOperationRead)
	add(kmsg.ACLResourceTypeGroup, "g", kmsg.ACLResourcePatternTypeLiteral, "alice", kmsg.ACLOperationRead)
	cr := resolveMsg(t, b.Handle(aclRC(30, 3, admin), create)).(*kmsg.CreateACLsResponse)
	want := []int16{0, 0, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code}
	for i, r := range cr.Results {
		if r.ErrorCode != want[i] {
			t.Errorf("creation %d: error %d (%v), want %d", i, r.ErrorCode, r.ErrorMessage, want[i])
		}
	}
	if m := cr.Results[2].ErrorMessage; m == nil || *m != "The only valid name for the CLUSTER resource is kafka-cluster" {
		t.Errorf("cluster name message %v", m)
	}

	// Not a super user, no ACL on the cluster: CLUSTER_AUTHORIZATION_FAILED everywhere.
	alice := security.User("alice")
	cr = resolveMsg(t, b.Handle(aclRC(30, 3, alice), create)).(*kmsg.CreateACLsResponse)
	for i, r := range cr.Results {
		if r.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
			t.Errorf("alice's creation %d: error %d", i, r.ErrorCode)
		}
	}

	describe := kmsg.NewPtrDescribeACLsRequest()
	describe.Version = 3
	describe.ResourceType, describe.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	describe.Operation, describe.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	dr := resolveMsg(t, b.Handle(aclRC(29, 3, admin), describe)).(*kmsg.DescribeACLsResponse)
	if dr.ErrorCode != 0 || len(dr.Resources) != 2 || dr.Resources[0].ResourceName != "orders" || dr.Resources[1].ResourceName != "log-" {
		t.Fatalf("DescribeAcls: %+v", dr)
	}
	dr = resolveMsg(t, b.Handle(aclRC(29, 3, alice), describe)).(*kmsg.DescribeACLsResponse)
	if dr.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("alice's DescribeAcls: error %d", dr.ErrorCode)
	}
	// v0 knows only literal patterns: ANY reads as LITERAL.
	d0 := *describe
	d0.Version = 0
	dr = resolveMsg(t, b.Handle(aclRC(29, 0, admin), &d0)).(*kmsg.DescribeACLsResponse)
	if dr.ErrorCode != 0 || len(dr.Resources) != 1 || dr.Resources[0].ResourceName != "orders" {
		t.Errorf("DescribeAcls v0: %+v", dr)
	}
	bad := *describe
	bad.Operation = kmsg.ACLOperationUnknown
	dr = resolveMsg(t, b.Handle(aclRC(29, 3, admin), &bad)).(*kmsg.DescribeACLsResponse)
	if dr.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("DescribeAcls with an UNKNOWN operation: error %d", dr.ErrorCode)
	}

	// Alice's ACLs now decide her requests.
	if !b.authorize(aclRC(0, 9, alice), acl.OpWrite, acl.ResourceTopic, "log-app") || b.authorize(aclRC(0, 9, alice), acl.OpWrite, acl.ResourceTopic, "orders") {
		t.Error("created ACLs not in force")
	}

	del := kmsg.NewPtrDeleteACLsRequest()
	del.Version = 3
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourcePatternType = kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypeMatch
	name := "log-x"
	f.ResourceName = &name
	f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	del.Filters = append(del.Filters, f)
	delr := resolveMsg(t, b.Handle(aclRC(31, 3, admin), del)).(*kmsg.DeleteACLsResponse)
	if len(delr.Results) != 1 || delr.Results[0].ErrorCode != 0 || len(delr.Results[0].MatchingACLs) != 1 ||
		delr.Results[0].MatchingACLs[0].ResourceName != "log-" || delr.Results[0].MatchingACLs[0].ResourcePatternType != kmsg.ACLResourcePatternTypePrefixed {
		t.Fatalf("DeleteAcls MATCH log-x: %+v", delr)
	}
	if b.authorize(aclRC(0, 9, alice), acl.OpWrite, acl.ResourceTopic, "log-app") {
		t.Error("deleted ACL still in force")
	}
}

// Without an authorizer the ACL APIs answer SECURITY_DISABLED and every
// check passes.
func TestACLAPIsSecurityDisabled(t *testing.T) {
	b := &Broker{}
	defer b.Close()
	who := security.Anonymous
	describe := kmsg.NewPtrDescribeACLsRequest()
	describe.ResourceType, describe.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	describe.Operation, describe.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	dr := resolveMsg(t, b.Handle(aclRC(29, 1, who), describe)).(*kmsg.DescribeACLsResponse)
	if dr.ErrorCode != kerr.SecurityDisabled.Code || dr.ErrorMessage == nil || *dr.ErrorMessage != "No Authorizer is configured on the broker" {
		t.Errorf("DescribeAcls: %d %v", dr.ErrorCode, dr.ErrorMessage)
	}
	create := kmsg.NewPtrCreateACLsRequest()
	create.Creations = []kmsg.CreateACLsRequestCreation{kmsg.NewCreateACLsRequestCreation()}
	cr := resolveMsg(t, b.Handle(aclRC(30, 1, who), create)).(*kmsg.CreateACLsResponse)
	if cr.Results[0].ErrorCode != kerr.SecurityDisabled.Code {
		t.Errorf("CreateAcls: %d", cr.Results[0].ErrorCode)
	}
	del := kmsg.NewPtrDeleteACLsRequest()
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.Operation, f.PermissionType = kmsg.ACLResourceTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	del.Filters = append(del.Filters, f)
	delr := resolveMsg(t, b.Handle(aclRC(31, 1, who), del)).(*kmsg.DeleteACLsResponse)
	if delr.Results[0].ErrorCode != kerr.SecurityDisabled.Code {
		t.Errorf("DeleteAcls: %d", delr.Results[0].ErrorCode)
	}
	if !b.authorize(aclRC(0, 9, who), acl.OpWrite, acl.ResourceTopic, "x") {
		t.Error("no authorizer must allow everything")
	}
}

// A forged StopReplica from a principal without ClusterAction is answered
// CLUSTER_AUTHORIZATION_FAILED on every partition before it reaches the
// cluster code (b.Cluster is nil here: reaching it would answer
// STALE_CONTROLLER_EPOCH).
func TestStopReplicaNeedsClusterAction(t *testing.T) {
	b := aclBroker(t)
	req := kmsg.NewPtrStopReplicaRequest()
	req.Version = 3
	st := kmsg.NewStopReplicaRequestTopic()
	st.Topic = "t"
	for p := int32(0); p < 2; p++ {
		ps := kmsg.NewStopReplicaRequestTopicPartitionState()
		ps.Partition, ps.Delete = p, true
		st.PartitionStates = append(st.PartitionStates, ps)
	}
	req.Topics = append(req.Topics, st)
	resp := resolveMsg(t, b.Handle(aclRC(5, 3, security.Anonymous), req)).(*kmsg.StopReplicaResponse)
	if resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code || len(resp.Partitions) != 2 ||
		resp.Partitions[1].ErrorCode != kerr.ClusterAuthorizationFailed.Code || resp.Partitions[1].Partition != 1 {
		t.Fatalf("StopReplica: %+v", resp)
	}
}

// The group APIs with some groups refused: the refused ones answer
// GROUP_AUTHORIZATION_FAILED in their place, the others reach the
// coordinator, and DescribeGroups fills authorized operations.
func TestGroupAPIsPartlyAuthorized(t *testing.T) {
	b, _ := groupBroker(t)
	b.Authorizer = acl.NewAuthorizer(acl.Config{}, nil)
	g1 := acl.ResourcePattern{Type: acl.ResourceGroup, Name: "g1", Pattern: acl.PatternLiteral}
	b.Authorizer.SetSnapshot(acl.NewSnapshot(map[acl.ResourcePattern][]acl.Entry{
		g1: {{Principal: "User:alice", Host: "*", Operation: acl.OpDescribe, Permission: acl.Allow},
			{Principal: "User:alice", Host: "127.0.0.1", Operation: acl.OpDelete, Permission: acl.Allow}},
	}))
	alice := security.User("alice")
	denied := kerr.GroupAuthorizationFailed.Code

	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorKeys = 4, []string{"g2", "g1"}
	fr := groupCallAs[*kmsg.FindCoordinatorResponse](t, b, alice, fc)
	if len(fr.Coordinators) != 2 || fr.Coordinators[0].Key != "g2" || fr.Coordinators[0].ErrorCode != denied ||
		fr.Coordinators[1].Key != "g1" || fr.Coordinators[1].ErrorCode != 0 {
		t.Errorf("FindCoordinator: %+v", fr.Coordinators)
	}
	fc0 := kmsg.NewPtrFindCoordinatorRequest()
	fc0.Version, fc0.CoordinatorKey = 2, "g2"
	if r := groupCallAs[*kmsg.FindCoordinatorResponse](t, b, alice, fc0); r.ErrorCode != denied || r.NodeID != -1 {
		t.Errorf("FindCoordinator v2 for g2: %+v", r)
	}

	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Version, dg.Groups, dg.IncludeAuthorizedOperations = 5, []string{"g1", "g2"}, true
	dr := groupCallAs[*kmsg.DescribeGroupsResponse](t, b, alice, dg)
	if len(dr.Groups) != 2 || dr.Groups[0].Group != "g2" || dr.Groups[0].ErrorCode != denied || dr.Groups[1].Group != "g1" ||
		dr.Groups[1].ErrorCode != 0 || dr.Groups[1].AuthorizedOperations != 1<<acl.OpDescribe|1<<acl.OpDelete {
		t.Errorf("DescribeGroups: %+v", dr.Groups)
	}

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Version, del.Groups = 2, []string{"g2"}
	if r := groupCallAs[*kmsg.DeleteGroupsResponse](t, b, alice, del); len(r.Groups) != 1 || r.Groups[0].ErrorCode != denied {
		t.Errorf("DeleteGroups g2: %+v", r.Groups)
	}

	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version = 8
	for _, g := range []string{"g2", "g1"} {
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = g
		of.Groups = append(of.Groups, rg)
	}
	ofr := groupCallAs[*kmsg.OffsetFetchResponse](t, b, alice, of)
	if len(ofr.Groups) != 2 || ofr.Groups[0].Group != "g2" || ofr.Groups[0].ErrorCode != denied ||
		ofr.Groups[1].Group != "g1" || ofr.Groups[1].ErrorCode != 0 {
		t.Errorf("OffsetFetch v8: %+v", ofr.Groups)
	}

	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.ProtocolType = 5, "g1", "consumer"
	join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 10000, 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
	if r := groupCallAs[*kmsg.JoinGroupResponse](t, b, alice, join); r.ErrorCode != denied || r.Generation != -1 {
		t.Errorf("JoinGroup g1 with Describe but not Read: %+v", r)
	}
}

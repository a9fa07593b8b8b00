package handlers

// DescribeAcls: v0-3
//
// Behaviour (Kafka's AclApis.handleDescribeAcls): needs Describe on the
// cluster (CLUSTER_AUTHORIZATION_FAILED); without an authorizer
// SECURITY_DISABLED ("No Authorizer is configured on the broker");
// otherwise the ACLs the filter selects from this broker's cache (kept
// current by the ACL change notifications), grouped by resource pattern.
// A filter with UNKNOWN elements is INVALID_REQUEST.
//
// Version notes: v0 only LITERAL patterns (ANY reads as LITERAL); v1
// pattern types (KIP-290); v2 flexible; v3 user resources (none here).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(29, 0, 3, handleDescribeACLs) }

func handleDescribeACLs(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.DescribeACLsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	f, code, msg := checkACLFilter(req.Version, aclFilter(req.ResourceType, req.ResourceName, req.ResourcePatternType,
		req.Principal, req.Host, req.Operation, req.PermissionType))
	if code != 0 {
		resp.ErrorCode, resp.ErrorMessage = code, &msg
		return wire.Now(wire.Response{Msg: resp})
	}
	if code, m := b.aclGate(b.authorizeCluster(rc, acl.OpDescribe)); code != 0 {
		if b.Authorizer == nil {
			s := "No Authorizer is configured on the broker"
			m = &s
		}
		resp.ErrorCode, resp.ErrorMessage = code, m
		return wire.Now(wire.Response{Msg: resp})
	}
	var cur *kmsg.DescribeACLsResponseResource
	for _, bd := range b.ACLs.Describe(f) { // sorted by pattern: one resource entry per pattern
		p := bd.Pattern
		if cur == nil || cur.ResourceType != kmsg.ACLResourceType(p.Type) || cur.ResourceName != p.Name ||
			cur.ResourcePatternType != kmsg.ACLResourcePatternType(p.Pattern) {
			r := kmsg.NewDescribeACLsResponseResource()
			r.ResourceType, r.ResourceName, r.ResourcePatternType = kmsg.ACLResourceType(p.Type), p.Name, kmsg.ACLResourcePatternType(p.Pattern)
			resp.Resources = append(resp.Resources, r)
			cur = &resp.Resources[len(resp.Resources)-1]
		}
		a := kmsg.NewDescribeACLsResponseResourceACL()
		a.Principal, a.Host = bd.Entry.Principal, bd.Entry.Host
		a.Operation, a.PermissionType = kmsg.ACLOperation(bd.Entry.Operation), kmsg.ACLPermissionType(bd.Entry.Permission)
		cur.ACLs = append(cur.ACLs, a)
	}
	return wire.Now(wire.Response{Msg: resp})
}

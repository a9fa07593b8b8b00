package handlers

// DeleteAcls: v0-3
//
// Behaviour (Kafka's AclApis.handleDeleteAcls and
// AclAuthorizer.deleteAcls): needs Alter on the cluster
// (CLUSTER_AUTHORIZATION_FAILED for every filter); without an authorizer
// SECURITY_DISABLED. Each filter's result lists the ACLs it deleted (an
// ACL two filters select is reported under the first); a filter with
// UNKNOWN elements is INVALID_REQUEST. Resources left without ACLs lose
// their znode; each changed resource gets a change notification. A write
// that failed is reported on each of its ACLs (UNKNOWN_SERVER_ERROR); a
// store that cannot be read fails every filter. Runs off the reader.
//
// Version notes: v0 only LITERAL patterns (ANY reads as LITERAL, others
// UNSUPPORTED_VERSION); v1 pattern types; v2 flexible; v3 user resources.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(31, 0, 3, handleDeleteACLs) }

func handleDeleteACLs(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.DeleteACLsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	resp.Results = make([]kmsg.DeleteACLsResponseResult, len(req.Filters))
	for i := range resp.Results {
		resp.Results[i] = kmsg.NewDeleteACLsResponseResult()
	}
	filters := make([]acl.BindingFilter, len(req.Filters))
	for i, f := range req.Filters {
		bf, code, msg := checkACLFilter(req.Version, aclFilter(f.ResourceType, f.ResourceName, f.ResourcePatternType,
			f.Principal, f.Host, f.Operation, f.PermissionType))
		if code != 0 { // Kafka refuses the whole request
			for j := range resp.Results {
				resp.Results[j].ErrorCode, resp.Results[j].ErrorMessage = code, &msg
			}
			return wire.Now(wire.Response{Msg: resp})
		}
		filters[i] = bf
	}
	if code, msg := b.aclGate(b.authorizeCluster(rc, acl.OpAlter)); code != 0 {
		for i := range resp.Results {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = code, msg
		}
		return wire.Now(wire.Response{Msg: resp})
	}
	return b.async(func() kmsg.Response {
		removed, err := b.ACLs.Delete(filters)
		if err != nil {
			code, msg := kerr.UnknownServerError.Code, err.Error()
			for i := range resp.Results {
				resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = code, &msg
			}
			return resp
		}
		for i, rs := range removed {
			for _, r := range rs {
				m := kmsg.NewDeleteACLsResponseResultMatchingACL()
				p, e := r.Binding.Pattern, r.Binding.Entry
				m.ResourceType, m.ResourceName, m.ResourcePatternType = kmsg.ACLResourceType(p.Type), p.Name, kmsg.ACLResourcePatternType(p.Pattern)
				m.Principal, m.Host = e.Principal, e.Host
				m.Operation, m.PermissionType = kmsg.ACLOperation(e.Operation), kmsg.ACLPermissionType(e.Permission)
				if r.Err != nil {
					m.ErrorCode, m.ErrorMessage = aclWriteError(r.Err)
				}
				resp.Results[i].MatchingACLs = append(resp.Results[i].MatchingACLs, m)
			}
		}
		return resp
	})
}

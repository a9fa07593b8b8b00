package handlers

// CreateAcls: v0-3
//
// Behaviour (Kafka's AclApis.handleCreateAcls and
// AclAuthorizer.createAcls): needs Alter on the cluster
// (CLUSTER_AUTHORIZATION_FAILED for every creation); without an
// authorizer SECURITY_DISABLED. Each creation is then checked on its own,
// INVALID_REQUEST for: a Cluster resource not named kafka-cluster, an
// empty name, UNKNOWN or filter-only (ANY/MATCH) elements, a '/' in the
// name, a principal that is not Type:Name. The valid ones are stored
// per resource with a conditional write and a change notification
// (acl.Add), which every broker's watcher applies. A store failure is
// UNKNOWN_SERVER_ERROR with its message. Runs off the connection's
// reader (the store may be ZooKeeper).
//
// Version notes: v0 only LITERAL patterns (others UNSUPPORTED_VERSION);
// v1 pattern types; v2 flexible; v3 user resources.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(30, 0, 3, handleCreateACLs) }

func handleCreateACLs(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.CreateACLsRequest)
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	resp.Results = make([]kmsg.CreateACLsResponseResult, len(req.Creations))
	for i := range resp.Results {
		resp.Results[i] = kmsg.NewCreateACLsResponseResult()
	}
	all := func(code int16, msg *string) wire.Reply {
		for i := range resp.Results {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = code, msg
		}
		return wire.Now(wire.Response{Msg: resp})
	}
	bindings := make([]acl.Binding, len(req.Creations))
	for i, c := range req.Creations {
		bindings[i] = acl.Binding{
			Pattern: acl.ResourcePattern{Type: acl.ResourceType(c.ResourceType), Name: c.ResourceName, Pattern: acl.PatternType(c.ResourcePatternType)},
			Entry:   acl.Entry{Principal: c.Principal, Host: c.Host, Operation: acl.Operation(c.Operation), Permission: acl.PermissionType(c.PermissionType)},
		}
		if req.Version == 0 && bindings[i].Pattern.Pattern != acl.PatternLiteral {
			msg := "Version 0 only supports literal resource pattern types"
			return all(kerr.UnsupportedVersion.Code, &msg)
		}
	}
	if code, msg := b.aclGate(b.authorizeCluster(rc, acl.OpAlter)); code != 0 {
		return all(code, msg)
	}
	return b.async(func() kmsg.Response {
		var valid []acl.Binding
		var idx []int
		for i, bd := range bindings {
			p := bd.Pattern
			var msg string
			switch {
			case p.Type == acl.ResourceCluster && p.Name != acl.ClusterName:
				msg = "The only valid name for the CLUSTER resource is " + acl.ClusterName
			case p.Name == "":
				msg = "Invalid empty resource name"
			default:
				valid, idx = append(valid, bd), append(idx, i)
				continue
			}
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = kerr.InvalidRequest.Code, &msg
		}
		for j, err := range b.ACLs.Create(valid) {
			if err != nil {
				r := &resp.Results[idx[j]]
				r.ErrorCode, r.ErrorMessage = aclWriteError(err)
				b.Log.Debug("CreateAcls: binding refused", zap.Stringer("resource", valid[j].Pattern), zap.Error(err))
			}
		}
		return resp
	})
}

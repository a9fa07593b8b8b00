package handlers

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire/security/acl"
)

// The ACL APIs' shared request checks and conversions between kmsg's
// fields and the acl model (whose values are the same wire codes).

// aclFilter builds the model filter of a DescribeAcls / DeleteAcls filter.
func aclFilter(rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType, principal, host *string,
	op kmsg.ACLOperation, perm kmsg.ACLPermissionType) acl.BindingFilter {
	return acl.BindingFilter{
		Pattern: acl.PatternFilter{Type: acl.ResourceType(rt), Name: name, Pattern: acl.PatternType(pt)},
		Entry:   acl.EntryFilter{Principal: principal, Host: host, Operation: acl.Operation(op), Permission: acl.PermissionType(perm)},
	}
}

// checkACLFilter applies Kafka's request validation of an ACL filter
// (DescribeAclsRequest / DeleteAclsRequest normalizeAndValidate): at v0
// only LITERAL patterns exist, so ANY reads as LITERAL and anything else
// is UNSUPPORTED_VERSION; an UNKNOWN (or out-of-range) element is
// INVALID_REQUEST. It returns the filter to use, or an error code and message.
func checkACLFilter(version int16, f acl.BindingFilter) (acl.BindingFilter, int16, string) {
	if version == 0 {
		switch f.Pattern.Pattern {
		case acl.PatternAny, acl.PatternLiteral:
			f.Pattern.Pattern = acl.PatternLiteral
		default:
			return f, kerr.UnsupportedVersion.Code, "Version 0 only supports literal resource pattern types"
		}
	}
	if f.IsUnknown() {
		return f, kerr.InvalidRequest.Code, "The ACL filter contains UNKNOWN elements"
	}
	return f, 0, ""
}

// aclWriteError is the code and message of a failed ACL store write: a
// binding Kafka refuses is INVALID_REQUEST, anything else (the store
// unreachable, too many conflicting writers) UNKNOWN_SERVER_ERROR.
func aclWriteError(err error) (int16, *string) {
	msg := err.Error()
	if _, ok := err.(*acl.InvalidError); ok {
		return kerr.InvalidRequest.Code, &msg
	}
	return kerr.UnknownServerError.Code, &msg
}

// aclGate answers what both ACL-changing APIs answer before looking at
// their bindings: CLUSTER_AUTHORIZATION_FAILED without cluster op,
// SECURITY_DISABLED without an authorizer (Kafka's AclApis order). 0 =
// go on.
func (b *Broker) aclGate(allowedOp bool) (int16, *string) {
	if !allowedOp {
		msg := "Cluster authorization failed."
		return kerr.ClusterAuthorizationFailed.Code, &msg
	}
	if b.Authorizer == nil || b.ACLs == nil {
		msg := "No Authorizer is configured."
		return kerr.SecurityDisabled.Code, &msg
	}
	return 0, nil
}

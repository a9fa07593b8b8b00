package acl

import (
	"fmt"
	"strings"
)

// ResourceType is what an ACL protects (Kafka's ResourceType). Its value
// is the wire code of the CreateAcls/DescribeAcls/DeleteAcls ResourceType
// fields.
type ResourceType int8

// Kafka's resource types and their codes.
const (
	ResourceUnknown         ResourceType = 0
	ResourceAny             ResourceType = 1 // filters only
	ResourceTopic           ResourceType = 2
	ResourceGroup           ResourceType = 3
	ResourceCluster         ResourceType = 4
	ResourceTransactionalID ResourceType = 5
	ResourceDelegationToken ResourceType = 6
	ResourceUser            ResourceType = 7
)

// Operation is what a principal does to a resource (Kafka's AclOperation);
// its value is the wire code of the Operation fields.
type Operation int8

// Kafka's ACL operations and their codes.
const (
	OpUnknown         Operation = 0
	OpAny             Operation = 1 // filters only
	OpAll             Operation = 2 // an ACL with All matches every operation
	OpRead            Operation = 3
	OpWrite           Operation = 4
	OpCreate          Operation = 5
	OpDelete          Operation = 6
	OpAlter           Operation = 7
	OpDescribe        Operation = 8
	OpClusterAction   Operation = 9
	OpDescribeConfigs Operation = 10
	OpAlterConfigs    Operation = 11
	OpIdempotentWrite Operation = 12
	OpCreateTokens    Operation = 13
	OpDescribeTokens  Operation = 14
)

// PermissionType says whether an ACL allows or denies (Kafka's
// AclPermissionType); its value is the wire code of PermissionType.
type PermissionType int8

// Kafka's permission types and their codes.
const (
	PermissionUnknown PermissionType = 0
	PermissionAny     PermissionType = 1 // filters only
	Deny              PermissionType = 2
	Allow             PermissionType = 3
)

// PatternType says how an ACL's resource name matches (Kafka's
// PatternType, KIP-290); its value is the wire code of the
// ResourcePatternType / PatternTypeFilter fields.
type PatternType int8

// Kafka's pattern types and their codes.
const (
	PatternUnknown  PatternType = 0
	PatternAny      PatternType = 1 // filters: LITERAL or PREFIXED with exactly this name
	PatternMatch    PatternType = 2 // filters: every pattern that would match this name
	PatternLiteral  PatternType = 3 // the name, or "*" for every resource of the type
	PatternPrefixed PatternType = 4 // every name starting with the name
)

// Wildcards and fixed names, as Kafka's AclEntry and ResourcePattern define them.
const (
	// WildcardResource is the literal resource name matching every resource of its type.
	WildcardResource = "*"
	// WildcardHost is the ACL host matching every client address.
	WildcardHost = "*"
	// WildcardPrincipal is the ACL principal matching every User principal.
	WildcardPrincipal = "User:*"
	// ClusterName is the only valid name of the Cluster resource.
	ClusterName = "kafka-cluster"
)

var resourceNames = []string{"Unknown", "Any", "Topic", "Group", "Cluster", "TransactionalId", "DelegationToken", "User"}
var operationNames = []string{"Unknown", "Any", "All", "Read", "Write", "Create", "Delete", "Alter", "Describe",
	"ClusterAction", "DescribeConfigs", "AlterConfigs", "IdempotentWrite", "CreateTokens", "DescribeTokens"}
var permissionNames = []string{"Unknown", "Any", "Deny", "Allow"}
var patternNames = []string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}

func name(names []string, i int8) string {
	if i < 0 || int(i) >= len(names) {
		return names[0]
	}
	return names[i]
}

// enumName turns a Pascal-case name into Kafka's Java enum constant
// ("TransactionalId" → "TRANSACTIONAL_ID").
func enumName(pascal string) string {
	var b strings.Builder
	for i, c := range pascal {
		if i > 0 && c >= 'A' && c <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(c)
	}
	return strings.ToUpper(b.String())
}

// parseName finds s among names, ignoring case and underscores, so the
// Pascal-case ("TransactionalId"), upper-case and Java enum
// ("TRANSACTIONAL_ID") forms Kafka's SecurityUtils and fromString accept
// all parse. It returns 0 (Unknown) when nothing matches.
func parseName(names []string, s string) int8 {
	k := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), "_", ""))
	for i, n := range names {
		if strings.ToLower(n) == k {
			return int8(i)
		}
	}
	return 0
}

// String is the Pascal-case name Kafka stores in znode paths and prints
// ("Topic", "TransactionalId").
func (t ResourceType) String() string { return name(resourceNames, int8(t)) }

// EnumName is the Java enum constant ("TOPIC", "TRANSACTIONAL_ID"), the
// form of the change notifications and kafka-acls.sh's output.
func (t ResourceType) EnumName() string { return enumName(t.String()) }

// ParseResourceType parses a resource type name in any of Kafka's forms
// ("Topic", "TOPIC", "transactional_id"); ResourceUnknown if none.
func ParseResourceType(s string) ResourceType { return ResourceType(parseName(resourceNames, s)) }

// String is the Pascal-case name Kafka stores in ACL JSON ("Read", "ClusterAction").
func (o Operation) String() string { return name(operationNames, int8(o)) }

// EnumName is the Java enum constant ("READ", "CLUSTER_ACTION").
func (o Operation) EnumName() string { return enumName(o.String()) }

// ParseOperation parses an operation name in any of Kafka's forms; OpUnknown if none.
func ParseOperation(s string) Operation { return Operation(parseName(operationNames, s)) }

// String is the Pascal-case name Kafka stores in ACL JSON ("Allow", "Deny").
func (p PermissionType) String() string { return name(permissionNames, int8(p)) }

// EnumName is the Java enum constant ("ALLOW", "DENY").
func (p PermissionType) EnumName() string { return enumName(p.String()) }

// ParsePermissionType parses "Allow"/"ALLOW"/"Deny"/…; PermissionUnknown if none.
func ParsePermissionType(s string) PermissionType {
	return PermissionType(parseName(permissionNames, s))
}

// String is the Java enum constant ("LITERAL", "PREFIXED"), which Kafka
// uses everywhere for pattern types; the extended znode path uses its
// lower case.
func (p PatternType) String() string { return name(patternNames, int8(p)) }

// ParsePatternType parses a pattern type name, ignoring case; PatternUnknown if none.
func ParsePatternType(s string) PatternType { return PatternType(parseName(patternNames, s)) }

// IsSpecific reports whether p names a stored pattern type (LITERAL or
// PREFIXED) rather than a filter-only one (ANY, MATCH) or UNKNOWN.
func (p PatternType) IsSpecific() bool { return p == PatternLiteral || p == PatternPrefixed }

// ResourcePattern is a resource name with its type and pattern type
// (Kafka's ResourcePattern): what an ACL is attached to.
type ResourcePattern struct {
	Type    ResourceType
	Name    string
	Pattern PatternType
}

// String renders the pattern as Kafka's ResourcePattern.toString does.
func (r ResourcePattern) String() string {
	return fmt.Sprintf("ResourcePattern(resourceType=%s, name=%s, patternType=%s)", r.Type.EnumName(), r.Name, r.Pattern)
}

// Entry is one access-control entry (Kafka's AccessControlEntry, the
// element of a resource's "acls" JSON array): Principal is "Type:Name"
// ("User:alice", or WildcardPrincipal), Host a client IP address or
// WildcardHost.
type Entry struct {
	Principal  string
	Host       string
	Operation  Operation
	Permission PermissionType
}

// String renders the entry as Kafka's AclEntry.toString does (the form
// the authorizer's debug log and kafka-acls.sh print).
func (e Entry) String() string {
	return fmt.Sprintf("%s has %s permission for operations: %s from hosts: %s", e.Principal, e.Permission.EnumName(), e.Operation.EnumName(), e.Host)
}

// Binding is an Entry attached to a ResourcePattern (Kafka's AclBinding).
type Binding struct {
	Pattern ResourcePattern
	Entry   Entry
}

// Validate checks a binding that is to be stored, with the errors
// Kafka's CreateAcls answers as INVALID_REQUEST: unknown or filter-only
// elements (ANY, MATCH), an empty name, a '/' in the name (it would be a
// znode path), a Cluster resource not named kafka-cluster, and a principal
// that is not "Type:Name".
func (b Binding) Validate() error {
	p, e := b.Pattern, b.Entry
	if p.Type <= ResourceAny || p.Type > ResourceUser || !p.Pattern.IsSpecific() ||
		e.Operation <= OpAny || e.Operation > OpDescribeTokens ||
		(e.Permission != Allow && e.Permission != Deny) {
		return fmt.Errorf("ACL binding contains unknown elements")
	}
	if p.Type == ResourceCluster && p.Name != ClusterName {
		return fmt.Errorf("The only valid name for the CLUSTER resource is %s", ClusterName)
	}
	if p.Name == "" {
		return fmt.Errorf("Invalid empty resource name")
	}
	if strings.Contains(p.Name, "/") {
		return fmt.Errorf("ACL binding contains invalid resource name: %s", p.Name)
	}
	if t, n, ok := strings.Cut(e.Principal, ":"); !ok || t == "" || n == "" {
		return fmt.Errorf("expected a string in format principalType:principalName but got %s", e.Principal)
	}
	if e.Host == "" {
		return fmt.Errorf("Invalid empty host")
	}
	return nil
}

// Implied returns the operations whose Allow ACLs grant op: Describe is
// implied by Read, Write, Delete and Alter, DescribeConfigs by
// AlterConfigs (AclOperation's documented inheritance, as AclAuthorizer
// applies it to Allow ACLs only); every other operation only by itself.
// All is matched separately by the authorizer.
func Implied(op Operation) []Operation {
	switch op {
	case OpDescribe:
		return []Operation{OpDescribe, OpRead, OpWrite, OpDelete, OpAlter}
	case OpDescribeConfigs:
		return []Operation{OpDescribeConfigs, OpAlterConfigs}
	}
	return []Operation{op}
}

// SupportedOperations lists the operations that apply to a concrete
// resource type (Kafka's AclEntry.supportedOperations): what the
// authorized-operations bitfields of Metadata, DescribeGroups and
// DescribeCluster are computed over. Nil for ANY/UNKNOWN.
func SupportedOperations(t ResourceType) []Operation {
	switch t {
	case ResourceTopic:
		return []Operation{OpRead, OpWrite, OpCreate, OpDescribe, OpDelete, OpAlter, OpDescribeConfigs, OpAlterConfigs}
	case ResourceGroup:
		return []Operation{OpRead, OpDescribe, OpDelete}
	case ResourceCluster:
		return []Operation{OpCreate, OpClusterAction, OpDescribeConfigs, OpAlterConfigs, OpIdempotentWrite, OpAlter, OpDescribe}
	case ResourceTransactionalID:
		return []Operation{OpDescribe, OpWrite}
	case ResourceDelegationToken:
		return []Operation{OpDescribe}
	case ResourceUser:
		return []Operation{OpCreateTokens, OpDescribeTokens}
	}
	return nil
}

// AuthorizationErrorCode is the Kafka error code a denied operation on a
// resource of type t answers (AclEntry.authorizationError):
// TOPIC_AUTHORIZATION_FAILED (29), GROUP_AUTHORIZATION_FAILED (30),
// CLUSTER_AUTHORIZATION_FAILED (31), TRANSACTIONAL_ID_AUTHORIZATION_FAILED
// (53), DELEGATION_TOKEN_AUTHORIZATION_FAILED (65); 0 for other types.
func AuthorizationErrorCode(t ResourceType) int16 {
	switch t {
	case ResourceTopic:
		return 29
	case ResourceGroup:
		return 30
	case ResourceCluster:
		return 31
	case ResourceTransactionalID:
		return 53
	case ResourceDelegationToken:
		return 65
	}
	return 0
}

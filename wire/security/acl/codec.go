package acl

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ZooKeeper paths of AclAuthorizer's storage (kafka.zk.ZkData: ZkAclStore,
// ZkAclChangeStore).
const (
	// LiteralPath holds literal patterns: /kafka-acl/<ResourceType>/<name>.
	LiteralPath = "/kafka-acl"
	// ExtendedPath holds the other pattern types:
	// /kafka-acl-extended/<patterntype>/<ResourceType>/<name>, today only
	// "prefixed".
	ExtendedPath = "/kafka-acl-extended"
	// LiteralChangesPath receives a sequential node per change of a
	// literal pattern's ACLs, data "<RESOURCE_TYPE>:<name>".
	LiteralChangesPath = "/kafka-acl-changes"
	// ExtendedChangesPath receives a sequential node per change of a
	// prefixed pattern's ACLs, data the JSON of EncodeChange.
	ExtendedChangesPath = "/kafka-acl-extended-changes"
	// ChangePrefix is the name prefix of the sequential change nodes
	// (acl_changes_0000000042).
	ChangePrefix = "acl_changes_"
)

// storedResourceTypes are the types AclAuthorizer creates a directory for
// (AclEntry.RESOURCE_TYPES: every type but UNKNOWN and ANY).
var storedResourceTypes = []ResourceType{ResourceTopic, ResourceGroup, ResourceCluster,
	ResourceTransactionalID, ResourceDelegationToken, ResourceUser}

// storedPatternTypes are the pattern types that have a store.
var storedPatternTypes = []PatternType{PatternLiteral, PatternPrefixed}

// PatternRoot is the directory of a stored pattern type: LiteralPath, or
// ExtendedPath/<lower-case pattern type>.
func PatternRoot(p PatternType) string {
	if p == PatternLiteral {
		return LiteralPath
	}
	return ExtendedPath + "/" + strings.ToLower(p.String())
}

// ChangesPath is where changes to patterns of type p are announced.
func ChangesPath(p PatternType) string {
	if p == PatternLiteral {
		return LiteralChangesPath
	}
	return ExtendedChangesPath
}

// ResourcePath is the znode holding r's ACLs (Kafka's ResourceZNode.path):
// e.g. /kafka-acl/Topic/orders, /kafka-acl-extended/prefixed/Group/app-.
func ResourcePath(r ResourcePattern) string {
	return PatternRoot(r.Pattern) + "/" + r.Type.String() + "/" + r.Name
}

// jsonEntry is one element of "acls", in the key order Kafka's tools show.
type jsonEntry struct {
	Principal      string `json:"principal"`
	PermissionType string `json:"permissionType"`
	Operation      string `json:"operation"`
	Host           string `json:"host"`
}

type jsonAcls struct {
	Version int         `json:"version"`
	Acls    []jsonEntry `json:"acls"`
}

// EncodeEntries renders a resource node's data (Kafka's
// AclEntry.toJsonCompatibleMap), e.g.
// {"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}.
func EncodeEntries(entries []Entry) []byte {
	doc := jsonAcls{Version: 1, Acls: make([]jsonEntry, 0, len(entries))}
	for _, e := range entries {
		doc.Acls = append(doc.Acls, jsonEntry{e.Principal, e.Permission.String(), e.Operation.String(), e.Host})
	}
	b, _ := json.Marshal(doc) // strings and ints only: cannot fail
	return b
}

// DecodeEntries parses a resource node's data (Kafka's AclEntry.fromBytes):
// empty data is no ACLs; the version must be 1; names parse in any case
// (an unknown operation or permission decodes as Unknown, which never
// matches, as in Kafka). Duplicates are dropped (Kafka keeps a set).
// Errors: malformed JSON, another version, a principal without ':'.
func DecodeEntries(data []byte) ([]Entry, error) {
	if len(data) == 0 || string(data) == "null" {
		return nil, nil
	}
	var doc struct {
		Version *int        `json:"version"`
		Acls    []jsonEntry `json:"acls"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("acl: malformed ACL json: %w", err)
	}
	if doc.Version == nil || *doc.Version != 1 {
		return nil, fmt.Errorf("acl: unsupported ACL json version (want 1): %s", data)
	}
	out := make([]Entry, 0, len(doc.Acls))
	for _, j := range doc.Acls {
		if t, n, ok := strings.Cut(j.Principal, ":"); !ok || t == "" || n == "" {
			return nil, fmt.Errorf("acl: expected a string in format principalType:principalName but got %s", j.Principal)
		}
		out = addUnique(out, Entry{j.Principal, j.Host, ParseOperation(j.Operation), ParsePermissionType(j.PermissionType)})
	}
	return out, nil
}

func addUnique(entries []Entry, e Entry) []Entry {
	for _, x := range entries {
		if x == e {
			return entries
		}
	}
	return append(entries, e)
}

type jsonChange struct {
	Version      int    `json:"version"`
	ResourceType string `json:"resourceType"`
	Name         string `json:"name"`
	PatternType  string `json:"patternType"`
}

// EncodeChange is the data of the change notification for r: for a
// literal pattern Kafka's legacy "TOPIC:name" string
// (LiteralAclChangeStore), for the others the JSON
// {"version":1,"resourceType":"TOPIC","name":"p","patternType":"PREFIXED"}
// (ExtendedAclChangeEvent).
func EncodeChange(r ResourcePattern) []byte {
	if r.Pattern == PatternLiteral {
		return []byte(r.Type.EnumName() + ":" + r.Name)
	}
	b, _ := json.Marshal(jsonChange{1, r.Type.EnumName(), r.Name, r.Pattern.String()})
	return b
}

// DecodeChange parses a change notification's data read under
// changesPath (LiteralChangesPath or ExtendedChangesPath). Errors: a
// literal change without ':', malformed JSON, a version above 1, an
// unknown resource or pattern type.
func DecodeChange(changesPath string, data []byte) (ResourcePattern, error) {
	if changesPath == LiteralChangesPath {
		t, n, ok := strings.Cut(string(data), ":")
		if !ok {
			return ResourcePattern{}, fmt.Errorf("acl: expected a string in format ResourceType:ResourceName but got %s", data)
		}
		rt := ParseResourceType(t)
		if rt <= ResourceAny {
			return ResourcePattern{}, fmt.Errorf("acl: unknown resource type in ACL change %q", data)
		}
		return ResourcePattern{rt, n, PatternLiteral}, nil
	}
	var c jsonChange
	if err := json.Unmarshal(data, &c); err != nil {
		return ResourcePattern{}, fmt.Errorf("acl: failed to parse ACL change event: %w", err)
	}
	if c.Version > 1 {
		return ResourcePattern{}, fmt.Errorf("acl: ACL change event received for unsupported version: %d", c.Version)
	}
	r := ResourcePattern{ParseResourceType(c.ResourceType), c.Name, ParsePatternType(c.PatternType)}
	if r.Type <= ResourceAny || !r.Pattern.IsSpecific() {
		return ResourcePattern{}, fmt.Errorf("acl: failed to convert ACL change event to resource: %s", data)
	}
	return r, nil
}

package acls

import (
	"fmt"
	"strings"

	"gregor/cmd/internal/clientutil"
	"gregor/wire/security/acl"
)

// resourceACLs is one resource (pattern filter) with the entries a
// command adds or removes on it; AclCommand keeps these in a map, here
// they keep the order the resources were first named.
type resourceACLs struct {
	filter  acl.PatternFilter
	entries []acl.Entry
}

// resourceList is an ordered map from pattern filter to entries.
type resourceList []resourceACLs

// merge adds entries to the filter's set (appending the filter if new),
// keeping first-seen order and dropping duplicates, as Scala's Set union.
func (l resourceList) merge(f acl.PatternFilter, entries []acl.Entry) resourceList {
	i := l.index(f)
	if i < 0 {
		l = append(l, resourceACLs{filter: f})
		i = len(l) - 1
	}
	l[i].entries = addEntries(l[i].entries, entries)
	return l
}

func (l resourceList) index(f acl.PatternFilter) int {
	for i, r := range l {
		if sameFilter(r.filter, f) {
			return i
		}
	}
	return -1
}

func sameFilter(a, b acl.PatternFilter) bool {
	return a.Type == b.Type && a.Pattern == b.Pattern && (a.Name == nil) == (b.Name == nil) && (a.Name == nil || *a.Name == *b.Name)
}

func addEntries(to, add []acl.Entry) []acl.Entry {
	for _, e := range add {
		dup := false
		for _, x := range to {
			if x == e {
				dup = true
				break
			}
		}
		if !dup {
			to = append(to, e)
		}
	}
	return to
}

// clusterFilter is AclCommand's ClusterResourceFilter: the literal
// kafka-cluster resource.
func clusterFilter() acl.PatternFilter {
	n := acl.ClusterName
	return acl.PatternFilter{Type: acl.ResourceCluster, Name: &n, Pattern: acl.PatternLiteral}
}

// resourceFilters is AclCommand.getResourceFilter: a filter per --topic,
// --group, --transactional-id, --delegation-token and --user-principal
// (names trimmed, except transactional ids, as Kafka does) with the
// command's pattern type, and the cluster for --cluster or --idempotent
// when the pattern type is LITERAL. With none and needOne, the usage
// error Kafka prints.
func (o *Options) resourceFilters(pt acl.PatternType, needOne bool) ([]acl.PatternFilter, error) {
	var out resourceList
	add := func(t acl.ResourceType, names []string, trim bool) {
		for _, n := range names {
			if trim {
				n = strings.TrimSpace(n)
			}
			out = out.merge(acl.PatternFilter{Type: t, Name: &n, Pattern: pt}, nil)
		}
	}
	add(acl.ResourceTopic, o.Topics, true)
	if pt == acl.PatternLiteral && (o.has(fCluster) || o.has(fIdempotent)) {
		out = out.merge(clusterFilter(), nil)
	}
	add(acl.ResourceGroup, o.Groups, true)
	add(acl.ResourceTransactionalID, o.TransactionalIDs, false)
	add(acl.ResourceDelegationToken, o.DelegationTokens, true)
	add(acl.ResourceUser, o.UserPrincipals, true)
	if len(out) == 0 && needOne {
		return nil, clientutil.Usage("You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --delegation-token <Delegation Token ID>")
	}
	filters := make([]acl.PatternFilter, len(out))
	for i, r := range out {
		filters[i] = r.filter
	}
	return filters, nil
}

// parsePrincipals is SecurityUtils.parseKafkaPrincipal over a flag's
// values (trimmed): each must be "Type:name". The error is Kafka's
// IllegalArgumentException message.
func parsePrincipals(values []string) ([]string, error) {
	var out []string
	for _, v := range values {
		v = strings.TrimSpace(v)
		if !strings.Contains(v, ":") {
			return nil, fmt.Errorf("expected a string in format principalType:principalName but got %s", v)
		}
		out = appendNew(out, v)
	}
	return out, nil
}

// hosts is AclCommand.getHosts: the given hosts (trimmed), else * when
// principals were given, else none.
func hosts(values []string, principalsGiven bool) []string {
	var out []string
	for _, h := range values {
		out = appendNew(out, strings.TrimSpace(h))
	}
	if len(values) == 0 && principalsGiven {
		out = []string{acl.WildcardHost}
	}
	return out
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// entries is AclCommand.getAcl(opts, operations): allow entries for every
// allowed principal × operation × host, then deny entries likewise.
func (o *Options) entries(ops []acl.Operation) ([]acl.Entry, error) {
	allow, err := parsePrincipals(o.AllowPrincipals)
	if err != nil {
		return nil, err
	}
	deny, err := parsePrincipals(o.DenyPrincipals)
	if err != nil {
		return nil, err
	}
	var out []acl.Entry
	for _, side := range []struct {
		principals, hosts []string
		perm              acl.PermissionType
	}{
		{allow, hosts(o.AllowHosts, o.has(fAllowPrinc)), acl.Allow},
		{deny, hosts(o.DenyHosts, o.has(fDenyPrinc)), acl.Deny},
	} {
		for _, p := range side.principals {
			for _, op := range ops {
				for _, h := range side.hosts {
					out = addEntries(out, []acl.Entry{{Principal: p, Host: h, Operation: op, Permission: side.perm}})
				}
			}
		}
	}
	return out, nil
}

// parseOperation is SecurityUtils.operation: the Pascal-case name in any
// letter case; OpUnknown for anything else.
func parseOperation(s string) acl.Operation {
	for op := acl.OpUnknown; op <= acl.OpDescribeTokens; op++ {
		if strings.EqualFold(s, op.String()) {
			return op
		}
	}
	return acl.OpUnknown
}

// operations are the --operation values (All when absent).
func (o *Options) operations() []acl.Operation {
	if !o.has(fOperation) {
		return []acl.Operation{acl.OpAll}
	}
	var out []acl.Operation
	for _, s := range o.Operations {
		op := parseOperation(strings.TrimSpace(s))
		dup := false
		for _, x := range out {
			dup = dup || x == op
		}
		if !dup {
			out = append(out, op)
		}
	}
	return out
}

// filterACLs is AclCommand.getResourceFilterToAcls: the entries of the
// --operation/--allow/--deny flags on every named resource, or those of
// the --producer and --consumer shortcuts, validated against the
// operations each resource type supports.
func (o *Options) filterACLs(pt acl.PatternType) (resourceList, error) {
	var out resourceList
	if !o.has(fProducer) && !o.has(fConsumer) {
		es, err := o.entries(o.operations())
		if err != nil {
			return nil, err
		}
		filters, err := o.resourceFilters(pt, true)
		if err != nil {
			return nil, err
		}
		for _, f := range filters {
			out = out.merge(f, es)
		}
	}
	if o.has(fProducer) {
		var err error
		if out, err = o.shortcut(out, pt, producerOps); err != nil {
			return nil, err
		}
		if o.has(fIdempotent) {
			es, err := o.entries([]acl.Operation{acl.OpIdempotentWrite})
			if err != nil {
				return nil, err
			}
			out = out.merge(clusterFilter(), es)
		}
	}
	if o.has(fConsumer) {
		var err error
		if out, err = o.shortcut(out, pt, consumerOps); err != nil {
			return nil, err
		}
	}
	return out, validateOperations(out)
}

// The operations the --producer and --consumer shortcuts allow, per
// resource type (AclCommand's getProducerResourceFilterToAcls and
// getConsumerResourceFilterToAcls); resources of other types named on
// the command line get nothing from the shortcut, as in Kafka.
var (
	producerOps = map[acl.ResourceType][]acl.Operation{
		acl.ResourceTopic:           {acl.OpWrite, acl.OpDescribe, acl.OpCreate},
		acl.ResourceTransactionalID: {acl.OpWrite, acl.OpDescribe},
	}
	consumerOps = map[acl.ResourceType][]acl.Operation{
		acl.ResourceTopic: {acl.OpRead, acl.OpDescribe},
		acl.ResourceGroup: {acl.OpRead},
	}
)

// shortcut merges a role's entries into out for every named resource of
// a type the role covers, in command-line order.
func (o *Options) shortcut(out resourceList, pt acl.PatternType, ops map[acl.ResourceType][]acl.Operation) (resourceList, error) {
	filters, err := o.resourceFilters(pt, true)
	if err != nil {
		return nil, err
	}
	for _, f := range filters {
		if typeOps, ok := ops[f.Type]; ok {
			es, err := o.entries(typeOps)
			if err != nil {
				return nil, err
			}
			out = out.merge(f, es)
		}
	}
	return out, nil
}

// validateOperations is AclCommand.validateOperation: every entry's
// operation must be one the resource type supports, or All.
func validateOperations(l resourceList) error {
	for _, r := range l {
		valid := append(acl.SupportedOperations(r.filter.Type), acl.OpAll)
		for _, e := range r.entries {
			ok := false
			for _, v := range valid {
				ok = ok || v == e.Operation
			}
			if !ok {
				names := make([]string, len(valid))
				for i, v := range valid {
					names[i] = v.String()
				}
				return clientutil.Usage("ResourceType %s only supports operations %s", r.filter.Type.EnumName(), strings.Join(names, ", "))
			}
		}
	}
	return nil
}

// addACLs is AclCommand.getResourceToAcls: the patterns and entries of an
// --add, which needs a specific pattern type and principals.
func (o *Options) addACLs() (resourceList, error) {
	pt, err := o.patternType()
	if err != nil {
		return nil, err
	}
	if !pt.IsSpecific() {
		return nil, clientutil.Usage("A '--resource-pattern-type' value of '%s' is not valid when adding acls.", pt)
	}
	l, err := o.filterACLs(pt)
	if err != nil {
		return nil, err
	}
	for _, r := range l {
		if len(r.entries) == 0 {
			return nil, clientutil.Usage("You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.")
		}
	}
	return l, nil
}

// pattern is the resource pattern a specific filter names.
func pattern(f acl.PatternFilter) acl.ResourcePattern {
	return acl.ResourcePattern{Type: f.Type, Name: *f.Name, Pattern: f.Pattern}
}

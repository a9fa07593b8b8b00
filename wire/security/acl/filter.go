package acl

import "strings"

// PatternFilter selects resource patterns (Kafka's ResourcePatternFilter).
// Type ResourceAny matches every type; Name nil matches every name.
// Pattern selects how Name compares:
//   - PatternLiteral / PatternPrefixed: that pattern type with exactly Name;
//   - PatternAny: either pattern type with exactly Name;
//   - PatternMatch: every pattern that grants access to the resource
//     Name: the literal Name, the literal "*", and each prefixed pattern
//     that Name starts with.
type PatternFilter struct {
	Type    ResourceType
	Name    *string
	Pattern PatternType
}

// EntryFilter selects entries (Kafka's AccessControlEntryFilter):
// nil Principal / Host match any, OpAny and PermissionAny match any.
type EntryFilter struct {
	Principal  *string
	Host       *string
	Operation  Operation
	Permission PermissionType
}

// BindingFilter selects bindings (Kafka's AclBindingFilter), the shape of
// DescribeAcls' filter and each of DeleteAcls' filters.
type BindingFilter struct {
	Pattern PatternFilter
	Entry   EntryFilter
}

// AnyFilter matches every binding.
var AnyFilter = BindingFilter{
	Pattern: PatternFilter{Type: ResourceAny, Pattern: PatternAny},
	Entry:   EntryFilter{Operation: OpAny, Permission: PermissionAny},
}

// Matches reports whether the filter selects pattern p.
func (f PatternFilter) Matches(p ResourcePattern) bool {
	if f.Type != ResourceAny && f.Type != p.Type {
		return false
	}
	if f.Pattern != PatternAny && f.Pattern != PatternMatch && f.Pattern != p.Pattern {
		return false
	}
	if f.Name == nil {
		return true
	}
	name := *f.Name
	if f.Pattern == PatternAny || f.Pattern == p.Pattern {
		return name == p.Name
	}
	switch p.Pattern { // f.Pattern is MATCH
	case PatternLiteral:
		return name == p.Name || p.Name == WildcardResource
	case PatternPrefixed:
		return strings.HasPrefix(name, p.Name)
	}
	return false
}

// Matches reports whether the filter selects entry e.
func (f EntryFilter) Matches(e Entry) bool {
	if f.Principal != nil && *f.Principal != e.Principal {
		return false
	}
	if f.Host != nil && *f.Host != e.Host {
		return false
	}
	if f.Operation != OpAny && f.Operation != e.Operation {
		return false
	}
	return f.Permission == PermissionAny || f.Permission == e.Permission
}

// Matches reports whether the filter selects binding b.
func (f BindingFilter) Matches(b Binding) bool {
	return f.Pattern.Matches(b.Pattern) && f.Entry.Matches(b.Entry)
}

// IsUnknown reports whether the filter has an UNKNOWN (or out-of-range)
// element; DescribeAcls and DeleteAcls refuse such filters with
// INVALID_REQUEST, as Kafka's request validation does.
func (f BindingFilter) IsUnknown() bool {
	return f.Pattern.Type <= ResourceUnknown || f.Pattern.Type > ResourceUser ||
		f.Pattern.Pattern <= PatternUnknown || f.Pattern.Pattern > PatternPrefixed ||
		f.Entry.Operation <= OpUnknown || f.Entry.Operation > OpDescribeTokens ||
		f.Entry.Permission <= PermissionUnknown || f.Entry.Permission > Allow
}

// MatchesAtMostOne reports whether the pattern filter can select only one
// pattern (no ANY/UNKNOWN type, a name, no MATCH/UNKNOWN pattern type),
// Kafka's ResourcePatternFilter.matchesAtMostOne.
func (f PatternFilter) MatchesAtMostOne() bool {
	return f.Type > ResourceAny && f.Name != nil && f.Pattern != PatternMatch && f.Pattern != PatternUnknown
}

// Candidates returns the stored patterns a filter that MatchesAtMostOne
// can name directly (both pattern types for ANY), so a delete reaches
// ACLs the caller's cache has not seen yet, as AclAuthorizer's
// filterToResources does. Nil for other filters.
func (f PatternFilter) Candidates() []ResourcePattern {
	if !f.MatchesAtMostOne() {
		return nil
	}
	switch f.Pattern {
	case PatternLiteral, PatternPrefixed:
		return []ResourcePattern{{f.Type, *f.Name, f.Pattern}}
	case PatternAny:
		return []ResourcePattern{{f.Type, *f.Name, PatternLiteral}, {f.Type, *f.Name, PatternPrefixed}}
	}
	return nil
}

// Filter returns the filter that matches exactly b.
func (b Binding) Filter() BindingFilter {
	name, principal, host := b.Pattern.Name, b.Entry.Principal, b.Entry.Host
	return BindingFilter{
		Pattern: PatternFilter{Type: b.Pattern.Type, Name: &name, Pattern: b.Pattern.Pattern},
		Entry:   EntryFilter{Principal: &principal, Host: &host, Operation: b.Entry.Operation, Permission: b.Entry.Permission},
	}
}

package acl

// Snapshot is an immutable view of every ACL, the authorizer's cache
// (AclAuthorizer's aclCache and resourceCache). Build one with
// NewSnapshot or With; never modify one that is published.
type Snapshot struct {
	acls map[ResourcePattern][]Entry
	// prefixed counts the prefixed patterns per resource type, so a
	// lookup skips the prefix walk when there are none.
	prefixed map[ResourceType]int
}

// NewSnapshot builds a snapshot from stored ACLs (LoadAll's result); it
// keeps the map, which the caller must not modify afterwards.
func NewSnapshot(acls map[ResourcePattern][]Entry) *Snapshot {
	s := &Snapshot{acls: acls, prefixed: map[ResourceType]int{}}
	for r := range acls {
		if r.Pattern == PatternPrefixed {
			s.prefixed[r.Type]++
		}
	}
	return s
}

// With returns a copy of s with r's entries replaced (removed when
// entries is empty), as a change notification updates the cache.
func (s *Snapshot) With(r ResourcePattern, entries []Entry) *Snapshot {
	m := make(map[ResourcePattern][]Entry, len(s.acls)+1)
	for k, v := range s.acls {
		m[k] = v
	}
	if len(entries) == 0 {
		delete(m, r)
	} else {
		m[r] = entries
	}
	return NewSnapshot(m)
}

// Bindings returns the bindings the filter selects, ordered as
// AclAuthorizer's cache is (type, pattern type, name descending).
func (s *Snapshot) Bindings(f BindingFilter) []Binding {
	var out []Binding
	for _, r := range sortedPatterns(s.acls) {
		for _, e := range s.acls[r] {
			if b := (Binding{r, e}); f.Matches(b) {
				out = append(out, b)
			}
		}
	}
	return out
}

// Len is the number of resource patterns that have ACLs.
func (s *Snapshot) Len() int { return len(s.acls) }

// matching calls fn with each entry list that applies to the resource
// (t, name): the literal name, the literal wildcard "*", and every
// prefixed pattern name starts with (AclAuthorizer.matchingAcls).
func (s *Snapshot) matching(t ResourceType, name string, fn func([]Entry) bool) bool {
	if es := s.acls[ResourcePattern{t, name, PatternLiteral}]; len(es) > 0 && fn(es) {
		return true
	}
	if name != WildcardResource {
		if es := s.acls[ResourcePattern{t, WildcardResource, PatternLiteral}]; len(es) > 0 && fn(es) {
			return true
		}
	}
	if s.prefixed[t] > 0 {
		for i := 1; i <= len(name); i++ {
			if es := s.acls[ResourcePattern{t, name[:i], PatternPrefixed}]; len(es) > 0 && fn(es) {
				return true
			}
		}
	}
	return false
}

package acl

import "gregor/replication/metastore"

// Admin carries out CreateAcls, DeleteAcls and DescribeAcls for an
// authorizer over its store: writes go to the store (with their change
// notifications, which every broker's Watcher follows) and the changed
// resources are re-read into this broker's snapshot at once, as
// AclAuthorizer updates its own cache after a write. Its methods block
// on the store: call them off actors and off connection readers.
type Admin struct {
	Store metastore.Store
	Auth  *Authorizer
}

// Create stores bindings; one error per binding (see Add), nil where stored.
func (a Admin) Create(bindings []Binding) []error {
	errs := Add(a.Store, bindings)
	seen := map[ResourcePattern]bool{}
	for i, b := range bindings {
		if errs[i] == nil && !seen[b.Pattern] {
			seen[b.Pattern] = true
			a.refresh(b.Pattern)
		}
	}
	return errs
}

// Delete removes the bindings the filters select; per filter, what it
// removed (see Remove).
func (a Admin) Delete(filters []BindingFilter) ([][]Removed, error) {
	res, err := Remove(a.Store, filters)
	seen := map[ResourcePattern]bool{}
	for _, rs := range res {
		for _, r := range rs {
			if p := r.Binding.Pattern; !seen[p] {
				seen[p] = true
				a.refresh(p)
			}
		}
	}
	return res, err
}

// Describe returns the bindings the filter selects from this broker's
// snapshot, as AclAuthorizer.acls answers from its cache.
func (a Admin) Describe(f BindingFilter) []Binding { return a.Auth.Snapshot().Bindings(f) }

// refresh re-reads one resource into the snapshot; on a read error the
// watcher's notification processing catches up later.
func (a Admin) refresh(r ResourcePattern) {
	_, _ = a.Auth.Refresh(a.Store, r)
}

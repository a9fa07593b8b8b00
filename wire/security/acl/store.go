package acl

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"gregor/replication/metastore"
)

// Versioned is a resource's stored entries and the data version of its
// znode when read (Kafka's VersionedAcls); Version is -1 when there is no
// node.
type Versioned struct {
	Entries []Entry
	Version int32
}

// ErrMalformed wraps the error of a resource node whose data does not
// decode (errors.Is(err, ErrMalformed)).
var ErrMalformed = errors.New("acl: malformed ACL node")

// MaxUpdateRetries bounds the conditional-write retries of one resource
// update (AclAuthorizer.maxUpdateRetries); the retries back off 100–150 ms.
const MaxUpdateRetries = 10

// EnsurePaths creates the ACL directories as AclAuthorizer does at start
// (createAclPaths): both pattern roots with a child per resource type, and
// both change directories. Existing nodes are left as they are.
func EnsurePaths(s metastore.Store) error {
	for _, p := range storedPatternTypes {
		for _, t := range storedResourceTypes {
			if err := metastore.EnsurePath(s, PatternRoot(p)+"/"+t.String()); err != nil {
				return err
			}
		}
	}
	for _, p := range []string{LiteralChangesPath, ExtendedChangesPath} {
		if err := metastore.EnsurePath(s, p); err != nil {
			return err
		}
	}
	return nil
}

// Get reads r's entries; a missing node is no entries at version -1.
// Errors: the store's, or a node whose data does not decode.
func Get(s metastore.Store, r ResourcePattern) (Versioned, error) {
	data, v, err := s.Get(ResourcePath(r))
	if errors.Is(err, metastore.ErrNoNode) {
		return Versioned{Version: -1}, nil
	}
	if err != nil {
		return Versioned{}, err
	}
	es, err := DecodeEntries(data)
	if err != nil {
		return Versioned{}, fmt.Errorf("%w %s: %v", ErrMalformed, ResourcePath(r), err)
	}
	return Versioned{Entries: es, Version: v}, nil
}

// LoadAll reads every stored ACL (AclAuthorizer.loadAllAcls): the
// resources under both pattern roots, keyed by pattern. Directories of
// resource types this version does not know are skipped, as Kafka skips
// them; missing roots are empty. A node whose data does not decode is an
// error, naming its path.
func LoadAll(s metastore.Store) (map[ResourcePattern][]Entry, error) {
	out := map[ResourcePattern][]Entry{}
	for _, p := range storedPatternTypes {
		types, err := children(s, PatternRoot(p))
		if err != nil {
			return nil, err
		}
		for _, tn := range types {
			t := ParseResourceType(tn)
			if t <= ResourceAny {
				continue
			}
			names, err := children(s, PatternRoot(p)+"/"+tn)
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				r := ResourcePattern{t, n, p}
				v, err := Get(s, r)
				if err != nil {
					return nil, err
				}
				if len(v.Entries) > 0 {
					out[r] = v.Entries
				}
			}
		}
	}
	return out, nil
}

func children(s metastore.Store, p string) ([]string, error) {
	kids, err := s.Children(p)
	if errors.Is(err, metastore.ErrNoNode) {
		return nil, nil
	}
	return kids, err
}

// List returns the stored bindings the filter selects. A filter that can
// match only one pattern (a named, typed, LITERAL/PREFIXED/ANY filter)
// reads just those nodes; any other reads everything. Bindings come
// sorted by pattern, then in stored order.
func List(s metastore.Store, f BindingFilter) ([]Binding, error) {
	all, err := load(s, []PatternFilter{f.Pattern})
	if err != nil {
		return nil, err
	}
	var out []Binding
	for _, r := range sortedPatterns(all) {
		for _, e := range all[r] {
			if b := (Binding{r, e}); f.Matches(b) {
				out = append(out, b)
			}
		}
	}
	return out, nil
}

// load reads the resources the pattern filters may select: only their
// candidates when every one names a single pattern, else everything.
func load(s metastore.Store, fs []PatternFilter) (map[ResourcePattern][]Entry, error) {
	var direct []ResourcePattern
	for _, f := range fs {
		c := f.Candidates()
		if c == nil {
			return LoadAll(s)
		}
		direct = append(direct, c...)
	}
	out := map[ResourcePattern][]Entry{}
	for _, r := range direct {
		v, err := Get(s, r)
		if err != nil {
			return nil, err
		}
		if len(v.Entries) > 0 {
			out[r] = v.Entries
		}
	}
	return out, nil
}

// sortedPatterns orders patterns as AclAuthorizer's ResourceOrdering
// does: by type, then pattern type, then name descending.
func sortedPatterns(m map[ResourcePattern][]Entry) []ResourcePattern {
	out := make([]ResourcePattern, 0, len(m))
	for r := range m {
		out = append(out, r)
	}
	slices.SortFunc(out, comparePatterns)
	return out
}

func comparePatterns(a, b ResourcePattern) int {
	if a.Type != b.Type {
		return int(a.Type) - int(b.Type)
	}
	if a.Pattern != b.Pattern {
		return int(a.Pattern) - int(b.Pattern)
	}
	switch {
	case a.Name > b.Name:
		return -1
	case a.Name < b.Name:
		return 1
	}
	return 0
}

// Add stores bindings (AclAuthorizer.createAcls): each is validated
// (Binding.Validate), then the bindings of one pattern are added to its
// node in one conditional write, followed by a change notification when
// something changed. The result has one error per binding, nil where it
// is stored (already present counts as stored).
func Add(s metastore.Store, bindings []Binding) []error {
	errs := make([]error, len(bindings))
	byPattern := map[ResourcePattern][]int{}
	var order []ResourcePattern
	for i, b := range bindings {
		if err := b.Validate(); err != nil {
			errs[i] = &InvalidError{Msg: "Failed to create ACL: " + err.Error()}
			continue
		}
		if _, seen := byPattern[b.Pattern]; !seen {
			order = append(order, b.Pattern)
		}
		byPattern[b.Pattern] = append(byPattern[b.Pattern], i)
	}
	for _, r := range order {
		idx := byPattern[r]
		err := Update(s, r, func(cur []Entry) []Entry {
			next := slices.Clone(cur)
			for _, i := range idx {
				next = addUnique(next, bindings[i].Entry)
			}
			return next
		})
		for _, i := range idx {
			errs[i] = err
		}
	}
	return errs
}

// InvalidError is a binding or filter Kafka refuses with INVALID_REQUEST.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

// Removed is one binding a Remove deleted, with the error of its
// resource's write (nil when the write succeeded).
type Removed struct {
	Binding Binding
	Err     error
}

// Remove deletes the stored bindings the filters select
// (AclAuthorizer.deleteAcls): the result has, per filter, the bindings
// it deleted (a binding two filters select is reported under the first).
// A resource left without entries loses its node. The error is for
// reading the store before anything was deleted; write failures are
// reported per binding.
func Remove(s metastore.Store, filters []BindingFilter) ([][]Removed, error) {
	pfs := make([]PatternFilter, len(filters))
	for i, f := range filters {
		pfs[i] = f.Pattern
	}
	all, err := load(s, pfs)
	if err != nil {
		return nil, err
	}
	out := make([][]Removed, len(filters))
	for _, r := range sortedPatterns(all) {
		var matching []int
		for i, f := range filters {
			if f.Pattern.Matches(r) {
				matching = append(matching, i)
			}
		}
		if len(matching) == 0 {
			continue
		}
		var deleted map[Entry]int // entry → first filter that selected it, of the last attempt
		err := Update(s, r, func(cur []Entry) []Entry {
			deleted = map[Entry]int{}
			var keep []Entry
			for _, e := range cur {
				hit := -1
				for _, i := range matching {
					if filters[i].Entry.Matches(e) {
						hit = i
						break
					}
				}
				if hit < 0 {
					keep = append(keep, e)
				} else {
					deleted[e] = hit
				}
			}
			return keep
		})
		for _, e := range sortedEntries(deleted) {
			out[deleted[e]] = append(out[deleted[e]], Removed{Binding{r, e}, err})
		}
	}
	return out, nil
}

func sortedEntries(m map[Entry]int) []Entry {
	out := make([]Entry, 0, len(m))
	for e := range m {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int {
		if c := compareStrings(a.Principal, b.Principal); c != 0 {
			return c
		}
		if c := compareStrings(a.Host, b.Host); c != 0 {
			return c
		}
		if a.Operation != b.Operation {
			return int(a.Operation) - int(b.Operation)
		}
		return int(a.Permission) - int(b.Permission)
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Update rewrites r's entries to next(current) with a conditional write
// (AclAuthorizer.updateResourceAcls): create the node when absent, set it
// at the version read, delete it when next is empty; on a version
// conflict re-read and retry (MaxUpdateRetries, 100–150 ms apart). When
// the entries changed it writes the change notification that makes every
// broker re-read r. next must not modify its argument.
func Update(s metastore.Store, r ResourcePattern, next func([]Entry) []Entry) error {
	path := ResourcePath(r)
	for attempt := 0; ; attempt++ {
		cur, err := Get(s, r)
		if err != nil {
			return err
		}
		want := next(cur.Entries)
		if slices.Equal(want, cur.Entries) {
			return nil
		}
		switch {
		case len(want) == 0:
			err = s.Delete(path, cur.Version)
			if errors.Is(err, metastore.ErrNoNode) {
				err = metastore.ErrBadVersion // deleted under us: re-read
			}
		case cur.Version < 0:
			err = metastore.CreateAll(s, path, EncodeEntries(want), false)
			if errors.Is(err, metastore.ErrNodeExists) {
				err = metastore.ErrBadVersion
			}
		default:
			_, err = s.Set(path, EncodeEntries(want), cur.Version)
			if errors.Is(err, metastore.ErrNoNode) {
				err = metastore.ErrBadVersion
			}
		}
		if err == nil {
			return Notify(s, r)
		}
		if !errors.Is(err, metastore.ErrBadVersion) {
			return err
		}
		if attempt >= MaxUpdateRetries {
			return fmt.Errorf("acl: failed to update ACLs for %s after trying a maximum of %d times", r, MaxUpdateRetries)
		}
		time.Sleep(100*time.Millisecond + rand.N(50*time.Millisecond))
	}
}

// Notify writes the change notification for r under ChangesPath (Kafka's
// createAclChangeNotification), creating the directory if it is missing.
func Notify(s metastore.Store, r ResourcePattern) error {
	prefix := ChangesPath(r.Pattern) + "/" + ChangePrefix
	_, err := s.CreateSequential(prefix, EncodeChange(r), false)
	if errors.Is(err, metastore.ErrNoNode) {
		if err = metastore.EnsurePath(s, ChangesPath(r.Pattern)); err == nil {
			_, err = s.CreateSequential(prefix, EncodeChange(r), false)
		}
	}
	return err
}

package acl

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"gregor/replication/metastore"
	"gregor/wire/security"
)

// Config is the authorizer's part of server.properties.
type Config struct {
	// SuperUsers (super.users, semicolon-separated principals) may do
	// everything, whatever the ACLs say.
	SuperUsers []security.Principal
	// AllowEveryoneIfNoACLFound (allow.everyone.if.no.acl.found, default
	// false) allows every principal on a resource that has no ACL at all.
	AllowEveryoneIfNoACLFound bool
}

// ParseSuperUsers parses super.users: principals separated by ';',
// blanks around each ignored, empty items skipped. Errors: an item that
// is not "Type:Name".
func ParseSuperUsers(s string) ([]security.Principal, error) {
	var out []security.Principal
	for _, item := range strings.Split(s, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		p, err := security.ParsePrincipal(item)
		if err != nil {
			return nil, fmt.Errorf("super.users: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}

// Request is who asks: the connection's principal, its client IP address
// (as a string, compared with ACL hosts) and the API (for the log).
type Request struct {
	Principal security.Principal
	Host      string
	API       string
}

// Action is one authorization question (Kafka's Action): may the
// requester do Op on the resource (Type, Name)? LogIfDenied is false for
// questions that only filter or compute authorized operations (Kafka
// logs those at trace); true denials are logged at info.
type Action struct {
	Op          Operation
	Type        ResourceType
	Name        string
	LogIfDenied bool
}

// Decide is the pure authorization rule of AclAuthorizer.authorizeAction
// over a snapshot: a super user is allowed; a resource with no matching
// ACL at all (literal, wildcard or prefixed) is allowed only when
// allowIfNone; otherwise a matching Deny wins, and without one a
// matching Allow (op itself, All, or an operation that implies op)
// allows. An entry matches when its principal is the requester's or
// User:*, and its host is the requester's or "*".
func Decide(snap *Snapshot, cfg *Config, principal security.Principal, host string, op Operation, t ResourceType, name string) bool {
	for _, su := range cfg.SuperUsers {
		if su == principal {
			return true
		}
	}
	p := principal.String()
	any := false
	deny := snap.matching(t, name, func(es []Entry) bool {
		any = true
		for _, e := range es {
			if e.Permission == Deny && entryApplies(e, p, host) && (e.Operation == op || e.Operation == OpAll) {
				return true
			}
		}
		return false
	})
	if !any {
		return cfg.AllowEveryoneIfNoACLFound
	}
	if deny {
		return false
	}
	ops := Implied(op)
	return snap.matching(t, name, func(es []Entry) bool {
		for _, e := range es {
			if e.Permission == Allow && entryApplies(e, p, host) && (e.Operation == OpAll || containsOp(ops, e.Operation)) {
				return true
			}
		}
		return false
	})
}

func entryApplies(e Entry, principal, host string) bool {
	return (e.Principal == principal || e.Principal == WildcardPrincipal) && (e.Host == host || e.Host == WildcardHost)
}

func containsOp(ops []Operation, op Operation) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

// DecideByResourceType is AclAuthorizer.authorizeByResourceType: may the
// requester do op on at least one resource of type t? A super user may;
// a Deny on the literal "*" forbids; allow.everyone.if.no.acl.found
// allows; otherwise some Allow (literal or prefixed, op or All) must
// exist whose resource no matching Deny covers (the same literal, or a
// prefixed Deny on a prefix of it). Used by InitProducerId for
// idempotent producers without cluster IdempotentWrite (KIP-679).
func DecideByResourceType(snap *Snapshot, cfg *Config, principal security.Principal, host string, op Operation, t ResourceType) bool {
	for _, su := range cfg.SuperUsers {
		if su == principal {
			return true
		}
	}
	p := principal.String()
	match := func(e Entry, perm PermissionType) bool {
		return e.Permission == perm && entryApplies(e, p, host) && (e.Operation == op || e.Operation == OpAll)
	}
	denyLit, denyPre := map[string]bool{}, map[string]bool{}
	for r, es := range snap.acls {
		if r.Type != t {
			continue
		}
		for _, e := range es {
			if match(e, Deny) {
				if r.Pattern == PatternLiteral {
					denyLit[r.Name] = true
				} else {
					denyPre[r.Name] = true
				}
			}
		}
	}
	if denyLit[WildcardResource] {
		return false
	}
	if cfg.AllowEveryoneIfNoACLFound {
		return true
	}
	dominated := func(name string) bool {
		for i := 1; i <= len(name); i++ {
			if denyPre[name[:i]] {
				return true
			}
		}
		return false
	}
	for r, es := range snap.acls {
		if r.Type != t {
			continue
		}
		for _, e := range es {
			if !match(e, Allow) {
				continue
			}
			if r.Pattern == PatternPrefixed && !dominated(r.Name) {
				return true
			}
			if r.Pattern == PatternLiteral && (r.Name == WildcardResource || (!denyLit[r.Name] && !dominated(r.Name))) {
				return true
			}
		}
	}
	return false
}

// Authorizer answers authorization questions over the current snapshot
// (kafka.security.authorizer.AclAuthorizer). It is safe for concurrent
// use; Authorize reads one atomic pointer and allocates nothing on the
// common paths. The snapshot is replaced by a Watcher (or by SetSnapshot
// in tests).
type Authorizer struct {
	cfg  Config
	snap atomic.Pointer[Snapshot]
	// refreshMu orders Refresh calls (read from the store, then publish).
	refreshMu sync.Mutex
	// log is Kafka's "kafka.authorizer.logger": denials at info,
	// allowed access at debug.
	log *zap.Logger
}

// NewAuthorizer returns an authorizer with an empty snapshot; log may be nil.
func NewAuthorizer(cfg Config, log *zap.Logger) *Authorizer {
	if log == nil {
		log = zap.NewNop()
	}
	a := &Authorizer{cfg: cfg, log: log.Named("kafka.authorizer.logger")}
	a.snap.Store(NewSnapshot(map[ResourcePattern][]Entry{}))
	return a
}

// Snapshot returns the current ACL snapshot.
func (a *Authorizer) Snapshot() *Snapshot { return a.snap.Load() }

// SetSnapshot replaces the ACL snapshot.
func (a *Authorizer) SetSnapshot(s *Snapshot) { a.snap.Store(s) }

// Refresh re-reads r's entries from the store into the snapshot. Reads
// and writes of concurrent refreshes (the watcher's, an Admin's) are
// serialised, so an older read never overwrites a newer one. Errors:
// the store's (see Get); the snapshot is unchanged then.
func (a *Authorizer) Refresh(s metastore.Store, r ResourcePattern) (Versioned, error) {
	a.refreshMu.Lock()
	defer a.refreshMu.Unlock()
	v, err := Get(s, r)
	if err == nil {
		a.SetResource(r, v.Entries)
	}
	return v, err
}

// Load replaces the snapshot with every ACL in the store (LoadAll) and
// returns the number of resources; serialised with Refresh. Errors: the
// store's; the snapshot is unchanged then.
func (a *Authorizer) Load(s metastore.Store) (int, error) {
	a.refreshMu.Lock()
	defer a.refreshMu.Unlock()
	all, err := LoadAll(s)
	if err != nil {
		return 0, err
	}
	a.SetSnapshot(NewSnapshot(all))
	return len(all), nil
}

// SetResource replaces one resource's entries in the snapshot (an empty
// list removes it). Concurrent callers do not lose each other's changes.
func (a *Authorizer) SetResource(r ResourcePattern, entries []Entry) {
	for {
		old := a.snap.Load()
		if a.snap.CompareAndSwap(old, old.With(r, entries)) {
			return
		}
	}
}

// Authorize answers one action and logs the outcome as Kafka's
// authorizer logger does ("Principal = … is Denied Operation = …").
func (a *Authorizer) Authorize(req Request, act Action) bool {
	ok := Decide(a.snap.Load(), &a.cfg, req.Principal, req.Host, act.Op, act.Type, act.Name)
	a.audit(req, act.Op, act.Type, PatternLiteral, act.Name, ok, act.LogIfDenied)
	return ok
}

// AuthorizeByResourceType answers whether the requester may do op on
// some resource of type t (see DecideByResourceType).
func (a *Authorizer) AuthorizeByResourceType(req Request, op Operation, t ResourceType) bool {
	ok := DecideByResourceType(a.snap.Load(), &a.cfg, req.Principal, req.Host, op, t)
	a.audit(req, op, t, PatternUnknown, "NONE", ok, true)
	return ok
}

func (a *Authorizer) audit(req Request, op Operation, t ResourceType, pt PatternType, name string, ok, logDenied bool) {
	lvl := zap.DebugLevel
	result := "Allowed"
	if !ok {
		result = "Denied"
		if logDenied {
			lvl = zap.InfoLevel
		}
	}
	if ce := a.log.Check(lvl, ""); ce != nil { // format only when the level is on
		ce.Message = fmt.Sprintf("Principal = %s is %s Operation = %s from host = %s on resource = %s:%s:%s for request = %s",
			req.Principal, result, op, req.Host, t, pt, name, req.API)
		ce.Write()
	}
}

// AuthorizedOperations is the bitfield of the operations the requester
// may do on (t, name) among SupportedOperations(t) — bit n set for the
// operation of code n — as Kafka fills Metadata's, DescribeGroups' and
// DescribeCluster's authorized-operations fields. Nothing is logged.
func (a *Authorizer) AuthorizedOperations(req Request, t ResourceType, name string) int32 {
	snap := a.snap.Load()
	var bits int32
	for _, op := range SupportedOperations(t) {
		if Decide(snap, &a.cfg, req.Principal, req.Host, op, t, name) {
			bits |= 1 << uint(op)
		}
	}
	return bits
}

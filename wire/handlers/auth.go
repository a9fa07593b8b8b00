package handlers

import (
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
	"gregor/wire/security/acl"
)

// This file is the one door from the handlers to the authorizer
// (Kafka's AuthHelper). Every check goes through authorize / authorized
// / filterAuthorized, which cost one nil test when no authorizer is
// configured (b.Authorizer nil: everything allowed, as before).

// requester is who sent rc, as the authorizer sees it: the principal,
// the client's IP address (matched with ACL hosts; Kafka's
// InetAddress.getHostAddress) and the API's name for the log.
func requester(rc *wire.RequestContext) acl.Request {
	host := ""
	switch a := rc.Remote.(type) {
	case *net.TCPAddr:
		host = a.IP.String()
	case nil:
	default:
		if h, _, err := net.SplitHostPort(a.String()); err == nil {
			host = h
		}
	}
	return acl.Request{Principal: rc.Principal, Host: host, API: kmsg.NameForKey(rc.Key)}
}

// authorize reports whether rc may do op on the resource (rt, name),
// logging a denial at info (an explicit request for that resource).
func (b *Broker) authorize(rc *wire.RequestContext, op acl.Operation, rt acl.ResourceType, name string) bool {
	if b.Authorizer == nil {
		return true
	}
	return b.Authorizer.Authorize(requester(rc), acl.Action{Op: op, Type: rt, Name: name, LogIfDenied: true})
}

// authorizeQuiet is authorize for checks that only filter or choose a
// path (Kafka's logIfDenied = false): a denial is logged at debug.
func (b *Broker) authorizeQuiet(rc *wire.RequestContext, op acl.Operation, rt acl.ResourceType, name string) bool {
	if b.Authorizer == nil {
		return true
	}
	return b.Authorizer.Authorize(requester(rc), acl.Action{Op: op, Type: rt, Name: name})
}

// authorizeCluster is authorize on the kafka-cluster resource.
func (b *Broker) authorizeCluster(rc *wire.RequestContext, op acl.Operation) bool {
	return b.authorize(rc, op, acl.ResourceCluster, acl.ClusterName)
}

// filterAuthorized is Kafka's filterByAuthorized: the set of names of
// items (each asked once however often it appears) rc may do op on. Nil
// means every name is authorized (no authorizer; nothing is computed),
// so callers test with allowed(set, n).
func filterAuthorized[T any](b *Broker, rc *wire.RequestContext, op acl.Operation, rt acl.ResourceType, items []T, name func(T) string) map[string]bool {
	if b.Authorizer == nil {
		return nil
	}
	who := requester(rc)
	out := make(map[string]bool, len(items))
	for _, it := range items {
		if n := name(it); !hasKey(out, n) {
			out[n] = b.Authorizer.Authorize(who, acl.Action{Op: op, Type: rt, Name: n, LogIfDenied: true})
		}
	}
	return out
}

func hasKey(m map[string]bool, k string) bool { _, ok := m[k]; return ok }

// allowed reads a filterAuthorized result (nil: everything allowed).
func allowed(set map[string]bool, name string) bool { return set == nil || set[name] }

// authorizedOperations is Kafka's authorizedOperations bitfield for the
// resource; with no authorizer every supported operation (Kafka answers
// so: an absent authorizer allows all).
func (b *Broker) authorizedOperations(rc *wire.RequestContext, rt acl.ResourceType, name string) int32 {
	if b.Authorizer == nil {
		var bits int32
		for _, op := range acl.SupportedOperations(rt) {
			bits |= 1 << uint(op)
		}
		return bits
	}
	return b.Authorizer.AuthorizedOperations(requester(rc), rt, name)
}

package handlers

// The controller mutation quota (controller_mutation_rate, KIP-599) and
// forwarding: charged once, on the broker the client sent its request
// to.
//
// Kafka charges it where the client's identity is known: in ZooKeeper
// mode on the controller, the only broker that serves CreateTopics,
// CreatePartitions and DeleteTopics; in KRaft on the controller, which
// learns the client's principal and client.id from the Envelope. Gregor
// forwards without an Envelope (replication/forward), so the controller
// sees the forwarding broker's principal and client.id, not the
// client's: charging there would bill every client's mutations to the
// forwarding broker (throttling them all together, and muting the
// forwarder's connection). So the receiving broker charges the client's
// quota exactly as the controller would (same /config quotas, same
// strictness by the client's request version, same validate-first
// order) and forwards only what the quota admitted; the controller does
// not charge a forwarded request again. A client is then throttled the
// same whichever broker it asks; what differs from Kafka is that the
// quota is kept per receiving broker, so a client that spreads its admin
// requests over N brokers gets up to N times its rate.
//
// A request counts as forwarded (forwardedToUs) when its client.id is a
// forwarder's, "gregor-forward-<id>" of a live broker, it arrived on the
// inter-broker listener (the only one a forwarder dials) and, with an
// authorizer, its principal has ClusterAction on the cluster (what Kafka
// requires of a broker that forwards an Envelope). Without an authorizer
// a client that can reach the inter-broker listener could claim that
// client.id to escape its mutation quota; it can equally send the
// inter-broker APIs (StopReplica, LeaderAndIsr) then, so keeping clients
// off that listener, or an authorizer, is the protection, as in Kafka.
// (Matching the connection's address to the broker's registered host was
// considered and left out: a multi-homed or NATed broker's forwarder may
// dial from another address, and a false "not forwarded" charges every
// client's forwarded mutations to one bucket of the forwarder.)

import (
	"strconv"
	"strings"

	"gregor/quota/clientquota"
	"gregor/replication/forward"
	"gregor/wire"
	"gregor/wire/security/acl"
)

// mutationQuota is the client's controller mutation quota for one
// CreateTopics, CreatePartitions or DeleteTopics (strict: the version
// answers THROTTLING_QUOTA_EXCEEDED). nil: no quota applies, or the
// request was forwarded by another broker, which charged it.
func (b *Broker) mutationQuota(rc *wire.RequestContext, strict bool) *clientquota.MutationQuota {
	if b.Quotas == nil || b.forwardedToUs(rc) {
		return nil
	}
	return b.Quotas.Mutation(rc.Principal.Name, rc.ClientID, strict)
}

// forwardedToUs reports whether rc is a request another live broker
// forwarded to this one (see the file comment).
func (b *Broker) forwardedToUs(rc *wire.RequestContext) bool {
	id, ok := strings.CutPrefix(rc.ClientID, forward.ClientIDPrefix)
	if !ok || b.Topics == nil {
		return false
	}
	n, err := strconv.ParseInt(id, 10, 32)
	if err != nil || (b.Config != nil && int32(n) == b.Config.BrokerID) {
		return false
	}
	// A forwarder dials the inter-broker listener (replication/forward):
	// on any other listener the client.id is a client's claim.
	if b.Config != nil && rc.Listener != b.Config.Security.InterBrokerListener {
		return false
	}
	if _, live := b.Topics.Snapshot().Broker(int32(n)); !live {
		return false
	}
	return b.authorizeQuiet(rc, acl.OpClusterAction, acl.ResourceCluster, acl.ClusterName)
}

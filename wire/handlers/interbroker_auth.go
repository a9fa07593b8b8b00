package handlers

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
	"gregor/wire/security/acl"
)

// interBrokerDenied answers an inter-broker request (LeaderAndIsr,
// StopReplica, UpdateMetadata, ControlledShutdown) from a principal
// without ClusterAction on the cluster, as Kafka's
// authorizeClusterOperation does: CLUSTER_AUTHORIZATION_FAILED at the
// top and, for StopReplica, on every partition named; nothing is done.
// ok is true when the request may proceed.
func (b *Broker) interBrokerDenied(rc *wire.RequestContext, req kmsg.Request) (wire.Reply, bool) {
	if b.authorizeCluster(rc, acl.OpClusterAction) {
		return wire.Reply{}, true
	}
	code := kerr.ClusterAuthorizationFailed.Code
	resp := req.ResponseKind()
	switch r := resp.(type) {
	case *kmsg.LeaderAndISRResponse:
		r.ErrorCode = code
	case *kmsg.UpdateMetadataResponse:
		r.ErrorCode = code
	case *kmsg.ControlledShutdownResponse:
		r.ErrorCode = code
	case *kmsg.StopReplicaResponse:
		r.ErrorCode = code
		for _, t := range req.(*kmsg.StopReplicaRequest).Topics {
			parts := t.Partitions
			switch {
			case req.GetVersion() == 0:
				parts = []int32{t.Partition}
			case req.GetVersion() >= 3:
				parts = nil
				for _, ps := range t.PartitionStates {
					parts = append(parts, ps.Partition)
				}
			}
			for _, p := range parts {
				rp := kmsg.NewStopReplicaResponsePartition()
				rp.Topic, rp.Partition, rp.ErrorCode = t.Topic, p, code
				r.Partitions = append(r.Partitions, rp)
			}
		}
	}
	return wire.Now(wire.Response{Msg: resp}), false
}

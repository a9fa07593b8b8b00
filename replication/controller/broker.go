package controller

import (
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/partition"
	"gregor/replication/metadata"
)

// This file is the broker side of the controller protocol: what every
// broker does with the LeaderAndIsr, UpdateMetadata and StopReplica
// requests the active controller sends it (Kafka's
// ReplicaManager.becomeLeaderOrFollower / stopReplicas and
// MetadataCache.updateMetadata), fenced by controller epoch, plus the
// EndpointLookup the fetchers use. The broker's own ZooKeeper reads and
// writes (the epoch fence, topic configs, ISR writes, producer ids) are
// replication/zkclient's.

var _ partition.EndpointLookup = (*Controller)(nil)

// HandleLeaderAndIsr applies a LeaderAndIsr request (API key 4, any
// version) from the controller: partitions assigned to this broker become
// leaders or followers through the replica manager, with the topic's
// config read from /config/topics/<t>. A request from an older controller
// epoch is refused whole with STALE_CONTROLLER_EPOCH; a partition this
// broker is not a replica of gets UNKNOWN_TOPIC_OR_PARTITION, one the
// replica manager could not start KAFKA_STORAGE_ERROR.
func (c *Controller) HandleLeaderAndIsr(req *kmsg.LeaderAndISRRequest) *kmsg.LeaderAndISRResponse {
	resp := req.ResponseKind().(*kmsg.LeaderAndISRResponse)
	type item struct {
		id [16]byte
		ps kmsg.LeaderAndISRRequestTopicPartition
	}
	var items []item
	for _, ps := range req.PartitionStates {
		items = append(items, item{ps: ps})
	}
	for _, ts := range req.TopicStates {
		for _, ps := range ts.PartitionStates {
			ps.Topic = ts.Topic
			items = append(items, item{id: ts.TopicID, ps: ps})
		}
	}
	codes := make([]int16, len(items))
	if !c.zk.AcceptControllerEpoch(req.ControllerEpoch) {
		resp.ErrorCode = kerr.StaleControllerEpoch.Code
	} else {
		var states []partition.LeaderAndIsr
		idx := map[partition.TopicPartition]int{}
		cfgs := map[string]map[string]string{}
		for i, it := range items {
			ps := it.ps
			if !contains(ps.Replicas, c.cfg.BrokerID) {
				codes[i] = kerr.UnknownTopicOrPartition.Code
				continue
			}
			overrides, ok := cfgs[ps.Topic]
			if !ok {
				overrides = c.zk.TopicConfig(ps.Topic)
				cfgs[ps.Topic] = overrides
				c.noteTopicConfig(ps.Topic, overrides)
			}
			policy, _ := c.defaults().TopicPolicy(overrides)
			tp := partition.TopicPartition{Topic: ps.Topic, Partition: ps.Partition}
			idx[tp] = i
			states = append(states, partition.LeaderAndIsr{TopicPartition: tp, TopicID: it.id, ControllerEpoch: ps.ControllerEpoch,
				Leader: ps.Leader, LeaderEpoch: ps.LeaderEpoch, ISR: ps.ISR, Replicas: ps.Replicas, ZkVersion: ps.ZKVersion,
				Config: c.logConfig(ps.Topic, overrides), MinInsyncReplicas: policy.MinInsyncReplicas})
		}
		if len(states) > 0 {
			for tp, err := range c.rm.ApplyLeaderAndIsr(states) {
				if err != nil {
					c.log.Error("LeaderAndIsr failed", zap.Stringer("partition", tp), zap.Error(err))
					codes[idx[tp]] = kerr.KafkaStorageError.Code
					var ke *kerr.Error
					if errors.As(err, &ke) {
						codes[idx[tp]] = ke.Code
					}
				}
			}
		}
	}
	topics := map[string]int{}
	for i, it := range items {
		code := codes[i]
		if resp.ErrorCode != 0 {
			code = resp.ErrorCode
		}
		if req.Version < 5 {
			p := kmsg.NewLeaderAndISRResponseTopicPartition()
			p.Topic, p.Partition, p.ErrorCode = it.ps.Topic, it.ps.Partition, code
			resp.Partitions = append(resp.Partitions, p)
			continue
		}
		ti, ok := topics[it.ps.Topic]
		if !ok {
			t := kmsg.NewLeaderAndISRResponseTopic()
			t.TopicID = it.id
			resp.Topics = append(resp.Topics, t)
			ti = len(resp.Topics) - 1
			topics[it.ps.Topic] = ti
		}
		p := kmsg.NewLeaderAndISRResponseTopicPartition()
		p.Partition, p.ErrorCode = it.ps.Partition, code
		resp.Topics[ti].Partitions = append(resp.Topics[ti].Partitions, p)
	}
	return resp
}

// HandleUpdateMetadata installs the controller's view of the cluster
// (API key 6, any version) in this broker's metadata cache, which the
// Metadata and FindCoordinator handlers read. Older controller epoch:
// STALE_CONTROLLER_EPOCH. The active controller's own cache is published
// directly, so a request carrying this broker's own epoch is a no-op there.
// It runs on the connection's goroutine and never waits for the
// controller actor.
func (c *Controller) HandleUpdateMetadata(req *kmsg.UpdateMetadataRequest) *kmsg.UpdateMetadataResponse {
	resp := req.ResponseKind().(*kmsg.UpdateMetadataResponse)
	if !c.zk.AcceptControllerEpoch(req.ControllerEpoch) {
		resp.ErrorCode = kerr.StaleControllerEpoch.Code
		return resp
	}
	if c.activePub.Load() {
		return resp
	}
	c.cache.Publish(metadata.FromUpdateMetadata(req, c.ClusterID()))
	if c.activePub.Load() {
		// This broker won /controller meanwhile and may have published
		// its own view before this one: the actor publishes it again.
		c.tell(func() {
			if c.active {
				c.cache.Publish(c.buildSnapshot())
			}
		})
	}
	return resp
}

// HandleStopReplica stops replicas (API key 5, any version), deleting
// their logs when the controller asks (topic deletion, reassignment).
// Older controller epoch: STALE_CONTROLLER_EPOCH.
func (c *Controller) HandleStopReplica(req *kmsg.StopReplicaRequest) *kmsg.StopReplicaResponse {
	resp := req.ResponseKind().(*kmsg.StopReplicaResponse)
	type item struct {
		tp  partition.TopicPartition
		del bool
	}
	var items []item
	for _, t := range req.Topics {
		if req.Version == 0 {
			items = append(items, item{partition.TopicPartition{Topic: t.Topic, Partition: t.Partition}, req.DeletePartitions})
		}
		for _, p := range t.Partitions {
			items = append(items, item{partition.TopicPartition{Topic: t.Topic, Partition: p}, req.DeletePartitions})
		}
		for _, ps := range t.PartitionStates {
			items = append(items, item{partition.TopicPartition{Topic: t.Topic, Partition: ps.Partition}, ps.Delete})
		}
	}
	if !c.zk.AcceptControllerEpoch(req.ControllerEpoch) {
		resp.ErrorCode = kerr.StaleControllerEpoch.Code
		return resp
	}
	var keep, del []partition.TopicPartition
	for _, it := range items {
		if it.del {
			del = append(del, it.tp)
		} else {
			keep = append(keep, it.tp)
		}
	}
	codeOf := map[bool]int16{}
	for _, g := range []struct {
		tps []partition.TopicPartition
		del bool
	}{{keep, false}, {del, true}} {
		if len(g.tps) == 0 {
			continue
		}
		if err := c.rm.StopReplicas(g.tps, g.del); err != nil {
			c.log.Error("StopReplica failed", zap.Bool("delete", g.del), zap.Error(err))
			codeOf[g.del] = kerr.KafkaStorageError.Code
		}
	}
	for _, it := range items {
		p := kmsg.NewStopReplicaResponsePartition()
		p.Topic, p.Partition, p.ErrorCode = it.tp.Topic, it.tp.Partition, codeOf[it.del]
		resp.Partitions = append(resp.Partitions, p)
	}
	return resp
}

// leaderAndIsrRequest encodes states for a peer (v2+ layout; the channel
// negotiates the version), with the leaders' endpoints in LiveLeaders.
func (c *Controller) leaderAndIsrRequest(states []partition.LeaderAndIsr) *kmsg.LeaderAndISRRequest {
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = 5
	req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = c.cfg.BrokerID, c.epoch, -1
	byTopic := map[string]int{}
	leaders := map[int32]bool{}
	for _, s := range states {
		i, ok := byTopic[s.Topic]
		if !ok {
			ts := kmsg.NewLeaderAndISRRequestTopicState()
			ts.Topic, ts.TopicID = s.Topic, s.TopicID
			req.TopicStates = append(req.TopicStates, ts)
			i = len(req.TopicStates) - 1
			byTopic[s.Topic] = i
		}
		ps := kmsg.NewLeaderAndISRRequestTopicPartition()
		ps.Topic, ps.Partition, ps.ControllerEpoch = s.Topic, s.Partition, s.ControllerEpoch
		ps.Leader, ps.LeaderEpoch, ps.ZKVersion = s.Leader, s.LeaderEpoch, s.ZkVersion
		ps.ISR = append([]int32{}, s.ISR...)
		ps.Replicas = append([]int32{}, s.Replicas...)
		req.TopicStates[i].PartitionStates = append(req.TopicStates[i].PartitionStates, ps)
		if s.Leader >= 0 {
			leaders[s.Leader] = true
		}
	}
	ids := make([]int32, 0, len(leaders))
	for id := range leaders {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if info, ok := c.liveInfo[id]; ok {
			if host, port, ok := interBrokerEndpoint(info, c.cfg.Security.InterBrokerListener); ok {
				ll := kmsg.NewLeaderAndISRRequestLiveLeader()
				ll.BrokerID, ll.Host, ll.Port = id, host, port
				req.LiveLeaders = append(req.LiveLeaders, ll)
			}
		}
	}
	return req
}

// stopReplicaRequest encodes a StopReplica for tps (v3+ layout).
func (c *Controller) stopReplicaRequest(tps []partition.TopicPartition, del bool) *kmsg.StopReplicaRequest {
	req := kmsg.NewPtrStopReplicaRequest()
	req.Version = 3
	req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = c.cfg.BrokerID, c.epoch, -1
	req.DeletePartitions = del
	byTopic := map[string]int{}
	for _, tp := range tps {
		i, ok := byTopic[tp.Topic]
		if !ok {
			t := kmsg.NewStopReplicaRequestTopic()
			t.Topic = tp.Topic
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			byTopic[tp.Topic] = i
		}
		ps := kmsg.NewStopReplicaRequestTopicPartitionState()
		ps.Partition, ps.Delete = tp.Partition, del
		req.Topics[i].PartitionStates = append(req.Topics[i].PartitionStates, ps)
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, tp.Partition)
	}
	return req
}

// logFailure is the completion callback of a peer request: it logs a
// failed delivery or an error code in the response. It reads no
// controller state (it runs on the channel actor, not the controller's).
func (c *Controller) logFailure(id int32, what string) func(kmsg.Response, error) {
	return func(resp kmsg.Response, err error) {
		if err != nil {
			c.log.Warn("controller request not delivered", zap.String("request", what), zap.Int32("broker", id), zap.Error(err))
			return
		}
		var code int16
		switch r := resp.(type) {
		case *kmsg.LeaderAndISRResponse:
			code = r.ErrorCode
		case *kmsg.UpdateMetadataResponse:
			code = r.ErrorCode
		case *kmsg.StopReplicaResponse:
			code = r.ErrorCode
		}
		if code != 0 {
			c.log.Warn("controller request refused", zap.String("request", what), zap.Int32("broker", id), zap.Error(kerr.ErrorForCode(code)))
		}
	}
}

// BrokerEndpoint implements partition.EndpointLookup (see Endpoints).
func (c *Controller) BrokerEndpoint(id int32) (string, int32, bool) {
	return NewEndpoints(c.cfg, c.cache, c.zk).BrokerEndpoint(id)
}

// noPeers is the Peers of a controller without other brokers.
type noPeers struct{}

func (noPeers) AddBroker(int32, string) {}
func (noPeers) RemoveBroker(int32)      {}
func (noPeers) Send(id int32, _ kmsg.Request, done func(kmsg.Response, error)) {
	if done != nil {
		done(nil, fmt.Errorf("controller: no channel to broker %d", id))
	}
}
func (noPeers) Close() {}

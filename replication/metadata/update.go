package metadata

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// securityProtocolIDs are Kafka's SecurityProtocol ids (UpdateMetadata
// endpoint SecurityProtocol field).
var securityProtocolIDs = map[string]int16{"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}

// ToUpdateMetadata encodes a full snapshot as an UpdateMetadata request
// (v5+ layout: TopicStates, endpoints per listener, topic ids from v7) from
// controller controllerID at controllerEpoch. The version is left for the
// sender to negotiate; fields of the v5–v8 layout are all filled.
// protocols maps listener name → security protocol name (missing =
// PLAINTEXT).
func ToUpdateMetadata(s *Snapshot, controllerID, controllerEpoch int32, protocols map[string]string) *kmsg.UpdateMetadataRequest {
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version = 7
	req.ControllerID = controllerID
	req.ControllerEpoch = controllerEpoch
	req.BrokerEpoch = -1
	for _, b := range s.Brokers {
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID, lb.Host, lb.Port, lb.Rack = b.ID, b.Host, b.Port, b.Rack
		names := make([]string, 0, len(b.Listeners))
		for n := range b.Listeners {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			hp := b.Listeners[n]
			ep := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
			ep.Host, ep.Port, ep.ListenerName = hp.Host, hp.Port, n
			proto := protocols[n]
			if proto == "" {
				proto = n
			}
			ep.SecurityProtocol = securityProtocolIDs[proto]
			lb.Endpoints = append(lb.Endpoints, ep)
		}
		req.LiveBrokers = append(req.LiveBrokers, lb)
	}
	for _, name := range s.TopicNames() {
		t := s.Topics[name]
		ts := kmsg.NewUpdateMetadataRequestTopicState()
		ts.Topic, ts.TopicID = name, t.ID
		for _, p := range t.Partitions {
			ps := kmsg.NewUpdateMetadataRequestTopicPartition()
			ps.Topic, ps.Partition, ps.ControllerEpoch = name, p.Partition, controllerEpoch
			ps.Leader, ps.LeaderEpoch = p.Leader, p.LeaderEpoch
			ps.ISR = append([]int32{}, p.ISR...)
			ps.Replicas = append([]int32{}, p.Replicas...)
			ps.OfflineReplicas = append([]int32{}, p.OfflineReplicas...)
			ps.ZKVersion = -1
			ts.PartitionStates = append(ts.PartitionStates, ps)
		}
		req.TopicStates = append(req.TopicStates, ts)
	}
	return req
}

// FromUpdateMetadata decodes an UpdateMetadata request of any version
// (v0–v4 PartitionStates, v5+ TopicStates; v0 single host/port per
// broker) into a snapshot. Kafka's UpdateMetadata carries no cluster id:
// clusterID comes from /cluster/id. Every UpdateMetadata the controller
// sends carries the full state, so the result replaces the cache.
func FromUpdateMetadata(req *kmsg.UpdateMetadataRequest, clusterID string) *Snapshot {
	s := &Snapshot{ClusterID: clusterID, ControllerID: req.ControllerID,
		Topics: map[string]*Topic{}, TopicsByID: map[[16]byte]*Topic{}}
	for _, lb := range req.LiveBrokers {
		b := Broker{ID: lb.ID, Host: lb.Host, Port: lb.Port, Rack: lb.Rack, Listeners: map[string]HostPort{}}
		for i, ep := range lb.Endpoints {
			if i == 0 {
				b.Host, b.Port = ep.Host, ep.Port
			}
			name := ep.ListenerName
			if name == "" { // v1-v2: the security protocol names the listener
				for n, id := range securityProtocolIDs {
					if id == ep.SecurityProtocol {
						name = n
					}
				}
			}
			b.Listeners[name] = HostPort{Host: ep.Host, Port: ep.Port}
		}
		s.Brokers = append(s.Brokers, b)
	}
	sort.Slice(s.Brokers, func(i, j int) bool { return s.Brokers[i].ID < s.Brokers[j].ID })

	type part struct {
		topic string
		id    [16]byte
		ps    kmsg.UpdateMetadataRequestTopicPartition
	}
	var parts []part
	for _, ps := range req.PartitionStates {
		parts = append(parts, part{topic: ps.Topic, ps: ps})
	}
	for _, ts := range req.TopicStates {
		for _, ps := range ts.PartitionStates {
			parts = append(parts, part{topic: ts.Topic, id: ts.TopicID, ps: ps})
		}
	}
	byTopic := map[string]map[int32]Partition{}
	ids := map[string][16]byte{}
	for _, p := range parts {
		if byTopic[p.topic] == nil {
			byTopic[p.topic] = map[int32]Partition{}
		}
		ids[p.topic] = p.id
		byTopic[p.topic][p.ps.Partition] = Partition{Partition: p.ps.Partition, Leader: p.ps.Leader, LeaderEpoch: p.ps.LeaderEpoch,
			ISR: p.ps.ISR, Replicas: p.ps.Replicas, OfflineReplicas: p.ps.OfflineReplicas}
	}
	for name, ps := range byTopic {
		t := &Topic{Name: name, ID: ids[name], Internal: IsInternal(name)}
		// Partitions is indexed by id: a gap (never expected from our
		// controller) is filled with a leaderless placeholder.
		n := int32(0)
		for id := range ps {
			if id+1 > n {
				n = id + 1
			}
		}
		t.Partitions = make([]Partition, n)
		for i := int32(0); i < n; i++ {
			p, ok := ps[i]
			if !ok {
				p = Partition{Partition: i, Leader: -1}
			}
			t.Partitions[i] = p
		}
		s.Topics[name] = t
		if t.ID != ([16]byte{}) {
			s.TopicsByID[t.ID] = t
		}
	}
	return s
}

package handlers

// ElectLeaders: v0-2
//
// Behaviour (controller.ElectLeaders, KIP-183/KIP-460): preferred elections
// move leadership to the first assigned replica when it is alive and in
// the ISR (else PREFERRED_LEADER_NOT_AVAILABLE); unclean elections give a
// partition without a live leader the first live ISR member, else the
// first live replica (else ELIGIBLE_LEADERS_NOT_AVAILABLE). A partition
// already led as asked answers ELECTION_NOT_NEEDED; an unknown one
// UNKNOWN_TOPIC_OR_PARTITION. Null topics = every partition, and then the
// partitions that needed no election are left out. Not the controller:
// forwarded to it (forward.go, KIP-590); when that fails NOT_CONTROLLER or
// REQUEST_TIMED_OUT (top level from v1, and per partition).
//
// Version notes: v0 preferred only, no top-level error; v1 adds
// ElectionType and the top-level error code; v2 flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/replication/controller"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(43, 0, 2, handleElectLeaders) }

func handleElectLeaders(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.ElectLeadersRequest)
	if !b.authorizeCluster(rc, acl.OpAlter) { // Kafka's check: every partition refused
		resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		for _, t := range req.Topics {
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewElectLeadersResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, kerr.ClusterAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return wire.Now(wire.Response{Msg: resp})
	}
	return b.async(func() kmsg.Response { return electLeaders(b, req) })
}

func electLeaders(b *Broker, req *kmsg.ElectLeadersRequest) *kmsg.ElectLeadersResponse {
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	typ := controller.ElectPreferred
	if req.Version >= 1 {
		switch req.ElectionType {
		case 0:
		case 1:
			typ = controller.ElectUnclean
		default:
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		}
	}
	var tps []partition.TopicPartition
	if req.Topics != nil {
		tps = []partition.TopicPartition{}
		seen := map[partition.TopicPartition]bool{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				tp := partition.TopicPartition{Topic: t.Topic, Partition: p}
				if !seen[tp] {
					seen[tp] = true
					tps = append(tps, tp)
				}
			}
		}
	}
	var results map[partition.TopicPartition]error
	var err error
	src, ok := reassignSource(b)
	if !ok {
		err = controller.ErrNotController
	} else {
		results, err = src.ElectLeaders(typ, tps)
	}
	if isNotController(err) {
		fwd, ferr, again := b.electionForward(req)
		switch {
		case fwd != nil:
			return fwd
		case again && ok: // this broker became the controller meanwhile
			results, err = src.ElectLeaders(typ, tps)
		case ferr != nil:
			err = ferr
		}
	}
	if err != nil {
		code, _ := controller.Code(err)
		if req.Version >= 1 {
			resp.ErrorCode = code
		}
		results = map[partition.TopicPartition]error{}
		for _, tp := range tps {
			results[tp] = err
		}
	}
	order := tps
	if order == nil {
		for tp := range results {
			order = append(order, tp)
		}
		controller.SortTPs(order)
	}
	idx := map[string]int{}
	for _, tp := range order {
		i, ok := idx[tp.Topic]
		if !ok {
			t := kmsg.NewElectLeadersResponseTopic()
			t.Topic = tp.Topic
			resp.Topics = append(resp.Topics, t)
			i = len(resp.Topics) - 1
			idx[tp.Topic] = i
		}
		p := kmsg.NewElectLeadersResponseTopicPartition()
		p.Partition = tp.Partition
		p.ErrorCode, p.ErrorMessage = controller.Code(results[tp])
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, p)
	}
	return resp
}

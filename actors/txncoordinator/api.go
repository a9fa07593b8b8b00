package txncoordinator

import (
	"context"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/actors"
	"gregor/actors/coordinator"
)

// FindCoordinator answers FindCoordinator v0–v6 for key type TRANSACTION
// (1): the leader of the key's __transaction_state partition, creating the
// topic on first use; COORDINATOR_NOT_AVAILABLE while it cannot be created
// or the partition has no leader (clients retry). v4+ answers each of the
// batched keys (KIP-699); v0–v3 the one key at the top level.
func (c *Coordinator) FindCoordinator(ctx context.Context, req *kmsg.FindCoordinatorRequest, reply func(*kmsg.FindCoordinatorResponse)) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		reply(coordinator.FindCoordinatorResponse(req, func(key string) (int32, string, int32, int16) { return c.lookup(ctx, key) }))
	}()
}

func (c *Coordinator) lookup(ctx context.Context, key string) (int32, string, int32, int16) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.AppendTimeout)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	if err := c.ensureTopic(ctx); err != nil {
		c.warnEnsure(err)
		return -1, "", -1, codeCoordinatorNotAvail
	}
	id, host, port, ok := c.opts.Topic.Leader(c.PartitionFor(key))
	if !ok {
		return -1, "", -1, codeCoordinatorNotAvail
	}
	return id, host, port, 0
}

// MaxTransactionalIDBytes is the longest transactional id, in bytes: a
// protocol string is at most 32767 bytes (Kafka's request parser refuses a
// longer one) and TransactionLogKey v0 stores the id with an int16 length.
// InitProducerId answers INVALID_REQUEST for a longer id, so no key is ever
// written that would load as another id.
const MaxTransactionalIDBytes = math.MaxInt16

// InitProducerID serves InitProducerId for a transactional id (Kafka's
// TransactionCoordinator.handleInitProducerId): reply gets the producer
// id and epoch, or -1, -1 and the code. Checks in Kafka's order: an empty
// id (or one over MaxTransactionalIDBytes) is INVALID_REQUEST; a timeout
// ≤ 0 or above transaction.max.timeout.ms INVALID_TRANSACTION_TIMEOUT; then NOT_COORDINATOR /
// COORDINATOR_LOAD_IN_PROGRESS; then the state machine (Core.InitProducerID).
// producerID/producerEpoch are the request's v3+ fields (-1, -1: none).
// PRODUCER_FENCED is answered as such; the caller maps it for old versions.
func (c *Coordinator) InitProducerID(transactionalID string, timeoutMs int32, producerID int64, producerEpoch int16, reply func(pid int64, epoch int16, code int16)) {
	type res struct {
		pid   int64
		epoch int16
		code  int16
	}
	r := actors.ReplyOnce(c.opts.RequestTimeout, func(v res) { reply(v.pid, v.epoch, v.code) }, func() res { return res{-1, -1, codeCoordinatorNotAvail} })
	fail := func(code int16) { r(res{-1, -1, code}) }
	switch {
	case transactionalID == "", len(transactionalID) > MaxTransactionalIDBytes:
		fail(kerr.InvalidRequest.Code)
		return
	case timeoutMs <= 0 || int64(timeoutMs) > c.opts.MaxTimeout.Milliseconds():
		fail(kerr.InvalidTransactionTimeout.Code)
		return
	}
	var expected *ProducerIDAndEpoch
	if producerID >= 0 || producerEpoch >= 0 {
		expected = &ProducerIDAndEpoch{ProducerID: producerID, Epoch: producerEpoch}
	}
	c.send(&txnRequest{partition: c.PartitionFor(transactionalID), id: transactionalID, api: "InitProducerId", fail: fail,
		apply: func(core *Core, now int64) {
			core.InitProducerID(transactionalID, timeoutMs, expected, now, func(pid int64, epoch int16, code int16) { r(res{pid, epoch, code}) })
		}})
}

// AddPartitions serves AddPartitionsToTxn (v0–v3, and v4+ without
// VerifyOnly) and AddOffsetsToTxn for one transaction whose partitions all
// exist (the caller answered the others): reply gets one code for the
// whole transaction. An empty id is INVALID_REQUEST.
func (c *Coordinator) AddPartitions(transactionalID string, producerID int64, producerEpoch int16, parts map[string][]int32, reply func(code int16)) {
	r := actors.ReplyOnce(c.opts.RequestTimeout, reply, func() int16 { return codeCoordinatorNotAvail })
	if transactionalID == "" {
		r(kerr.InvalidRequest.Code)
		return
	}
	tps := flatten(parts)
	c.send(&txnRequest{partition: c.PartitionFor(transactionalID), id: transactionalID, api: "AddPartitionsToTxn", fail: r,
		apply: func(core *Core, now int64) {
			core.AddPartitions(transactionalID, producerID, producerEpoch, tps, now, r)
		}})
}

// VerifyPartitions serves AddPartitionsToTxn v4+ with VerifyOnly (KIP-890
// part 1, sent by partition leaders): reply gets a code per partition
// (Core.VerifyPartitions), or the coordinator-level code for every one.
func (c *Coordinator) VerifyPartitions(transactionalID string, producerID int64, producerEpoch int16, parts map[string][]int32, reply func(map[string]map[int32]int16)) {
	tps := flatten(parts)
	all := func(code int16) map[string]map[int32]int16 {
		out := map[string]map[int32]int16{}
		for _, tp := range tps {
			if out[tp.Topic] == nil {
				out[tp.Topic] = map[int32]int16{}
			}
			out[tp.Topic][tp.Partition] = code
		}
		return out
	}
	r := actors.ReplyOnce(c.opts.RequestTimeout, reply, func() map[string]map[int32]int16 { return all(codeCoordinatorNotAvail) })
	if transactionalID == "" {
		r(all(kerr.InvalidRequest.Code))
		return
	}
	c.send(&txnRequest{partition: c.PartitionFor(transactionalID), id: transactionalID, api: "AddPartitionsToTxn(verify)",
		fail: func(code int16) { r(all(code)) },
		apply: func(core *Core, _ int64) {
			out := map[string]map[int32]int16{}
			for tp, code := range core.VerifyPartitions(transactionalID, producerID, producerEpoch, tps) {
				if out[tp.Topic] == nil {
					out[tp.Topic] = map[int32]int16{}
				}
				out[tp.Topic][tp.Partition] = code
			}
			r(out)
		}})
}

// EndTxn serves EndTxn (Kafka's handleEndTransaction): reply gets the code
// once PrepareCommit/PrepareAbort is in __transaction_state; the markers
// are sent afterwards. An empty id is INVALID_REQUEST.
func (c *Coordinator) EndTxn(transactionalID string, producerID int64, producerEpoch int16, commit bool, reply func(code int16)) {
	r := actors.ReplyOnce(c.opts.RequestTimeout, reply, func() int16 { return codeCoordinatorNotAvail })
	if transactionalID == "" {
		r(kerr.InvalidRequest.Code)
		return
	}
	c.send(&txnRequest{partition: c.PartitionFor(transactionalID), id: transactionalID, api: "EndTxn", fail: r,
		apply: func(core *Core, now int64) { core.EndTxn(transactionalID, producerID, producerEpoch, commit, now, r) }})
}

// GroupPartition is the __consumer_offsets partition AddOffsetsToTxn adds
// for group (offsets.topic.num.partitions).
func (c *Coordinator) GroupPartition(group string) int32 {
	return coordinator.PartitionFor(group, c.opts.GroupPartitions)
}

func flatten(parts map[string][]int32) []TopicPartition {
	var out []TopicPartition
	seen := map[TopicPartition]bool{}
	for t, ps := range parts {
		for _, p := range ps {
			tp := TopicPartition{Topic: t, Partition: p}
			if !seen[tp] {
				seen[tp] = true
				out = append(out, tp)
			}
		}
	}
	sortPartitions(out)
	return out
}

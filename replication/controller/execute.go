package controller

import (
	"errors"
	"fmt"

	"gregor/partition"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// maxOpsPerMulti bounds one state-write transaction. ZooKeeper refuses a
// request larger than jute.maxbuffer (1 MiB by default); a partition
// state znode is about 100 bytes and a create costs two ops (the
// partition's node and its state), so 500 ops stay far below it while
// a failover of thousands of partitions takes a handful of round trips
// instead of one per partition.
const maxOpsPerMulti = 500

// writeOps is a stateWrite as Multi ops: the state op last.
type writeOps struct {
	w   stateWrite
	ops []metastore.Op
}

// writeStates is the executor of a plan's state writes: it applies ws in
// Multi transactions of at most maxOpsPerMulti ops, each led by the
// controller-epoch fence (a CheckVersion of /controller_epoch at the
// version this controller wrote; KAFKA-6082), and records each written
// state in the controller's copy. A partition whose op is refused (its
// state changed since it was read: a leader's AlterIsr, or a znode that
// exists already) is returned in conflicts and the rest of its
// transaction retried without it; the caller re-reads and decides those
// again. err is a lost fence (this controller was deposed) or a store
// failure: the writes of later transactions are then neither written nor
// in conflicts.
func (c *Controller) writeStates(ws []stateWrite) (written, conflicts []stateWrite, err error) {
	if len(ws) == 0 {
		return nil, nil, nil
	}
	all, err := c.stateOps(ws)
	if err != nil {
		return nil, nil, err
	}
	for start := 0; start < len(all); {
		end, n := start, 0
		for end < len(all) && (n == 0 || n+len(all[end].ops) <= maxOpsPerMulti) {
			n += len(all[end].ops)
			end++
		}
		w, cf, err := c.writeChunk(all[start:end])
		written, conflicts = append(written, w...), append(conflicts, cf...)
		if err != nil {
			return written, conflicts, err
		}
		start = end
	}
	return written, conflicts, nil
}

// stateOps turns writes into ops. A create also creates the partition's
// node unless it exists (a crash between the two); the topic's
// /partitions node is made once per topic before, outside the
// transactions (it is shared, and its creation harmless to repeat).
func (c *Controller) stateOps(ws []stateWrite) ([]writeOps, error) {
	existing := map[string]map[string]bool{} // topic → partition nodes present
	out := make([]writeOps, 0, len(ws))
	for _, w := range ws {
		zs := zkmeta.PartitionState{ControllerEpoch: c.epoch, Leader: w.next.Leader, LeaderEpoch: w.next.LeaderEpoch, ISR: w.next.ISR}
		path := zkmeta.PartitionStatePath(w.tp.Topic, w.tp.Partition)
		if !w.create {
			out = append(out, writeOps{w, []metastore.Op{&metastore.SetOp{Path: path, Data: zs.Encode(), Version: w.version}}})
			continue
		}
		have, ok := existing[w.tp.Topic]
		if !ok {
			dir := zkmeta.PartitionsPath(w.tp.Topic)
			if err := metastore.EnsurePath(c.meta, dir); err != nil {
				return nil, fmt.Errorf("controller: create %s: %w", dir, err)
			}
			names, err := c.meta.Children(dir)
			if err != nil {
				return nil, fmt.Errorf("controller: list %s: %w", dir, err)
			}
			have = make(map[string]bool, len(names))
			for _, n := range names {
				have[n] = true
			}
			existing[w.tp.Topic] = have
		}
		var ops []metastore.Op
		if !have[itoa(w.tp.Partition)] {
			ops = append(ops, &metastore.CreateOp{Path: zkmeta.PartitionPath(w.tp.Topic, w.tp.Partition)})
		}
		out = append(out, writeOps{w, append(ops, &metastore.CreateOp{Path: path, Data: zs.Encode()})})
	}
	return out, nil
}

// writeChunk writes one transaction's worth of writes, dropping a refused
// partition and retrying the others until the rest lands (at most once
// per partition).
func (c *Controller) writeChunk(chunk []writeOps) (written, conflicts []stateWrite, err error) {
	for len(chunk) > 0 {
		bad, err := c.multiStates(chunk)
		if err == nil {
			for _, wo := range chunk {
				written = append(written, wo.w)
			}
			return written, conflicts, nil
		}
		if bad < 0 {
			return written, conflicts, fmt.Errorf("controller: write %d partition states: %w", len(chunk), err)
		}
		conflicts = append(conflicts, chunk[bad].w)
		chunk = append(chunk[:bad:bad], chunk[bad+1:]...)
	}
	return written, conflicts, nil
}

// multiStates writes chunk in one Multi led by the controller-epoch fence
// and records the written states. On failure nothing was written: bad is
// the index in chunk of the write whose op was refused (a version
// conflict, an existing or a missing znode: that partition changed
// since it was read), or -1 when the fence failed (this controller was
// deposed) or the store did.
func (c *Controller) multiStates(chunk []writeOps) (bad int, err error) {
	ops := []metastore.Op{&metastore.CheckVersionOp{Path: zkmeta.ControllerEpochPath, Version: c.epochZkVersion}}
	owner := []int{-1} // ops index → chunk index
	for i, wo := range chunk {
		ops = append(ops, wo.ops...)
		for range wo.ops {
			owner = append(owner, i)
		}
	}
	res, err := c.meta.Multi(ops...)
	if err != nil {
		var me *metastore.MultiError
		if errors.As(err, &me) && me.Index > 0 && me.Index < len(ops) &&
			(errors.Is(err, metastore.ErrBadVersion) || errors.Is(err, metastore.ErrNodeExists) || errors.Is(err, metastore.ErrNoNode)) {
			return owner[me.Index], err
		}
		return -1, err
	}
	at := 1
	for _, wo := range chunk {
		at += len(wo.ops)
		v := int32(0) // a created znode's version
		if !wo.w.create {
			v = res[at-1].Version
		}
		c.recordState(wo.w.tp, wo.w.next, v)
	}
	return -1, nil
}

// recordState installs a written state in the controller's copy (a new
// partState: the replica manager's verdict comes with the next
// LeaderAndIsr).
func (c *Controller) recordState(tp partition.TopicPartition, next PartitionLeadership, version int32) {
	if t := c.topics[tp.Topic]; t != nil {
		t.state[tp.Partition] = &partState{PartitionLeadership: next, zkVersion: version}
	}
}

// decision is one partition's planned change for the events whose rules
// are not NextLeadership's (controlled shutdown, admin elections): decide
// maps the current state to the next (false: nothing to write); after a
// conflict it runs again on the re-read state.
type decision struct {
	tp     partition.TopicPartition
	decide func(cur PartitionLeadership) (PartitionLeadership, bool)
}

// applyDecisions plans every decision over the controller's copy (each
// partition must have a state), writes the changes in batched, fenced
// transactions (writeStates) and re-runs a conflicting one alone on its
// re-read state (writeStateRetry). It returns the failures per partition;
// the controller's copy holds the outcome of the others.
func (c *Controller) applyDecisions(ds []decision) map[partition.TopicPartition]error {
	failed := map[partition.TopicPartition]error{}
	var ws []stateWrite
	byTP := make(map[partition.TopicPartition]decision, len(ds))
	for _, d := range ds {
		st := c.topics[d.tp.Topic].state[d.tp.Partition]
		if next, ok := d.decide(st.PartitionLeadership); ok {
			ws = append(ws, stateWrite{tp: d.tp, version: st.zkVersion, next: next})
			byTP[d.tp] = d
		}
	}
	done, conflicts, err := c.writeStates(ws)
	tried := make(map[partition.TopicPartition]bool, len(done)+len(conflicts))
	for _, w := range done {
		tried[w.tp] = true
	}
	for _, w := range conflicts {
		tried[w.tp] = true
		if werr := c.writeStateRetry(c.topics[w.tp.Topic], w.tp.Partition, byTP[w.tp].decide); werr != nil {
			failed[w.tp] = werr
		}
	}
	if err != nil { // the writes after a lost fence or a store failure
		for _, w := range ws {
			if !tried[w.tp] {
				failed[w.tp] = err
			}
		}
	}
	return failed
}

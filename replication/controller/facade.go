package controller

import (
	"go.uber.org/zap"

	"gregor/partition"
)

// The exported requests of the controller: each runs on the controller
// actor (actor.go) and waits for its answer. Those that create partitions
// change partitions (all but the reads) then wait, on the caller's
// goroutine, until this broker applied the LeaderAndIsr, StopReplica and
// config changes they queued for it (callApplied, local.go): a client
// that produces right after CreateTopics finds the local leaders running
// (on the other brokers it may get NOT_LEADER_OR_FOLLOWER and retry, as
// in Kafka). When the actor cannot answer
// (not running, crashed while handling the request, closing, or slower
// than CallTimeout) every item gets the retriable error of call:
// NOT_CONTROLLER or REQUEST_TIMED_OUT.

// CreateTopics validates and creates topics (Kafka's rules, see
// checkNewTopic). With validateOnly nothing is written, but the answer is
// what a real create would answer. Each topic succeeds or fails alone;
// one CreatedTopic per input, in order.
func (c *Controller) CreateTopics(topics []NewTopic, validateOnly bool) []CreatedTopic {
	var out []CreatedTopic
	if err := c.callApplied(func() { out = c.createTopicsLocked(topics, validateOnly) }); err != nil {
		failed := make([]CreatedTopic, len(topics))
		for i, nt := range topics {
			failed[i] = CreatedTopic{Name: nt.Name, NumPartitions: -1, ReplicationFactor: -1, Err: err}
		}
		return failed
	}
	return out
}

// AutoCreateTopics creates missing topics with num.partitions and
// default.replication.factor (capped at the live brokers) for a Metadata
// request with auto-creation allowed; see autoCreateTopicsLocked. It
// returns one error per name that could not be created.
func (c *Controller) AutoCreateTopics(names []string) map[string]error {
	var out map[string]error
	if err := c.callApplied(func() { out = c.autoCreateTopicsLocked(names) }); err != nil {
		failed := make(map[string]error, len(names))
		for _, n := range names {
			failed[n] = err
		}
		return failed
	}
	return out
}

// DeleteTopics deletes topics (see deleteTopicsLocked): one error per
// name, in order: TOPIC_DELETION_DISABLED, UNKNOWN_TOPIC_OR_PARTITION,
// NOT_CONTROLLER, or nil.
func (c *Controller) DeleteTopics(names []string) []error {
	var out []error
	if err := c.callApplied(func() { out = c.deleteTopicsLocked(names) }); err != nil {
		return repeatErr(err, len(names))
	}
	return out
}

// CreatePartitions adds partitions to existing topics (see
// createPartitionsBatchLocked): one error per increase, in order.
func (c *Controller) CreatePartitions(incs []PartitionIncrease, validateOnly bool) []error {
	var out []error
	if err := c.callApplied(func() { out = c.createPartitionsBatchLocked(incs, validateOnly) }); err != nil {
		return repeatErr(err, len(incs))
	}
	return out
}

// TopicConfig returns a topic's overrides as ZooKeeper holds them
// (/config/topics/<t>), on any broker: Kafka's ZooKeeper-mode
// DescribeConfigs reads the znode, not the controller (see
// ReadTopicConfig). Errors: UNKNOWN_TOPIC_OR_PARTITION,
// UNKNOWN_SERVER_ERROR.
func (c *Controller) TopicConfig(topic string) (map[string]string, error) {
	return ReadTopicConfig(c.store, topic)
}

// AlterTopicConfig changes a topic's overrides on any broker, as Kafka's
// ZooKeeper-mode AlterConfigs and IncrementalAlterConfigs do:
// ChangeTopicConfig validates, writes /config/topics/<t> (atomically
// against other writers) and the /config/changes notification every
// broker applies. This broker then applies the change at once (its
// partitions of the topic and, when it is the controller, the
// controller's state and unclean elections) instead of waiting for its
// own watch. mutate may run more than once (a lost race re-runs it on the
// newer overrides); it must not call the Controller. Errors: see
// ChangeTopicConfig.
func (c *Controller) AlterTopicConfig(topic string, mutate func(overrides map[string]string) error, validateOnly bool) error {
	next, err := ChangeTopicConfig(c.store, topic, mutate, validateOnly)
	if err != nil || validateOnly {
		return err
	}
	c.log.Info("altered topic config", zap.String("topic", topic), zap.Any("config", next))
	if cerr := c.callApplied(func() { c.applyTopicConfigLocked(topic) }); cerr != nil {
		// Written and announced: the watch applies it when the actor runs again.
		c.log.Warn("applying the topic config change here deferred to the notification", zap.String("topic", topic), zap.Error(cerr))
	}
	return nil
}

// ControlledShutdown is the controller side of broker brokerID's
// controlled shutdown (API key 7; see controlledShutdownLocked): it
// returns the partitions the broker still leads.
func (c *Controller) ControlledShutdown(brokerID int32) ([]partition.TopicPartition, error) {
	var out []partition.TopicPartition
	var err error
	if cerr := c.callApplied(func() { out, err = c.controlledShutdownLocked(brokerID) }); cerr != nil {
		return nil, cerr
	}
	return out, err
}

// ElectLeaders runs preferred or unclean elections (API 43; see
// electLeadersLocked): per-partition errors, or ErrNotController.
func (c *Controller) ElectLeaders(typ ElectionType, tps []partition.TopicPartition) (map[partition.TopicPartition]error, error) {
	var out map[partition.TopicPartition]error
	var err error
	if cerr := c.callApplied(func() { out, err = c.electLeadersLocked(typ, tps) }); cerr != nil {
		return nil, cerr
	}
	return out, err
}

// AlterPartitionReassignments starts (replicas non-nil) or cancels
// (replicas nil) reassignments (API 45, KIP-455; see
// alterReassignmentsLocked): per-partition errors, or ErrNotController.
func (c *Controller) AlterPartitionReassignments(reqs map[partition.TopicPartition][]int32) (map[partition.TopicPartition]error, error) {
	var out map[partition.TopicPartition]error
	var err error
	if cerr := c.callApplied(func() { out, err = c.alterReassignmentsLocked(reqs) }); cerr != nil {
		return nil, cerr
	}
	return out, err
}

// ListPartitionReassignments returns the ongoing reassignments (API 46;
// see listReassignmentsLocked), sorted by topic and partition.
func (c *Controller) ListPartitionReassignments(filter []partition.TopicPartition) ([]PartitionReassignment, error) {
	var out []PartitionReassignment
	var err error
	if cerr := c.call(func() { out, err = c.listReassignmentsLocked(filter) }); cerr != nil {
		return nil, cerr
	}
	return out, err
}

func repeatErr(err error, n int) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}

// callApplied is call, then settleLocal for the local requests fn
// queued (none: no wait).
func (c *Controller) callApplied(fn func()) error {
	var before, after uint64
	if err := c.call(func() { before = c.local.last(); fn(); after = c.local.last() }); err != nil {
		return err
	}
	if after != before {
		c.settleLocal(after)
	}
	return nil
}

// settleLocal waits, on the caller's goroutine, until this broker applied
// the local requests up to seq (waitLocal, at most CallTimeout), then
// makes a call so the actor has taken in what the broker answered (the
// failed marks of onLocalApplied, sent before the wait ended). Past the
// timeout it returns anyway: the requests still run, in order.
func (c *Controller) settleLocal(seq uint64) {
	if c.waitLocal(seq) {
		_ = c.call(func() {}) // only orders the marks before the return
	}
}

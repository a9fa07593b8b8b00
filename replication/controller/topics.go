package controller

import (
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"gregor/config"
	"gregor/partition"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// NewTopic is one topic of a CreateTopics request.
type NewTopic struct {
	Name              string
	NumPartitions     int32             // -1 = num.partitions
	ReplicationFactor int16             // -1 = default.replication.factor
	Assignment        map[int32][]int32 // manual replica assignment; then both counts must be -1
	Configs           map[string]string // topic config overrides
}

// CreatedTopic is the outcome of one NewTopic.
type CreatedTopic struct {
	Name              string
	Err               error // nil, or *Error with the Kafka code and message
	TopicID           [16]byte
	NumPartitions     int32
	ReplicationFactor int16
	Configs           []config.ConfigEntry // effective configs (CreateTopics v5+)
}

// createTopicsLocked is the body of CreateTopics, run on the controller actor.
// CreateTopics validates and creates topics (Kafka's rules, see
// checkNewTopic). With validateOnly nothing is written, but the answer is
// what a real create would answer. Each topic succeeds or fails alone.
func (c *Controller) createTopicsLocked(topics []NewTopic, validateOnly bool) []CreatedTopic {
	out := make([]CreatedTopic, 0, len(topics))
	changed := false
	for _, nt := range topics {
		res := c.createTopicLocked(nt, validateOnly)
		if res.Err == nil && !validateOnly {
			changed = true
		}
		out = append(out, res)
	}
	if changed {
		c.publish()
	}
	return out
}

func (c *Controller) createTopicLocked(nt NewTopic, validateOnly bool) CreatedTopic {
	res := CreatedTopic{Name: nt.Name, NumPartitions: -1, ReplicationFactor: -1}
	if !c.active {
		// Internal topics (__consumer_offsets) are created by whichever
		// broker first needs them, straight through ZooKeeper, as Kafka
		// 2.x's AdminZkClient does; client requests go to the controller.
		if isInternal(nt.Name) && !validateOnly && len(nt.Assignment) == 0 {
			res.Err = c.createInZk(nt)
			return res
		}
		res.Err = ErrNotController
		return res
	}
	assignment, err := c.checkNewTopic(nt)
	if err != nil {
		res.Err = err
		return res
	}
	res.NumPartitions = int32(len(assignment))
	res.ReplicationFactor = int16(len(assignment[0]))
	res.Configs = c.defaults().DescribeTopicConfigs(nt.Configs) // the topic defaults in force (dynamic ones included)
	if validateOnly {
		return res
	}
	t, err := c.writeNewTopic(nt.Name, assignment, nt.Configs)
	if err != nil {
		res.Err = errf(kerr.UnknownServerError, "%v", err)
		return res
	}
	res.TopicID = t.id
	c.log.Info("created topic", zap.String("topic", nt.Name), zap.Int32("partitions", res.NumPartitions),
		zap.Int16("replication.factor", res.ReplicationFactor))
	return res
}

// checkNewTopic applies Kafka's CreateTopics validation and returns the
// replica assignment to write.
func (c *Controller) checkNewTopic(nt NewTopic) (map[int32][]int32, error) {
	if msg := ValidateTopicName(nt.Name); msg != "" {
		return nil, errf(kerr.InvalidTopicException, "%s", msg)
	}
	if _, ok := c.topics[nt.Name]; ok {
		return nil, errf(kerr.TopicAlreadyExists, "Topic '%s' already exists.", nt.Name)
	}
	unified := unifyCollision(nt.Name)
	for existing := range c.topics {
		if unifyCollision(existing) == unified {
			return nil, errf(kerr.InvalidTopicException, "Topic '%s' collides with existing topic: %s", nt.Name, existing)
		}
	}
	live := c.liveBrokers()
	var assignment map[int32][]int32
	if len(nt.Assignment) > 0 {
		if nt.NumPartitions != -1 || nt.ReplicationFactor != -1 {
			return nil, errf(kerr.InvalidRequest, "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.")
		}
		if msg := CheckReplicaAssignment(nt.Assignment, 0, 0, c.live); msg != "" {
			return nil, errf(kerr.InvalidReplicaAssignment, "%s", msg)
		}
		assignment = nt.Assignment
	} else {
		np, rf := nt.NumPartitions, nt.ReplicationFactor
		if np == -1 {
			np = c.cfg.NumPartitions
			if np <= 0 {
				np = 1
			}
		}
		if rf == -1 {
			rf = c.cfg.DefaultReplicationFactor
			if rf <= 0 {
				rf = 1
			}
		}
		if np <= 0 {
			return nil, errf(kerr.InvalidPartitions, "Number of partitions must be larger than 0.")
		}
		if rf <= 0 {
			return nil, errf(kerr.InvalidReplicationFactor, "Replication factor must be larger than 0.")
		}
		if int(rf) > len(live) {
			return nil, errf(kerr.InvalidReplicationFactor, "Replication factor: %d larger than available brokers: %d.", rf, len(live))
		}
		var err error
		if assignment, err = AssignReplicasWithRacks(c.liveRacks(), np, rf, -1, 0); err != nil {
			return nil, errf(kerr.UnknownServerError, "%s", err.Error())
		}
	}
	if err := config.ValidateTopicConfigs(nt.Configs); err != nil {
		return nil, errf(kerr.InvalidConfig, "%s", err.Error())
	}
	return assignment, nil
}

// writeNewTopic writes config, assignment and partition states, then
// starts the partitions (Kafka's order: config first, so a watcher of
// /brokers/topics never sees a topic without its config).
func (c *Controller) writeNewTopic(name string, assignment map[int32][]int32, overrides map[string]string) (*topicState, error) {
	if overrides == nil {
		overrides = map[string]string{}
	}
	cfgPath := zkmeta.TopicConfigPath(name)
	if err := c.meta.Create(cfgPath, zkmeta.EncodeConfig(overrides), false); errors.Is(err, metastore.ErrNodeExists) {
		// Left over from an interrupted create or delete: replace it.
		if _, err := c.meta.Set(cfgPath, zkmeta.EncodeConfig(overrides), metastore.AnyVersion); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	t := &topicState{name: name, id: zkmeta.RandomUUID(), assignment: assignment, state: map[int32]*partState{}, overrides: overrides}
	a := zkmeta.TopicAssignment{TopicID: t.id, Partitions: assignment}
	if err := c.meta.Create(zkmeta.TopicPath(name), a.Encode(), false); err != nil {
		return nil, err
	}
	c.topics[name] = t
	states, err := c.electPartitions(t, t.sortedPartitions())
	c.sendLeaderAndIsr(states, nil)
	return t, err
}

// autoCreateTopicsLocked is the body of AutoCreateTopics, run on the controller actor.
// AutoCreateTopics creates missing topics with num.partitions and
// default.replication.factor (capped at the live brokers, as Kafka caps
// internal topics) for a Metadata request with auto-creation allowed. The
// caller checked auto.create.topics.enable. It returns one error per name
// that could not be created (invalid name: INVALID_TOPIC_EXCEPTION); a name
// that exists already is not an error.
func (c *Controller) autoCreateTopicsLocked(names []string) map[string]error {
	if !c.active {
		return c.autoCreateInZk(names)
	}
	errs := map[string]error{}
	changed := false
	for _, n := range names {
		if _, ok := c.topics[n]; ok {
			continue
		}
		rf := c.cfg.DefaultReplicationFactor
		if int(rf) > len(c.liveBrokers()) {
			rf = int16(len(c.liveBrokers()))
		}
		if rf <= 0 {
			rf = 1
		}
		res := c.createTopicLocked(NewTopic{Name: n, NumPartitions: -1, ReplicationFactor: rf}, false)
		if res.Err != nil {
			errs[n] = res.Err
			continue
		}
		changed = true
	}
	if changed {
		c.publish()
	}
	return errs
}

// deleteTopicsLocked is the body of DeleteTopics, run on the controller actor.
// DeleteTopics deletes topics: mark /admin/delete_topics/<t>, stop the
// replicas and delete their logs, remove the topic's znodes, unmark.
// Errors per name: TOPIC_DELETION_DISABLED (delete.topic.enable=false),
// UNKNOWN_TOPIC_OR_PARTITION, NOT_CONTROLLER.
func (c *Controller) deleteTopicsLocked(names []string) []error {
	out := make([]error, len(names))
	changed := false
	for i, n := range names {
		switch t, ok := c.topics[n]; {
		case !c.active:
			out[i] = ErrNotController
		case !c.cfg.DeleteTopicEnable:
			out[i] = errf(kerr.TopicDeletionDisabled, "Topic deletion is disabled.")
		case !ok:
			out[i] = errf(kerr.UnknownTopicOrPartition, "This server does not host this topic-partition.")
		default:
			if err := c.deleteTopicLocked(t); err != nil {
				out[i] = errf(kerr.UnknownServerError, "%v", err)
			}
			changed = true
		}
	}
	if changed {
		c.publish()
	}
	return out
}

func (c *Controller) deleteTopicLocked(t *topicState) error {
	marker := zkmeta.DeleteTopicPath(t.name)
	if err := c.meta.Create(marker, nil, false); err != nil && !errors.Is(err, metastore.ErrNodeExists) {
		return fmt.Errorf("mark %s for deletion: %w", t.name, err)
	}
	per := map[int32][]partition.TopicPartition{}
	for _, p := range t.sortedPartitions() {
		for _, r := range t.assignment[p] {
			per[r] = append(per[r], partition.TopicPartition{Topic: t.name, Partition: p})
		}
	}
	for id, tps := range per {
		if id == c.cfg.BrokerID || !c.live(id) {
			continue
		}
		// Delivered in order after any LeaderAndIsr already queued; a dead
		// replica keeps its files until an operator removes them.
		c.peers.Send(id, c.stopReplicaRequest(tps, true), c.logFailure(id, "StopReplica"))
	}
	if tps := per[c.cfg.BrokerID]; len(tps) > 0 {
		if err := c.stopLocalReplicasWait(tps, true); err != nil {
			// The marker stays: the next start retries the deletion.
			return fmt.Errorf("stop replicas of %s: %w", t.name, err)
		}
	}
	var err error
	c.offActor(func() { // one effect for the whole subtree walk
		if err = metastore.DeleteRecursive(c.store, zkmeta.TopicPath(t.name)); err == nil {
			err = metastore.DeleteRecursive(c.store, zkmeta.TopicConfigPath(t.name))
		}
	})
	if err != nil {
		return err
	}
	delete(c.topics, t.name)
	if err := c.meta.Delete(marker, metastore.AnyVersion); err != nil && !errors.Is(err, metastore.ErrNoNode) {
		return err
	}
	c.log.Info("deleted topic", zap.String("topic", t.name))
	return nil
}

// PartitionIncrease is one topic of a CreatePartitions request.
type PartitionIncrease struct {
	Topic string
	Count int32 // the new total number of partitions
	// Assignment holds the replicas of each new partition, in order
	// (len = Count - current count); nil = assign automatically.
	Assignment [][]int32
}

// createPartitionsBatchLocked is the body of CreatePartitions, run on the controller actor.
// CreatePartitions adds partitions to existing topics (Kafka
// AdminZkClient.addPartitions). Errors per topic: UNKNOWN_TOPIC_OR_PARTITION,
// INVALID_PARTITIONS (count not higher), INVALID_REPLICA_ASSIGNMENT,
// INVALID_REPLICATION_FACTOR, NOT_CONTROLLER.
func (c *Controller) createPartitionsBatchLocked(incs []PartitionIncrease, validateOnly bool) []error {
	out := make([]error, len(incs))
	changed := false
	for i, inc := range incs {
		out[i] = c.createPartitionsLocked(inc, validateOnly)
		changed = changed || (out[i] == nil && !validateOnly)
	}
	if changed {
		c.publish()
	}
	return out
}

func (c *Controller) createPartitionsLocked(inc PartitionIncrease, validateOnly bool) error {
	if !c.active {
		return ErrNotController
	}
	t, ok := c.topics[inc.Topic]
	if !ok {
		return errf(kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", inc.Topic)
	}
	cur := int32(len(t.assignment))
	switch {
	case inc.Count < cur:
		return errf(kerr.InvalidPartitions, "Topic currently has %d partitions, which is higher than the requested %d.", cur, inc.Count)
	case inc.Count == cur:
		return errf(kerr.InvalidPartitions, "Topic already has %d partitions.", cur)
	}
	add := inc.Count - cur
	rf := len(t.assignment[0])
	var added map[int32][]int32
	if inc.Assignment != nil {
		if int32(len(inc.Assignment)) != add {
			return errf(kerr.InvalidReplicaAssignment, "Increasing the number of partitions by %d but %d assignments provided.", add, len(inc.Assignment))
		}
		added = make(map[int32][]int32, add)
		for i, rs := range inc.Assignment {
			added[cur+int32(i)] = rs
		}
		if msg := CheckReplicaAssignment(added, cur, rf, c.live); msg != "" {
			return errf(kerr.InvalidReplicaAssignment, "%s", msg)
		}
	} else {
		live := c.liveBrokers()
		if rf > len(live) {
			return errf(kerr.InvalidReplicationFactor, "Replication factor: %d larger than available brokers: %d.", rf, len(live))
		}
		start := indexOf(sortedCopy(live), t.assignment[0][0])
		var err error
		if added, err = AssignReplicasWithRacks(c.liveRacks(), add, int16(rf), start, cur); err != nil {
			return errf(kerr.UnknownServerError, "%s", err.Error())
		}
	}
	if validateOnly {
		return nil
	}
	all := maps.Clone(t.assignment)
	maps.Copy(all, added)
	data, version, err := c.meta.Get(zkmeta.TopicPath(t.name))
	if err != nil {
		return errf(kerr.UnknownServerError, "%v", err)
	}
	a, err := zkmeta.DecodeTopicAssignment(t.name, data)
	if err != nil {
		return errf(kerr.UnknownServerError, "%v", err)
	}
	a.Partitions = all
	if _, err := c.meta.Set(zkmeta.TopicPath(t.name), a.Encode(), version); err != nil {
		return errf(kerr.UnknownServerError, "%v", err)
	}
	t.assignment = all
	newParts := make([]int32, 0, add)
	for p := cur; p < inc.Count; p++ {
		newParts = append(newParts, p)
	}
	states, err := c.electPartitions(t, newParts)
	c.sendLeaderAndIsr(states, nil)
	if err != nil {
		return errf(kerr.UnknownServerError, "%v", err)
	}
	c.log.Info("added partitions", zap.String("topic", t.name), zap.Int32("partitions", inc.Count))
	return nil
}

func sortedCopy(s []int32) []int32 {
	out := append([]int32(nil), s...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// indexOf returns x's index in s, or 0 when absent (the start index of a
// topic whose first replica's broker is gone).
func indexOf(s []int32, x int32) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return 0
}

// BrokerConfig is the broker's server.properties as read (for
// DescribeConfigs of a BROKER resource).
func (c *Controller) BrokerConfig() map[string]string { return maps.Clone(c.cfg.Raw) }

// autoCreateInZk is auto-creation on a broker that is not the controller
// (Kafka 2.x AdminZkClient.createTopic from any broker).
func (c *Controller) autoCreateInZk(names []string) map[string]error {
	errs := map[string]error{}
	for _, n := range names {
		if err := c.createInZk(NewTopic{Name: n, NumPartitions: -1, ReplicationFactor: -1}); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			errs[n] = err
		}
	}
	return errs
}

// createInZk writes a topic's config and assignment znodes, assigning
// replicas over the live brokers of the metadata cache (counts -1 =
// num.partitions / default.replication.factor, the factor capped at the
// live brokers); the controller sees /brokers/topics change and elects
// the leaders. Errors: INVALID_TOPIC_EXCEPTION, TOPIC_ALREADY_EXISTS,
// INVALID_CONFIG, UNKNOWN_SERVER_ERROR.
func (c *Controller) createInZk(nt NewTopic) error {
	snap := c.cache.Load()
	if _, ok := snap.Topics[nt.Name]; ok {
		return errf(kerr.TopicAlreadyExists, "Topic '%s' already exists.", nt.Name)
	}
	if msg := ValidateTopicName(nt.Name); msg != "" {
		return errf(kerr.InvalidTopicException, "%s", msg)
	}
	if err := config.ValidateTopicConfigs(nt.Configs); err != nil {
		return errf(kerr.InvalidConfig, "%s", err.Error())
	}
	var live []BrokerRack
	for _, b := range snap.Brokers {
		br := BrokerRack{ID: b.ID}
		if b.Rack != nil {
			br.Rack = *b.Rack
		}
		live = append(live, br)
	}
	if len(live) == 0 {
		live = []BrokerRack{{ID: c.cfg.BrokerID, Rack: strings.TrimSpace(c.cfg.Raw["broker.rack"])}}
	}
	rf := nt.ReplicationFactor
	if rf <= 0 {
		rf = c.cfg.DefaultReplicationFactor
	}
	if int(rf) > len(live) {
		rf = int16(len(live))
	}
	if rf <= 0 {
		rf = 1
	}
	np := nt.NumPartitions
	if np <= 0 {
		np = c.cfg.NumPartitions
	}
	if np <= 0 {
		np = 1
	}
	parts, err := AssignReplicasWithRacks(live, np, rf, -1, 0)
	if err != nil {
		return errf(kerr.UnknownServerError, "%s", err.Error())
	}
	a := zkmeta.TopicAssignment{TopicID: zkmeta.RandomUUID(), Partitions: parts}
	if err := c.meta.Create(zkmeta.TopicConfigPath(nt.Name), zkmeta.EncodeConfig(nt.Configs), false); err != nil && !errors.Is(err, metastore.ErrNodeExists) {
		return errf(kerr.UnknownServerError, "%v", err)
	}
	err = c.meta.Create(zkmeta.TopicPath(nt.Name), a.Encode(), false)
	if errors.Is(err, metastore.ErrNodeExists) {
		return errf(kerr.TopicAlreadyExists, "Topic '%s' already exists.", nt.Name)
	}
	if err != nil {
		return errf(kerr.UnknownServerError, "%v", err)
	}
	c.log.Info("created topic in ZooKeeper for the controller", zap.String("topic", nt.Name), zap.Int32("partitions", np), zap.Int16("replication.factor", rf))
	return nil
}

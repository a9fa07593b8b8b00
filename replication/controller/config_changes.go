package controller

import (
	"errors"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"gregor/partition"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// Every broker, controller or not, watches /config/changes (Kafka's
// DynamicConfigManager over ZkNodeChangeNotificationListener): for each
// notification newer than the last one it processed it re-reads the
// entity's config and applies it. For a topic that means the replica
// manager's UpdateConfig and UpdateMinInsyncReplicas on the partitions
// this broker hosts and, on the active controller, the topic's config in
// the controller's state (so its next LeaderAndIsr carries it) and, when
// unclean.leader.election.enable is now true, an unclean election for the
// topic's leaderless partitions (Kafka's TopicConfigHandler →
// KafkaController.enableTopicUncleanLeaderElection). For a user
// ("users/<u>", SCRAM credentials) it is Options.OnUserConfigChange,
// which re-reads the user off this goroutine (replication/usercreds). Notifications older
// than ConfigChangeExpiry are deleted by whichever broker sees them
// expire, as Kafka's listener purges them.

// evConfigChanges: /config/changes children changed (every broker).
const evConfigChanges eventKind = 200

// ConfigChangeExpiry is how long a /config/changes notification is kept
// after this broker first saw it (Kafka's changeExpirationMs, 15 minutes;
// measured from first sight because the store API has no creation time).
var ConfigChangeExpiry = 15 * time.Minute

// MinInsyncUpdater is the optional part of a ReplicaManager that applies
// a topic's new min.insync.replicas (partition.Manager implements it).
type MinInsyncUpdater interface {
	UpdateMinInsyncReplicas(topic string, n int)
}

var _ MinInsyncUpdater = (*partition.Manager)(nil)

// configChangeState is the listener's memory, kept across actor restarts
// and sessions (a new incarnation resumes after the last processed seq).
type configChangeState struct {
	last int64               // highest notification seq processed; -1 = none yet
	seen map[int64]time.Time // notification seq → when this broker first listed it
}

// watchConfigChangesLocked arms the /config/changes watch unless it is
// armed, processing what is there; on failure it retries in a second.
func (c *Controller) watchConfigChangesLocked() {
	if c.isArmed(zkmeta.ConfigChangesPath) {
		return
	}
	if err := c.onConfigChanges(); err != nil {
		c.log.Warn("watching config changes failed, retrying", zap.Error(err))
		c.after(time.Second, event{kind: evConfigChanges})
	}
}

// onConfigChanges lists /config/changes (re-arming the watch), applies
// the notifications newer than the last processed one (each entity once)
// and purges expired notifications.
func (c *Controller) onConfigChanges() error {
	kids, w, err := c.meta.ChildrenW(zkmeta.ConfigChangesPath)
	if errors.Is(err, metastore.ErrNoNode) {
		if err = metastore.EnsurePath(c.meta, zkmeta.ConfigChangesPath); err == nil {
			kids, w, err = c.meta.ChildrenW(zkmeta.ConfigChangesPath)
		}
	}
	if err != nil {
		return err
	}
	c.forward(evConfigChanges, zkmeta.ConfigChangesPath, w)
	if c.cfgChanges.seen == nil {
		c.cfgChanges = configChangeState{last: -1, seen: map[int64]time.Time{}}
	}
	type note struct {
		seq  int64
		name string
	}
	var notes []note
	for _, k := range kids {
		if seq, ok := zkmeta.ConfigChangeSeq(k); ok {
			notes = append(notes, note{seq, k})
		}
	}
	sort.Slice(notes, func(i, j int) bool { return notes[i].seq < notes[j].seq })
	now := c.now()
	present := map[int64]bool{}
	var topics []string
	pending := map[string]bool{}
	for _, n := range notes {
		present[n.seq] = true
		first, ok := c.cfgChanges.seen[n.seq]
		if !ok {
			c.cfgChanges.seen[n.seq] = now
			first = now
		}
		path := metastore.Join(zkmeta.ConfigChangesPath, n.name)
		if n.seq > c.cfgChanges.last {
			data, _, err := c.meta.Get(path)
			if errors.Is(err, metastore.ErrNoNode) {
				c.cfgChanges.last = n.seq
				continue // purged by another broker
			}
			if err != nil {
				return err // retried; the notifications before it are applied again (idempotent)
			}
			entity, derr := zkmeta.DecodeConfigChange(data)
			switch typ, name, _ := strings.Cut(entity, "/"); {
			case derr != nil:
				c.log.Warn("ignoring bad config change notification", zap.String("path", path), zap.Error(derr))
			case typ == zkmeta.ConfigEntityTopics && name != "":
				if !pending[name] {
					pending[name] = true
					topics = append(topics, name)
				}
			case (typ == "users" || typ == "clients") && name != "":
				// SCRAM credentials and client quotas: the broker's
				// watchers re-read them off this goroutine.
				if typ == "users" && !strings.Contains(name, "/") && c.onUserChange != nil {
					c.onUserChange(name)
				}
				if c.onQuotaChange != nil {
					c.onQuotaChange(entity)
				}
			case typ == "brokers" && name != "" && c.onBrokerConfig != nil:
				// Dynamic broker configs: the broker's watcher re-reads them off this goroutine.
				c.onBrokerConfig(name)
			default: // ips (IP connection quotas): not applied here
				c.log.Debug("config change of an entity type without dynamic configs", zap.String("entity", entity))
			}
			c.cfgChanges.last = n.seq
		}
		if now.Sub(first) >= ConfigChangeExpiry {
			if err := c.meta.Delete(path, metastore.AnyVersion); err != nil && !errors.Is(err, metastore.ErrNoNode) {
				c.log.Warn("purging config change notification", zap.String("path", path), zap.Error(err))
			}
		}
	}
	for seq := range c.cfgChanges.seen {
		if !present[seq] {
			delete(c.cfgChanges.seen, seq)
		}
	}
	for _, t := range topics {
		c.applyTopicConfigLocked(t)
	}
	return nil
}

// TopicLister is the optional part of a ReplicaManager that lists the
// topics this broker hosts a partition of (partition.Manager implements it).
type TopicLister interface{ HostedTopics() []string }

var _ TopicLister = (*partition.Manager)(nil)

// DefaultsChanged re-applies every topic's config on the controller's
// goroutine, after SetTopicDefaults installed new broker defaults: the
// partitions this broker hosts of topics without their own override of a
// changed key take the new default (Kafka's DynamicLogConfig.reconfigure)
// and, on the active controller, a topic whose unclean.leader.election.enable
// is now true elects leaders for its leaderless partitions (Kafka's
// enableDefaultUncleanLeaderElection). It does not wait.
func (c *Controller) DefaultsChanged() {
	c.tell(func() {
		seen := map[string]bool{}
		var names []string
		if l, ok := c.rm.(TopicLister); ok {
			for _, t := range l.HostedTopics() {
				if !seen[t] {
					seen[t] = true
					names = append(names, t)
				}
			}
		}
		if c.active {
			for t := range c.topics {
				if !seen[t] {
					seen[t] = true
					names = append(names, t)
				}
			}
		}
		sort.Strings(names)
		for _, t := range names {
			c.applyTopicConfigLocked(t)
		}
	})
}

// applyTopicConfigLocked applies /config/topics/<t> as it is now to this
// broker's partitions of t and, on the active controller, to its state
// (see the file comment). A topic that is gone is skipped.
func (c *Controller) applyTopicConfigLocked(topic string) {
	overrides, err := ReadTopicConfig(c.meta, topic)
	if err != nil {
		c.log.Info("config change of a topic that cannot be read, skipped", zap.String("topic", topic), zap.Error(err))
		return
	}
	policy, _ := c.defaults().TopicPolicy(overrides) // invalid overrides: broker defaults (logged by logConfig)
	lc := c.logConfig(topic, overrides)
	c.noteTopicConfig(topic, overrides)
	// Queued after the LeaderAndIsr already sent to this broker, so a
	// partition they create gets this config, not the one they carry.
	c.local.enqueue(func() {
		c.rm.UpdateConfig(topic, lc)
		if u, ok := c.rm.(MinInsyncUpdater); ok {
			u.UpdateMinInsyncReplicas(topic, policy.MinInsyncReplicas)
		}
	})
	c.log.Info("applied topic config", zap.String("topic", topic), zap.Any("config", overrides))
	if !c.active {
		return
	}
	t, ok := c.topics[topic]
	if !ok {
		return
	}
	t.overrides = overrides
	if policy.UncleanLeaderElection {
		c.enableUncleanLeaderElectionLocked(t)
	}
}

// enableUncleanLeaderElectionLocked elects leaders for t's partitions that
// have none, allowing out-of-sync replicas (Kafka's
// enableTopicUncleanLeaderElection), then sends the new states and
// metadata.
func (c *Controller) enableUncleanLeaderElectionLocked(t *topicState) {
	var tps []partition.TopicPartition
	for _, p := range t.sortedPartitions() {
		if st := t.state[p]; st != nil && (st.Leader < 0 || !c.live(st.Leader)) {
			tps = append(tps, partition.TopicPartition{Topic: t.name, Partition: p})
		}
	}
	states, wrote, err := c.electBatchWith(tps, true)
	if err != nil {
		c.log.Error("unclean leader election failed", zap.String("topic", t.name), zap.Error(err))
	}
	changed := writtenOnly(states, wrote)
	if len(changed) == 0 {
		return
	}
	c.log.Info("unclean.leader.election.enable set: elected leaders", zap.String("topic", t.name), zap.Int("partitions", len(changed)))
	c.sendLeaderAndIsr(changed, nil)
	c.publish()
}

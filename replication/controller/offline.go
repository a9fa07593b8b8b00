package controller

import (
	"errors"
	"time"

	"go.uber.org/zap"

	"gregor/partition"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// This file handles offline replicas (Kafka KIP-112 in ZooKeeper mode):
// a broker whose partition actor stopped for good (the supervisor gave
// up, or an operator stopped it) writes a log dir event notification
// naming the partition; the active controller marks that replica
// offline, drops it from the ISR, elects another leader from the
// remaining live ISR (leader epoch + 1), sends LeaderAndIsr to the
// partition's other replicas and UpdateMetadata to every broker, where
// the replica is listed in offline_replicas.
//
// The mark lasts until the broker registers again (a restart: its
// /brokers/ids registration timestamp changes), when the controller's
// broker-startup LeaderAndIsr brings the replica back as a follower. While
// marked, the replica gets no LeaderAndIsr and never leads. A controller
// failover forgets the marks (the notifications were consumed): the new
// controller's LeaderAndIsr revives the partition actor on that broker,
// which rejoins the ISR by fetching (or, if it fails again, is reported
// again).

// evLogDir: /log_dir_event_notification children changed.
const evLogDir eventKind = 300

// offlineMark records that broker's replica of a partition went offline
// while the broker was registered with this timestamp.
type offlineMark map[int32]int64

// reportRetries bounds ReportOfflineReplica's attempts (one second apart).
const reportRetries = 3

// installOfflineReporter makes the replica manager report offline
// replicas to this controller when it supports it (partition.Manager).
func (c *Controller) installOfflineReporter() {
	if r, ok := c.rm.(interface {
		SetOfflineReporter(partition.OfflineReporter)
	}); ok {
		r.SetOfflineReporter(c.ReportOfflineReplica)
	}
}

// ReportOfflineReplica is the broker side: it writes a
// /log_dir_event_notification/log_dir_event_<seq> znode naming tp as
// offline on this broker, for the active controller (whichever broker
// that is). It retries a failed write up to reportRetries times, a second
// apart, and gives up early when the controller closes; failures are
// logged (the replica then stays offline, led elsewhere only if its
// broker restarts).
func (c *Controller) ReportOfflineReplica(tp partition.TopicPartition) {
	note := zkmeta.EncodeLogDirEvent(c.cfg.BrokerID, []zkmeta.IsrChangePartition{{Topic: tp.Topic, Partition: tp.Partition}})
	for attempt := 1; ; attempt++ {
		path, err := c.store.CreateSequential(zkmeta.LogDirEventPrefix, note, false)
		if err == nil {
			c.log.Warn("reported offline replica to the controller", zap.Stringer("partition", tp), zap.String("znode", path))
			return
		}
		if attempt >= reportRetries {
			c.log.Error("reporting offline replica failed", zap.Stringer("partition", tp), zap.Error(err))
			return
		}
		select {
		case <-c.stop:
			return
		case <-time.After(time.Second):
		}
	}
}

// onFailoverOffline is the offline-replica part of onControllerFailover:
// forget old marks, watch the notifications and consume pending ones.
func (c *Controller) onFailoverOffline() {
	c.offline = nil
	if err := c.onLogDirEvent(); err != nil {
		c.log.Warn("reading "+zkmeta.LogDirEventNotificationPath, zap.Error(err))
		c.after(time.Second, event{kind: evLogDir})
	}
}

// onLogDirEvent reads and removes the log dir event notifications, marks
// the replicas they name offline and moves the affected partitions'
// leadership (Kafka's KafkaController.processLogDirEventNotification →
// onReplicasBecomeOffline).
func (c *Controller) onLogDirEvent() error {
	if !c.active {
		return nil
	}
	if !c.isArmed(zkmeta.LogDirEventNotificationPath) {
		_, w, err := c.meta.ChildrenW(zkmeta.LogDirEventNotificationPath)
		if err != nil {
			return err
		}
		c.forward(evLogDir, zkmeta.LogDirEventNotificationPath, w)
	}
	kids, err := c.meta.Children(zkmeta.LogDirEventNotificationPath)
	if err != nil {
		return err
	}
	type hit struct {
		t *topicState
		p int32
	}
	var hits []hit
	for _, k := range kids {
		path := metastore.Join(zkmeta.LogDirEventNotificationPath, k)
		data, _, err := c.meta.Get(path)
		if err == nil {
			ev, derr := zkmeta.DecodeLogDirEvent(data)
			if derr != nil {
				c.log.Warn("bad log dir event notification", zap.String("path", path), zap.Error(derr))
			}
			info, live := c.liveInfo[ev.Broker]
			for _, p := range ev.Partitions {
				t, ok := c.topics[p.Topic]
				if !ok || !live || !contains(t.assignment[p.Partition], ev.Broker) {
					continue
				}
				tp := partition.TopicPartition{Topic: p.Topic, Partition: p.Partition}
				if c.offline == nil {
					c.offline = map[partition.TopicPartition]offlineMark{}
				}
				if c.offline[tp] == nil {
					c.offline[tp] = offlineMark{}
				}
				c.offline[tp][ev.Broker] = info.Timestamp
				hits = append(hits, hit{t, p.Partition})
				c.log.Warn("replica offline", zap.Stringer("partition", tp), zap.Int32("broker", ev.Broker))
			}
		} else if !errors.Is(err, metastore.ErrNoNode) {
			return err
		}
		if err := c.meta.Delete(path, metastore.AnyVersion); err != nil && !errors.Is(err, metastore.ErrNoNode) {
			return err
		}
	}
	if len(hits) == 0 {
		return nil
	}
	var tps []partition.TopicPartition
	seen := map[partition.TopicPartition]bool{}
	for _, h := range hits {
		if tp := (partition.TopicPartition{Topic: h.t.name, Partition: h.p}); !seen[tp] {
			seen[tp] = true
			tps = append(tps, tp)
		}
	}
	states, wrote, err := c.electBatch(tps)
	if err != nil {
		c.log.Error("leader election for an offline replica failed", zap.Error(err))
	}
	changed := writtenOnly(states, wrote)
	c.sendLeaderAndIsr(changed, nil) // offline replicas are skipped
	c.publish()
	return nil
}

// isOffline reports whether broker's replica of tp is marked offline and
// the broker has not re-registered since.
func (c *Controller) isOffline(tp partition.TopicPartition, broker int32) bool {
	ts, ok := c.offline[tp][broker]
	if !ok {
		return false
	}
	info, live := c.liveInfo[broker]
	return live && info.Timestamp == ts
}

// replicaOnline is the "live" of partition t-p's elections: the broker
// is registered and its replica of the partition is not offline (Kafka's
// ControllerContext.isReplicaOnline).
func (c *Controller) replicaOnline(topic string, p int32) func(int32) bool {
	tp := partition.TopicPartition{Topic: topic, Partition: p}
	return func(id int32) bool { return c.live(id) && !c.isOffline(tp, id) }
}

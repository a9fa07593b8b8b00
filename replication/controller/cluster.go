package controller

import (
	"errors"
	"sort"
	"strconv"
	"time"

	"go.uber.org/zap"

	"gregor/partition"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// eventKind names what woke the controller's event loop (Kafka's
// ControllerEvent types).
type eventKind int

const (
	evController eventKind = iota + 1 // /controller changed (standby: try to win it)
	evBrokers                         // /brokers/ids children changed
	evTopics                          // /brokers/topics children changed
	evTopic                           // /brokers/topics/<t> data changed (partitions added)
	evDeletes                         // /admin/delete_topics children changed
	evIsr                             // /isr_change_notification children changed
	evExpired                         // session expired: resign
	evResync                          // new session (or a retry): re-register, re-elect, re-arm
)

type event struct {
	kind eventKind
	path string // watched path (evTopic: the topic's path)
	gen  uint64 // generation of the watch that fired; 0 = not a watch
	typ  metastore.EventType
}

// post sends ev to the controller actor; it is dropped when no actor runs
// (closing, or given up: the next incarnation re-reads everything).
func (c *Controller) post(ev event) {
	c.life.Lock()
	r := c.cur
	c.life.Unlock()
	if r != nil {
		c.asys.Root.Send(r.pid, ev)
	}
}

// after posts ev after d (a retry), unless the controller stops or the
// actor restarts first (the new incarnation starts over). Called on the
// actor.
func (c *Controller) after(d time.Duration, ev event) {
	scope := c.scope
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			c.post(ev)
		case <-c.stop:
		case <-scope:
		}
	}()
}

// onSession turns the store's session events into actor messages (it must
// not block: post only queues in the actor's unbounded mailbox).
func (c *Controller) onSession(e metastore.SessionEvent) {
	var kind eventKind
	switch e.State {
	case metastore.SessionExpired:
		kind = evExpired
	case metastore.SessionEstablished:
		kind = evResync
	default:
		return
	}
	c.post(event{kind: kind})
}

// forward waits for one watch event and posts it; ends on stop or when
// the actor restarts (the new incarnation re-arms every watch). Called on
// the actor.
func (c *Controller) forward(kind eventKind, path string, w <-chan metastore.Event) {
	c.gen++
	gen := c.gen
	c.armed[path] = gen
	scope := c.scope
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		select {
		case e, ok := <-w:
			if ok {
				c.post(event{kind: kind, path: path, gen: gen, typ: e.Type})
			}
		case <-c.stop:
		case <-scope:
		}
	}()
}

// isArmed reports whether path has a live watch.
func (c *Controller) isArmed(path string) bool { _, ok := c.armed[path]; return ok }

func (c *Controller) handle(ev event) {
	if !c.started {
		return
	}
	if ev.gen != 0 {
		if c.armed[ev.path] != ev.gen {
			return // a watch replaced by a newer one (after a resync)
		}
		delete(c.armed, ev.path)
		if ev.typ == metastore.EventNotWatching {
			// The session expired under this watch: everything is re-armed
			// on the new session.
			c.resignLocked("watch lost: " + ev.path)
			c.resyncLocked()
			return
		}
	}
	var err error
	switch ev.kind {
	case evController:
		err = c.electAndWatchLocked()
	case evBrokers:
		err = c.onBrokerChange()
	case evTopics:
		err = c.onTopicsChange()
	case evTopic:
		err = c.onTopicChange(metastore.Base(ev.path))
	case evDeletes:
		err = c.onDeleteTopics()
	case evIsr:
		err = c.onIsrChange()
	case evConfigChanges:
		err = c.onConfigChanges()
	case evFeature:
		err = c.onFeatureChange()
	case evExpired:
		c.resignLocked("session expired")
		c.armed = map[string]uint64{} // every watch of the old session is gone
	case evResync:
		c.resyncLocked()
	default:
		err = c.handleAdminEvent(ev) // reassignment and elections (reassign.go, elect.go)
	}
	if err != nil {
		c.log.Warn("controller event failed, retrying", zap.Int("event", int(ev.kind)), zap.Error(err))
		c.after(time.Second, event{kind: ev.kind, path: ev.path})
	}
}

// resignLocked stops acting as controller (Kafka's onControllerResignation):
// no more requests to peers; the store fences any late writes by epoch.
func (c *Controller) resignLocked(why string) {
	if !c.active {
		return
	}
	c.log.Warn("resigning as controller", zap.String("reason", why), zap.Int32("controller.epoch", c.epoch))
	c.setActive(false)
	for _, id := range c.liveBrokers() {
		if id != c.cfg.BrokerID {
			c.peers.RemoveBroker(id)
		}
	}
	c.liveInfo = map[int32]zkmeta.BrokerInfo{}
	c.shuttingDown = map[int32]bool{}
	c.topics = map[string]*topicState{}
	c.reassigning = nil
	for p := range c.armed {
		if p != zkmeta.ControllerPath && p != zkmeta.ConfigChangesPath && p != zkmeta.FeaturePath { // every broker watches these
			delete(c.armed, p)
		}
	}
}

// resyncLocked re-creates this broker's registration and re-runs the
// election on a new session; on failure it retries in a second.
func (c *Controller) resyncLocked() {
	c.armed = map[string]uint64{}
	err := c.meta.Create(zkmeta.BrokerPath(c.cfg.BrokerID), c.self.Encode(), true)
	if err != nil && !errors.Is(err, metastore.ErrNodeExists) {
		c.log.Warn("re-registering broker failed, retrying", zap.Error(err))
		c.after(time.Second, event{kind: evResync})
		return
	}
	c.log.Info("broker registered on new session", zap.Int32("broker.id", c.cfg.BrokerID))
	if err := c.electAndWatchLocked(); err != nil {
		c.log.Warn("election after new session failed, retrying", zap.Error(err))
		c.after(time.Second, event{kind: evResync})
	}
}

// electAndWatchLocked tries to win /controller; the winner takes over the
// cluster (onControllerFailover), everyone re-arms the /controller watch.
func (c *Controller) electAndWatchLocked() error {
	c.watchFeatureLocked() // before the election, as Kafka starts its listener before its controller
	if !c.active {
		if err := c.elect(); err != nil {
			return err
		}
		if c.active {
			if err := c.onControllerFailover(); err != nil {
				c.resignLocked("failover failed: " + err.Error())
				c.meta.Delete(zkmeta.ControllerPath, metastore.AnyVersion)
				return err
			}
		}
	} else if data, _, err := c.meta.Get(zkmeta.ControllerPath); err == nil {
		if id, derr := zkmeta.DecodeController(data); derr == nil && id != c.cfg.BrokerID {
			c.resignLocked("another broker holds /controller")
		}
	} else if errors.Is(err, metastore.ErrNoNode) {
		c.resignLocked("/controller deleted")
		return c.electAndWatchLocked()
	}
	if !c.isArmed(zkmeta.ControllerPath) {
		exists, w, err := c.meta.ExistsW(zkmeta.ControllerPath)
		if err != nil {
			return err
		}
		c.forward(evController, zkmeta.ControllerPath, w)
		if !exists && !c.active {
			c.post(event{kind: evController}) // vanished between elect and watch
		}
	}
	if !c.active {
		c.publishStandby()
	}
	c.watchConfigChangesLocked() // topic config changes reach every broker
	return nil
}

// publishStandby refreshes the controller id in this broker's cache
// (the rest of it comes from the controller's UpdateMetadata).
func (c *Controller) publishStandby() {
	cur := c.cache.Load()
	if len(cur.Brokers) == 0 {
		c.cache.Publish(c.buildSnapshot())
		return
	}
	s := *cur
	s.ControllerID = -1
	if data, _, err := c.meta.Get(zkmeta.ControllerPath); err == nil {
		if id, err := zkmeta.DecodeController(data); err == nil {
			s.ControllerID = id
		}
	}
	c.cache.Publish(&s)
}

// onControllerFailover is what a newly elected controller does (Kafka's
// KafkaController.onControllerFailover): enable /feature, watch the brokers, topics,
// deletions and ISR notifications, load every topic, elect leaders, send
// UpdateMetadata and LeaderAndIsr to every live broker, and resume
// deletions.
func (c *Controller) onControllerFailover() error {
	if err := c.enableFeatureVersioning(); err != nil { // features.go
		return err
	}
	c.topics = map[string]*topicState{}
	c.liveInfo = map[int32]zkmeta.BrokerInfo{}
	if err := c.readBrokers(); err != nil {
		return err
	}
	if err := c.loadTopics(); err != nil {
		return err
	}
	for _, n := range c.sortedTopics() {
		if err := c.watchTopic(n); err != nil {
			return err
		}
	}
	for _, w := range []struct {
		kind eventKind
		path string
	}{{evTopics, zkmeta.TopicsPath}, {evDeletes, zkmeta.DeleteTopicsPath}, {evIsr, zkmeta.IsrChangeNotificationPath}} {
		_, ch, err := c.meta.ChildrenW(w.path)
		if err != nil {
			return err
		}
		c.forward(w.kind, w.path, ch)
	}
	c.publish() // UpdateMetadata first, so every broker knows every endpoint
	c.onlineAll()
	c.publish()
	c.onFailoverAdmin() // resume reassignments, watch /admin/reassign_partitions and /admin/preferred_replica_election
	if err := c.onIsrChange(); err != nil {
		c.log.Warn("reading pending ISR change notifications", zap.Error(err))
	}
	c.log.Info("controller failover complete", zap.Int32("controller.epoch", c.epoch),
		zap.Int("topics", len(c.topics)), zap.Any("live.brokers", c.liveBrokers()))
	return nil
}

// readBrokers reads /brokers/ids (arming its watch) into liveInfo and
// opens or closes peer channels; it returns the ids that appeared and
// disappeared.
func (c *Controller) readBrokersDiff() (added, removed []int32, err error) {
	var now map[int32]zkmeta.BrokerInfo
	var w <-chan metastore.Event
	c.offActor(func() { now, w, err = readBrokerRegistrations(c.store, c.log) })
	if w != nil {
		c.forward(evBrokers, zkmeta.BrokerIDsPath, w)
	}
	if err != nil {
		return nil, nil, err
	}
	for id, info := range now {
		old, ok := c.liveInfo[id]
		if !ok || old.Timestamp != info.Timestamp {
			added = append(added, id) // new, or re-registered (restarted within the watch window)
		}
	}
	for id := range c.liveInfo {
		if _, ok := now[id]; !ok {
			removed = append(removed, id)
		}
	}
	sort.Slice(added, func(i, j int) bool { return added[i] < added[j] })
	sort.Slice(removed, func(i, j int) bool { return removed[i] < removed[j] })
	c.liveInfo = now
	for _, id := range removed {
		delete(c.shuttingDown, id)
		c.peers.RemoveBroker(id)
	}
	for _, id := range added {
		delete(c.shuttingDown, id)
		if id != c.cfg.BrokerID {
			if addr, ok := c.controlPlaneAddr(now[id]); ok {
				c.peers.AddBroker(id, addr)
			}
		}
	}
	return added, removed, nil
}

// readBrokerRegistrations lists /brokers/ids (arming its watch, w) and
// reads every registration, in one effect. A registration gone between
// the two is skipped (the watch says so), an unreadable one logged and
// skipped. Off the actor: it touches no controller state.
func readBrokerRegistrations(store metastore.Store, log *zap.Logger) (map[int32]zkmeta.BrokerInfo, <-chan metastore.Event, error) {
	kids, w, err := store.ChildrenW(zkmeta.BrokerIDsPath)
	if err != nil {
		return nil, nil, err
	}
	now := map[int32]zkmeta.BrokerInfo{}
	for _, k := range kids {
		id64, err := strconv.ParseInt(k, 10, 32)
		if err != nil {
			continue
		}
		id := int32(id64)
		data, _, err := store.Get(zkmeta.BrokerPath(id))
		if errors.Is(err, metastore.ErrNoNode) {
			continue // gone again; the next watch event says so
		}
		if err != nil {
			return nil, w, err
		}
		info, err := zkmeta.DecodeBrokerInfo(id, data)
		if err != nil {
			log.Error("unreadable broker registration", zap.Int32("broker", id), zap.Error(err))
			continue
		}
		now[id] = info
	}
	return now, w, nil
}

func (c *Controller) readBrokers() error {
	_, _, err := c.readBrokersDiff()
	return err
}

// controlPlaneAddr is the "host:port" the controller channel connects to:
// a broker's control.plane.listener.name endpoint (KIP-291), else its
// inter-broker listener's, else its first endpoint.
func (c *Controller) controlPlaneAddr(info zkmeta.BrokerInfo) (string, bool) {
	listener := c.cfg.Security.ControlPlaneListener
	if listener == "" {
		listener = c.cfg.Security.InterBrokerListener
	}
	host, port, ok := interBrokerEndpoint(info, listener)
	if !ok {
		return "", false
	}
	return host + ":" + strconv.Itoa(int(port)), true
}

func interBrokerEndpoint(info zkmeta.BrokerInfo, listener string) (string, int32, bool) {
	for _, e := range info.Endpoints {
		if listener == "" || e.ListenerName == listener {
			return e.Host, e.Port, true
		}
	}
	if len(info.Endpoints) > 0 {
		e := info.Endpoints[0]
		return e.Host, e.Port, true
	}
	return "", 0, false
}

// onBrokerChange reacts to brokers registering or vanishing (Kafka's
// onBrokerStartup / onBrokerFailure): elect new leaders for partitions
// whose leader died and drop dead replicas from ISRs; a new broker first
// gets the full metadata, then LeaderAndIsr for every partition it hosts.
func (c *Controller) onBrokerChange() error {
	if !c.active {
		return nil
	}
	added, removed, err := c.readBrokersDiff()
	if err != nil {
		return err
	}
	if len(added) == 0 && len(removed) == 0 {
		return nil
	}
	c.log.Info("broker change", zap.Any("added", added), zap.Any("removed", removed), zap.Any("live", c.liveBrokers()))
	newSet := map[int32]bool{}
	for _, id := range added {
		newSet[id] = true
	}
	if len(added) > 0 {
		s := c.buildSnapshot()
		for _, id := range added {
			if id != c.cfg.BrokerID {
				c.sendUpdateMetadata(id, s)
			}
		}
	}
	states, wrote, err := c.electBatch(c.allPartitions())
	if err != nil {
		c.log.Error("leader election failed", zap.Error(err))
	}
	// One LeaderAndIsr per broker: the changed partitions to all their
	// live replicas, plus the unchanged ones a returning broker hosts.
	var changed, hostedByNew []partition.LeaderAndIsr
	for _, st := range states {
		if wrote[st.TopicPartition] {
			changed = append(changed, st)
		} else if hostsAny(st.Replicas, newSet) {
			hostedByNew = append(hostedByNew, st)
		}
	}
	c.sendLeaderAndIsrPlan(mergeLeaderAndIsr(planLeaderAndIsr(changed, c.deliverTo(nil)), planLeaderAndIsr(hostedByNew, c.deliverTo(newSet))))
	c.publish()
	return nil
}

func hostsAny(replicas []int32, set map[int32]bool) bool {
	for _, r := range replicas {
		if set[r] {
			return true
		}
	}
	return false
}

// watchTopic arms the data watch on /brokers/topics/<t> (partition
// additions by `topics --alter` through ZooKeeper).
func (c *Controller) watchTopic(name string) error {
	path := zkmeta.TopicPath(name)
	if c.isArmed(path) {
		return nil
	}
	ok, w, err := c.meta.ExistsW(path)
	if err != nil {
		return err
	}
	c.forward(evTopic, path, w)
	if !ok {
		delete(c.topics, name)
	}
	return nil
}

// onTopicsChange creates the topics that appeared under /brokers/topics
// (written by `topics --zookeeper --create`, auto-creation on another
// broker, or another controller's CreateTopics): elect leaders, send
// LeaderAndIsr to their replicas and UpdateMetadata to everyone.
func (c *Controller) onTopicsChange() error {
	if !c.active {
		return nil
	}
	names, w, err := c.meta.ChildrenW(zkmeta.TopicsPath)
	if err != nil {
		return err
	}
	c.forward(evTopics, zkmeta.TopicsPath, w)
	seen := map[string]bool{}
	changed := false
	var states []partition.LeaderAndIsr
	for _, n := range names {
		seen[n] = true
		if _, ok := c.topics[n]; ok {
			continue
		}
		t, err := c.loadTopic(n)
		if errors.Is(err, metastore.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		c.topics[n] = t
		if err := c.watchTopic(n); err != nil {
			return err
		}
		ps, err := c.electPartitions(t, t.sortedPartitions())
		if err != nil {
			c.log.Error("new topic: partition state write failed", zap.String("topic", n), zap.Error(err))
		}
		states = append(states, ps...)
		changed = true
		c.log.Info("new topic", zap.String("topic", n), zap.Int("partitions", len(t.assignment)))
	}
	for n := range c.topics {
		if !seen[n] {
			delete(c.topics, n)
			changed = true
		}
	}
	if changed {
		c.publish()
		c.sendLeaderAndIsr(states, nil)
		c.publish()
	}
	return nil
}

// onTopicChange handles a change of /brokers/topics/<t>: new partitions
// get leaders; a deleted node drops the topic.
func (c *Controller) onTopicChange(name string) error {
	if !c.active {
		return nil
	}
	if err := c.watchTopic(name); err != nil {
		return err
	}
	t, ok := c.topics[name]
	if !ok {
		return nil
	}
	data, _, err := c.meta.Get(zkmeta.TopicPath(name))
	if errors.Is(err, metastore.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	a, err := zkmeta.DecodeTopicAssignment(name, data)
	if err != nil {
		return err
	}
	var added []int32
	for p, rs := range a.Partitions {
		if _, ok := t.assignment[p]; !ok {
			t.assignment[p] = rs
			added = append(added, p)
		}
	}
	if len(added) == 0 {
		return nil
	}
	sort.Slice(added, func(i, j int) bool { return added[i] < added[j] })
	states, err := c.electPartitions(t, added)
	c.publish()
	c.sendLeaderAndIsr(states, nil)
	c.publish()
	c.log.Info("partitions added", zap.String("topic", name), zap.Any("partitions", added))
	return err
}

// onDeleteTopics handles /admin/delete_topics markers (written by
// `topics --delete` through ZooKeeper): with delete.topic.enable the
// topics are deleted, otherwise the markers are removed, as Kafka does.
func (c *Controller) onDeleteTopics() error {
	if !c.active {
		return nil
	}
	names, w, err := c.meta.ChildrenW(zkmeta.DeleteTopicsPath)
	if err != nil {
		return err
	}
	c.forward(evDeletes, zkmeta.DeleteTopicsPath, w)
	changed := false
	for _, n := range names {
		t, ok := c.topics[n]
		if !ok || !c.cfg.DeleteTopicEnable {
			if !ok {
				c.log.Info("removing deletion marker of unknown topic", zap.String("topic", n))
			} else {
				c.log.Warn("delete.topic.enable is false: ignoring deletion request", zap.String("topic", n))
			}
			if err := c.meta.Delete(zkmeta.DeleteTopicPath(n), metastore.AnyVersion); err != nil && !errors.Is(err, metastore.ErrNoNode) {
				return err
			}
			continue
		}
		if err := c.deleteTopicLocked(t); err != nil {
			return err
		}
		changed = true
	}
	if changed {
		c.publish()
	}
	return nil
}

// onIsrChange reads and removes ISR change notifications written by
// partition leaders (AlterIsr), refreshes those partitions' states from
// their znodes and sends UpdateMetadata.
func (c *Controller) onIsrChange() error {
	if !c.active {
		return nil
	}
	kids, w, err := c.meta.ChildrenW(zkmeta.IsrChangeNotificationPath)
	if err != nil {
		return err
	}
	c.forward(evIsr, zkmeta.IsrChangeNotificationPath, w)
	if len(kids) == 0 {
		return nil
	}
	var changedTPs []partition.TopicPartition
	for _, k := range kids {
		path := metastore.Join(zkmeta.IsrChangeNotificationPath, k)
		data, _, err := c.meta.Get(path)
		if err == nil {
			parts, derr := zkmeta.DecodeIsrChange(data)
			if derr != nil {
				c.log.Warn("bad ISR change notification", zap.String("path", path), zap.Error(derr))
			}
			for _, p := range parts {
				if t, ok := c.topics[p.Topic]; ok {
					if err := c.reloadState(t, p.Partition); err != nil {
						return err
					}
					changedTPs = append(changedTPs, partition.TopicPartition{Topic: p.Topic, Partition: p.Partition})
				}
			}
		} else if !errors.Is(err, metastore.ErrNoNode) {
			return err
		}
		if err := c.meta.Delete(path, metastore.AnyVersion); err != nil && !errors.Is(err, metastore.ErrNoNode) {
			return err
		}
	}
	c.onIsrChangeReassign(changedTPs) // reassignments waiting for their targets to join the ISR
	c.publish()
	return nil
}

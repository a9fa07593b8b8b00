package controller

import (
	"errors"
	"fmt"
	"sync"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// Reading topics back from the metadata store: at a failover (loadTopics)
// and when a topic changes under the controller.

// loadTopic reads topic name's znodes (readTopic) in one effect: the
// assignment, config and every partition state travel back to the event
// together instead of one hand-over per znode.
func (c *Controller) loadTopic(name string) (t *topicState, err error) {
	c.offActor(func() { t, err = readTopic(c.store, name) })
	return t, err
}

// readTopicsParallel is how many topics a failover reads at once: the
// ZooKeeper client pipelines the requests of concurrent callers on its one
// connection, so a controller taking over 10,000 partitions waits for a
// few round trips' worth of latency per batch, not one per znode.
const readTopicsParallel = 16

// readTopics is readTopic for every name, readTopicsParallel at a time,
// in one effect; results in the order of names, or the first error.
func readTopics(store metastore.Store, names []string) ([]*topicState, error) {
	out := make([]*topicState, len(names))
	errs := make([]error, len(names))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(readTopicsParallel, len(names)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = readTopic(store, names[i])
			}
		}()
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readTopic reads a topic's assignment (assigning a topic id when it has
// none, as Kafka's controller does on failover), config overrides and
// partition states into a new topicState. Off the actor: it touches no
// controller state.
func readTopic(store metastore.Store, name string) (*topicState, error) {
	data, version, err := store.Get(zkmeta.TopicPath(name))
	if err != nil {
		return nil, fmt.Errorf("controller: read topic %s: %w", name, err)
	}
	a, err := zkmeta.DecodeTopicAssignment(name, data)
	if err != nil {
		return nil, err
	}
	t := &topicState{name: name, id: a.TopicID, assignment: a.Partitions, state: map[int32]*partState{}}
	if t.id == ([16]byte{}) {
		// Written before topic ids (Kafka < 2.8): assign one, as Kafka's
		// controller does on failover.
		a.TopicID = zkmeta.RandomUUID()
		if _, err := store.Set(zkmeta.TopicPath(name), a.Encode(), version); err != nil {
			return nil, fmt.Errorf("controller: add topic id to %s: %w", name, err)
		}
		t.id = a.TopicID
	}
	cfgData, _, err := store.Get(zkmeta.TopicConfigPath(name))
	switch {
	case errors.Is(err, metastore.ErrNoNode):
		t.overrides = map[string]string{}
	case err != nil:
		return nil, fmt.Errorf("controller: read config of %s: %w", name, err)
	default:
		if t.overrides, err = zkmeta.DecodeConfig(cfgData); err != nil {
			return nil, err
		}
	}
	for p := range t.assignment {
		data, v, err := store.Get(zkmeta.PartitionStatePath(name, p))
		if errors.Is(err, metastore.ErrNoNode) {
			continue // never written (crash during create): onlineAll creates it
		}
		if err != nil {
			return nil, fmt.Errorf("controller: read state of %s-%d: %w", name, p, err)
		}
		s, err := zkmeta.DecodePartitionState(data)
		if err != nil {
			return nil, err
		}
		t.state[p] = &partState{PartitionLeadership: PartitionLeadership{Leader: s.Leader, LeaderEpoch: s.LeaderEpoch, ISR: s.ISR}, zkVersion: v}
	}
	return t, nil
}

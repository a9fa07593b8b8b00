package broker

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/config"
	"gregor/replication/controller"
	"gregor/replication/metadata"
)

func TestDeletedTopics(t *testing.T) {
	snap := func(brokers bool, topics ...string) *metadata.Snapshot {
		s := &metadata.Snapshot{Topics: map[string]*metadata.Topic{}}
		if brokers {
			s.Brokers = []metadata.Broker{{ID: 1}}
		}
		for _, t := range topics { // "name" or "name@id"
			name, id, _ := strings.Cut(t, "@")
			var tid [16]byte
			copy(tid[:], id)
			s.Topics[name] = &metadata.Topic{Name: name, ID: tid}
		}
		return s
	}
	for _, c := range []struct {
		name       string
		prev, next *metadata.Snapshot
		want       string
	}{
		{"first snapshot", metadata.Empty, snap(true, "a", "b"), ""},
		{"one deleted", snap(true, "a", "b", "c"), snap(true, "b"), "a,c"},
		{"created", snap(true, "a"), snap(true, "a", "b"), ""},
		{"recreated under a new id", snap(true, "a@1", "b@1"), snap(true, "a@2", "b@1"), "a"},
		{"id unknown on one side", snap(true, "a"), snap(true, "a@2"), ""},
		{"no live brokers: not a cluster view", snap(true, "a"), snap(false), ""},
	} {
		got := deletedTopics(c.prev, c.next)
		sort.Strings(got)
		if s := strings.Join(got, ","); s != c.want {
			t.Errorf("%s: deleted %q, want %q", c.name, s, c.want)
		}
	}
}

// fakeTopics records CreateTopics calls.
type fakeTopics struct {
	snap    *metadata.Snapshot
	created []controller.NewTopic
}

func (f *fakeTopics) Snapshot() *metadata.Snapshot { return f.snap }
func (f *fakeTopics) CreateTopics(ts []controller.NewTopic, _ bool) []controller.CreatedTopic {
	f.created = append(f.created, ts...)
	out := make([]controller.CreatedTopic, len(ts))
	for i, t := range ts {
		out[i].Name = t.Name
	}
	return out
}

// TestEnsureWaitsForClusterMetadata: a broker whose cache does not list
// it yet (no UpdateMetadata so far) must not create __consumer_offsets
// with a replication factor capped by the brokers it happens to know (it
// made a factor-1 topic on a 3-broker cluster); it answers
// COORDINATOR_NOT_AVAILABLE and creates the topic with the configured
// factor once the cache knows the cluster.
func TestEnsureWaitsForClusterMetadata(t *testing.T) {
	cfg := config.Defaults()
	cfg.BrokerID, cfg.OffsetsTopicReplicationFactor, cfg.OffsetsTopicNumPartitions = 2, 3, 3
	f := &fakeTopics{snap: metadata.Empty}
	o := newOffsetsTopic(cfg)
	o.topics = f
	if err := o.Ensure(context.Background()); !errors.Is(err, kerr.CoordinatorNotAvailable) || len(f.created) != 0 {
		t.Fatalf("empty cache: %v, created %+v; want COORDINATOR_NOT_AVAILABLE and nothing created", err, f.created)
	}
	f.snap = &metadata.Snapshot{Brokers: []metadata.Broker{{ID: 1}, {ID: 3}}, Topics: map[string]*metadata.Topic{}}
	if err := o.Ensure(context.Background()); !errors.Is(err, kerr.CoordinatorNotAvailable) || len(f.created) != 0 {
		t.Fatalf("cache without this broker: %v, created %+v", err, f.created)
	}
	f.snap = &metadata.Snapshot{Brokers: []metadata.Broker{{ID: 1}, {ID: 2}, {ID: 3}}, Topics: map[string]*metadata.Topic{}}
	if err := o.Ensure(context.Background()); err != nil || len(f.created) != 1 || f.created[0].ReplicationFactor != 3 || f.created[0].NumPartitions != 3 {
		t.Fatalf("full cache: %v, created %+v; want one topic with factor 3", err, f.created)
	}
}

// TestEnsureNeedsReplicationFactorLiveBrokers: with ZooKeeper (a cluster
// that more brokers can join) __consumer_offsets is not created while
// fewer brokers are alive than offsets.topic.replication.factor — Kafka
// answers COORDINATOR_NOT_AVAILABLE (clients retry) rather than create an
// under-replicated topic — and is created with the full factor once they
// are. In embedded single-node mode the cluster can never grow, so the
// factor is capped at the one broker and a zero-config node serves groups.
func TestEnsureNeedsReplicationFactorLiveBrokers(t *testing.T) {
	cfg := config.Defaults()
	cfg.BrokerID, cfg.OffsetsTopicReplicationFactor, cfg.OffsetsTopicNumPartitions = 1, 3, 5
	cfg.ZookeeperConnect = "127.0.0.1:2181/gregor"
	f := &fakeTopics{snap: &metadata.Snapshot{Brokers: []metadata.Broker{{ID: 1}}, Topics: map[string]*metadata.Topic{}}}
	o := newOffsetsTopic(cfg)
	o.topics = f
	for i := 0; i < 2; i++ { // refused every time, not only the first
		if err := o.Ensure(context.Background()); !errors.Is(err, kerr.CoordinatorNotAvailable) || len(f.created) != 0 {
			t.Fatalf("1 live broker, factor 3: %v, created %+v; want COORDINATOR_NOT_AVAILABLE and nothing created", err, f.created)
		}
	}
	f.snap = &metadata.Snapshot{Brokers: []metadata.Broker{{ID: 1}, {ID: 2}}, Topics: map[string]*metadata.Topic{}}
	if err := o.Ensure(context.Background()); !errors.Is(err, kerr.CoordinatorNotAvailable) || len(f.created) != 0 {
		t.Fatalf("2 live brokers, factor 3: %v, created %+v", err, f.created)
	}
	f.snap = &metadata.Snapshot{Brokers: []metadata.Broker{{ID: 1}, {ID: 2}, {ID: 3}}, Topics: map[string]*metadata.Topic{}}
	if err := o.Ensure(context.Background()); err != nil || len(f.created) != 1 || f.created[0].ReplicationFactor != 3 ||
		f.created[0].NumPartitions != 5 || f.created[0].Configs["cleanup.policy"] != "compact" {
		t.Fatalf("3 live brokers: %v, created %+v; want one compacted topic with factor 3", err, f.created)
	}

	// Embedded metadata: the only broker there will ever be.
	single := config.Defaults() // offsets.topic.replication.factor unset: 3
	single.BrokerID = 0
	f = &fakeTopics{snap: &metadata.Snapshot{Brokers: []metadata.Broker{{ID: 0}}, Topics: map[string]*metadata.Topic{}}}
	o = newOffsetsTopic(single)
	o.topics = f
	if err := o.Ensure(context.Background()); err != nil || len(f.created) != 1 || f.created[0].ReplicationFactor != 1 {
		t.Fatalf("embedded single node, default factor %d: %v, created %+v; want factor 1", single.OffsetsTopicReplicationFactor, err, f.created)
	}
}

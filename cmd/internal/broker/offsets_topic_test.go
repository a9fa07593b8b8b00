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
	o := &offsetsTopic{cfg: cfg, topics: f}
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

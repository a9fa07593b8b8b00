package broker

import (
	"sort"
	"strings"
	"testing"

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

package zkmeta

import (
	"errors"
	"testing"

	"gregor/replication/metastore"
)

// TestConsumerOffsetZnodes: the paths are Kafka's ZkUtils layout; a write
// creates the parents and stores a decimal string, a second write
// replaces it, a missing znode reads as not found, garbage as
// ErrBadConsumerOffset.
func TestConsumerOffsetZnodes(t *testing.T) {
	if got := ConsumerOffsetPath("group1", "topic1", 3); got != "/consumers/group1/offsets/topic1/3" {
		t.Fatalf("offset path %s", got)
	}
	if got := ConsumerOwnerPath("group1", "topic1", 0); got != "/consumers/group1/owners/topic1/0" {
		t.Fatalf("owner path %s", got)
	}
	if got := ConsumerIDsPath("group1"); got != "/consumers/group1/ids" {
		t.Fatalf("ids path %s", got)
	}
	s := metastore.NewMemory().Open()
	defer s.Close()
	if _, ok, err := ReadConsumerOffset(s, "g", "t", 0); ok || err != nil {
		t.Fatalf("missing: %v %v", ok, err)
	}
	for _, off := range []int64{17, 4} {
		if err := WriteConsumerOffset(s, "g", "t", 0, off); err != nil {
			t.Fatal(err)
		}
		got, ok, err := ReadConsumerOffset(s, "g", "t", 0)
		if !ok || err != nil || got != off {
			t.Fatalf("read back %d %v %v, want %d", got, ok, err, off)
		}
	}
	if data, _, _ := s.Get("/consumers/g/offsets/t/0"); string(data) != "4" {
		t.Fatalf("znode data %q", data)
	}
	if _, err := s.Set("/consumers/g/offsets/t/0", []byte("x1"), metastore.AnyVersion); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadConsumerOffset(s, "g", "t", 0); !errors.Is(err, ErrBadConsumerOffset) {
		t.Fatalf("garbage: %v", err)
	}
	for g, ok := range map[string]bool{"group1": true, "": false, "a/b": false, ".": false, "..": false, "a.b": true} {
		if ValidConsumerGroup(g) != ok {
			t.Errorf("ValidConsumerGroup(%q) = %v", g, !ok)
		}
	}
}

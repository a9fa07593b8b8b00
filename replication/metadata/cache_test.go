package metadata

import (
	"sync"
	"testing"
)

func TestCacheLoadPublish(t *testing.T) {
	var c Cache
	if s := c.Load(); s != Empty || s.ControllerID != -1 {
		t.Fatalf("initial snapshot %+v", s)
	}
	topic := &Topic{Name: "t", Partitions: []Partition{{Partition: 0, Leader: 1}, {Partition: 1, Leader: 2}}}
	s := &Snapshot{ControllerID: 1, Brokers: []Broker{{ID: 1}, {ID: 3}},
		Topics: map[string]*Topic{"t": topic, "a": {Name: "a"}}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); c.Publish(s) }()
	wg.Wait()
	got := c.Load()
	if got != s {
		t.Fatal("published snapshot not loaded")
	}
	if b, ok := got.Broker(3); !ok || b.ID != 3 {
		t.Fatal("Broker(3)")
	}
	if _, ok := got.Broker(2); ok {
		t.Fatal("Broker(2) found")
	}
	if p, ok := got.Partition("t", 1); !ok || p.Leader != 2 {
		t.Fatal("Partition(t,1)")
	}
	if _, ok := got.Partition("t", 2); ok {
		t.Fatal("Partition(t,2) found")
	}
	if n := got.TopicNames(); len(n) != 2 || n[0] != "a" {
		t.Fatalf("names %v", n)
	}
}

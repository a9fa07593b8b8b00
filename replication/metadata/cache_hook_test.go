package metadata

import "testing"

func TestOnPublishSeesPreviousAndNext(t *testing.T) {
	var c Cache
	a := &Snapshot{ClusterID: "a", Topics: map[string]*Topic{}}
	b := &Snapshot{ClusterID: "b", Topics: map[string]*Topic{}}
	c.Publish(a) // no listener yet
	type pair struct{ prev, next *Snapshot }
	var seen []pair
	c.OnPublish(func(prev, next *Snapshot) {
		if c.Load() != next {
			t.Error("listener ran before the snapshot was visible")
		}
		seen = append(seen, pair{prev, next})
	})
	c.Publish(b)
	if len(seen) != 1 || seen[0].prev != a || seen[0].next != b {
		t.Fatalf("seen %+v", seen)
	}
	c.OnPublish(nil)
	c.Publish(a)
	if len(seen) != 1 {
		t.Fatal("listener called after removal")
	}
	var fresh Cache
	fresh.OnPublish(func(prev, next *Snapshot) { seen = append(seen, pair{prev, next}) })
	fresh.Publish(a)
	if seen[1].prev != Empty {
		t.Fatalf("first publish: prev %+v, want Empty", seen[1].prev)
	}
}

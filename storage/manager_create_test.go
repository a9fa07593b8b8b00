package storage

import (
	"sync"
	"testing"
)

// TestGetOrCreateConcurrent: creations run outside the manager's lock;
// callers asking for one partition at once all get the same log, and
// distinct partitions are all created once.
func TestGetOrCreateConcurrent(t *testing.T) {
	m := newManager(t, t.TempDir())
	const parts, callers = 50, 4
	got := make([][callers]*Log, parts)
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		for c := 0; c < callers; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := m.GetOrCreate(TopicPartition{"c", int32(p)}, testConfig())
				if err != nil {
					t.Error(err)
					return
				}
				got[p][c] = l
			}()
		}
	}
	wg.Wait()
	for p := range got {
		for c := 1; c < callers; c++ {
			if got[p][c] != got[p][0] {
				t.Fatalf("partition %d: callers got different logs", p)
			}
		}
	}
	if n := len(m.All()); n != parts {
		t.Fatalf("%d logs, want %d", n, parts)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.GetOrCreate(TopicPartition{"c", 99}, testConfig()); err != ErrLogClosed {
		t.Fatalf("after Close: %v, want ErrLogClosed", err)
	}
}

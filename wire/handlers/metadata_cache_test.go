package handlers

import (
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/metadata"
	"gregor/wire"
)

// swappableTopics serves whichever snapshot was set last.
type swappableTopics struct {
	TopicSource
	mu   sync.Mutex
	snap *metadata.Snapshot
}

func (s *swappableTopics) Snapshot() *metadata.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap
}

// TestMetadataListingFollowsSnapshot: the shared full listing is rebuilt
// when the snapshot changes (a new topic, a new leader) and concurrent
// requests on one snapshot all get it whole.
func TestMetadataListingFollowsSnapshot(t *testing.T) {
	src := &swappableTopics{snap: bigSnapshot(3, 2)}
	br := &Broker{Topics: src}
	full := func() *kmsg.MetadataResponse {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		resp, ok := handleMetadata(br, &wire.RequestContext{Key: 3, Version: 12}, req).TryResolve()
		if !ok {
			t.Fatal("not answered at once")
		}
		return resp.Msg.(*kmsg.MetadataResponse)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if n := len(full().Topics); n != 3 {
				t.Errorf("concurrent full listing: %d topics", n)
			}
		}()
	}
	wg.Wait()

	next := bigSnapshot(4, 2)
	next.Topics["topic-000"].Partitions[1].Leader = 2
	src.mu.Lock()
	src.snap = next
	src.mu.Unlock()
	m := full()
	if len(m.Topics) != 4 || *m.Topics[3].Topic != "topic-003" || m.Topics[0].Partitions[1].Leader != 2 {
		t.Fatalf("after the snapshot changed: %d topics, first %+v", len(m.Topics), m.Topics[0].Partitions)
	}
}

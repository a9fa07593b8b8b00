package handlers

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/metadata"
)

// A full Metadata listing (every topic) of 20,000 partitions is 20,000
// partition entries: building them per request cost ~4 ms and 6.5 MB of
// garbage (BenchmarkMetadataFull20k), and clients ask for it at every
// metadata refresh. The entries only change when the snapshot does, so
// the listing is built once per snapshot, at the first full request on it,
// and shared by every response on that snapshot: the entries and their
// slices are never written after the build (a response that sets
// authorized operations copies the entry value first).

// metadataListing is every topic's Metadata entry for one snapshot,
// sorted by name.
type metadataListing struct {
	snap   *metadata.Snapshot
	once   sync.Once
	topics []kmsg.MetadataResponseTopic
}

// metadataListing returns the full listing of snap, building it once.
// Concurrent first requests on a new snapshot may each build one; the
// last stored wins, and both are correct.
func (b *Broker) metadataListing(snap *metadata.Snapshot) *metadataListing {
	l := b.metadataAll.Load()
	if l == nil || l.snap != snap {
		l = &metadataListing{snap: snap}
		b.metadataAll.Store(l)
	}
	l.once.Do(func() {
		names := snap.TopicNames()
		l.topics = make([]kmsg.MetadataResponseTopic, 0, len(names))
		for _, name := range names {
			l.topics = append(l.topics, metadataTopic(snap.Topics[name]))
		}
	})
	return l
}

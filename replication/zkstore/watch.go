package zkstore

import (
	"sort"

	"github.com/go-zookeeper/zk"

	"gregor/replication/metastore"
)

// relay turns a go-zookeeper watch channel into a metastore one: exactly
// one event, then closed. The goroutine ends when ZooKeeper fires the
// watch (a change, or EventNotWatching on session expiry) or when the store
// closes (go-zookeeper does not fire pending watches on Close, so the relay
// delivers EventNotWatching itself).
func (s *Store) relay(p string, in <-chan zk.Event) <-chan metastore.Event {
	out := make(chan metastore.Event, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(out)
		select {
		case ev, ok := <-in:
			if !ok {
				out <- metastore.Event{Type: metastore.EventNotWatching, Path: p}
				return
			}
			out <- metastore.Event{Type: eventType(ev.Type), Path: p}
		case <-s.closing:
			out <- metastore.Event{Type: metastore.EventNotWatching, Path: p}
		}
	}()
	return out
}

func eventType(t zk.EventType) metastore.EventType {
	switch t {
	case zk.EventNodeCreated:
		return metastore.EventNodeCreated
	case zk.EventNodeDeleted:
		return metastore.EventNodeDeleted
	case zk.EventNodeDataChanged:
		return metastore.EventNodeDataChanged
	case zk.EventNodeChildrenChanged:
		return metastore.EventNodeChildrenChanged
	}
	return metastore.EventNotWatching
}

func sortStrings(s []string) { sort.Strings(s) }

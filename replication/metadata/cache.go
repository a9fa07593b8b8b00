// Package metadata is the broker's metadata cache: an immutable snapshot of
// the live brokers and every topic's partitions (leader, leader epoch, ISR,
// replicas), published by the controller after each change (Kafka's
// UpdateMetadata) and read lock-free by the request handlers.
package metadata

import (
	"sort"
	"sync/atomic"
)

// Broker is one live broker as clients see it (Metadata brokers array).
type Broker struct {
	ID   int32
	Host string // of the first advertised listener
	Port int32
	Rack *string // nil = no broker.rack
	// Listeners maps each advertised listener name ("PLAINTEXT") to its
	// address; Metadata answers with the listener the client connected to.
	Listeners map[string]HostPort
}

// HostPort is one advertised listener address.
type HostPort struct {
	Host string
	Port int32
}

// Endpoint returns the broker's address on listener (or its first one).
func (b Broker) Endpoint(listener string) (string, int32) {
	if hp, ok := b.Listeners[listener]; ok {
		return hp.Host, hp.Port
	}
	return b.Host, b.Port
}

// Partition is one partition's state.
type Partition struct {
	Partition       int32
	Leader          int32 // -1 = no leader (LEADER_NOT_AVAILABLE)
	LeaderEpoch     int32
	ISR             []int32
	Replicas        []int32 // assigned replicas, preferred leader first
	OfflineReplicas []int32 // assigned replicas whose broker is not live
}

// Topic is one topic's state. Partitions is indexed by partition id.
type Topic struct {
	Name       string
	ID         [16]byte // Kafka topic id (Metadata v10+)
	Internal   bool     // __consumer_offsets, __transaction_state
	Partitions []Partition
}

// Snapshot is an immutable view of the cluster. Never modify a published
// snapshot or anything it references: build a new one.
type Snapshot struct {
	ClusterID    string
	ControllerID int32    // -1 = none
	Brokers      []Broker // sorted by id
	Topics       map[string]*Topic
	TopicsByID   map[[16]byte]*Topic
}

// Empty is the snapshot before the controller publishes anything.
var Empty = &Snapshot{ControllerID: -1, Topics: map[string]*Topic{}, TopicsByID: map[[16]byte]*Topic{}}

// Broker returns the live broker with id, or false.
func (s *Snapshot) Broker(id int32) (Broker, bool) {
	i := sort.Search(len(s.Brokers), func(i int) bool { return s.Brokers[i].ID >= id })
	if i < len(s.Brokers) && s.Brokers[i].ID == id {
		return s.Brokers[i], true
	}
	return Broker{}, false
}

// TopicNames lists every topic name, sorted.
func (s *Snapshot) TopicNames() []string {
	out := make([]string, 0, len(s.Topics))
	for n := range s.Topics {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Partition returns one partition's state, or false.
func (s *Snapshot) Partition(topic string, p int32) (Partition, bool) {
	t, ok := s.Topics[topic]
	if !ok || p < 0 || int(p) >= len(t.Partitions) {
		return Partition{}, false
	}
	return t.Partitions[p], true
}

// Cache holds the current snapshot; Load is one atomic read.
type Cache struct {
	p      atomic.Pointer[Snapshot]
	listen atomic.Pointer[func(prev, next *Snapshot)]
}

// OnPublish sets fn (nil = none) to be called by every later Publish with
// the replaced snapshot (Empty for the first) and the new one, after the
// new one is visible to Load. It runs on the publisher's goroutine — the
// controller actor's, or a connection's serving UpdateMetadata, possibly
// both at once — so it must be quick, safe for concurrent calls, and must
// not call back into the controller (Kafka's KafkaApis hands the
// partitions an UpdateMetadata deleted to the group coordinator this way).
func (c *Cache) OnPublish(fn func(prev, next *Snapshot)) {
	if fn == nil {
		c.listen.Store(nil)
		return
	}
	c.listen.Store(&fn)
}

// Load returns the current snapshot (Empty before the first Publish).
func (c *Cache) Load() *Snapshot {
	if s := c.p.Load(); s != nil {
		return s
	}
	return Empty
}

// Publish replaces the snapshot. s must not be modified afterwards.
func (c *Cache) Publish(s *Snapshot) {
	prev := c.p.Swap(s)
	if fn := c.listen.Load(); fn != nil {
		if prev == nil {
			prev = Empty
		}
		(*fn)(prev, s)
	}
}

// IsInternal reports Kafka's internal topics (Kafka's Topic.isInternal):
// __consumer_offsets and __transaction_state, written only by their
// coordinators (a client's Produce to them gets INVALID_TOPIC_EXCEPTION).
func IsInternal(name string) bool {
	return name == "__consumer_offsets" || name == "__transaction_state"
}

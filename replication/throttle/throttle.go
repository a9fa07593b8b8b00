// Package throttle is Kafka's replication quota managers
// (ReplicationQuotaManager, QuotaFactory's leader, follower and
// alter-log-dirs quotas): which replicas are throttled, the bytes they
// move measured over replication.quota.window.num ×
// replication.quota.window.size.seconds (Kafka's SimpleRate), and the
// rate bound (leader.replication.throttled.rate,
// follower.replication.throttled.rate,
// replica.alter.log.dirs.io.max.bytes.per.second, bytes/s).
//
// The leader side (wire/handlers Fetch) leaves a throttled partition out of
// a follower's Fetch response while the leader quota is exceeded and the
// follower is not in the ISR; the follower side (replication/fetcher)
// leaves a throttled partition that is not caught up out of its Fetch
// request while the follower quota is exceeded. Both record the bytes of
// every throttled partition they move, in sync or not, so the whole
// throttled traffic stays within the bound (Kafka's rule).
//
// The throttled replicas come from the topic configs
// leader.replication.throttled.replicas and
// follower.replication.throttled.replicas (Managers.ApplyTopicConfig,
// called when a topic's config is read or changes); the rates from the
// broker config (Managers built from config.Quotas, then Quota.SetRate
// from the dynamic broker config layer).
package throttle

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"gregor/config"
	"gregor/quota"
)

// Unlimited is the rate bound meaning no throttle: Kafka's default
// Long.MaxValue bytes/s.
const Unlimited = math.MaxInt64

// Quota is one replication quota manager, safe for concurrent use. Its
// zero value is not usable; see NewQuota. A nil *Quota throttles nothing.
type Quota struct {
	name string // Kafka's quota type: LeaderReplication, FollowerReplication, AlterLogDirsReplication
	rate *quota.Rate
	// bound is the rate limit in bytes/s; Unlimited = none.
	bound atomic.Int64

	mu     sync.RWMutex
	topics map[string]topicThrottle // topic → its throttled partitions here
	n      atomic.Int32             // len(topics), read without the lock

	recorded atomic.Int64 // bytes recorded since start
	omitted  atomic.Int64 // partitions left out of a fetch because of this quota
}

// topicThrottle is "*" (all) or a set of partition ids.
type topicThrottle struct {
	all   bool
	parts map[int32]struct{}
}

// NewQuota returns a quota named name (for metrics and logs) measured over
// window, with rate bytes/s as its bound (Unlimited or negative = none).
func NewQuota(name string, window quota.Config, rate int64) *Quota {
	q := &Quota{name: name, rate: quota.NewSimpleRate(window), topics: map[string]topicThrottle{}}
	q.SetRate(rate)
	return q
}

// Name is Kafka's quota type name ("LeaderReplication", …).
func (q *Quota) Name() string { return q.name }

// SetRate changes the bound (bytes/s; Unlimited or negative = none), as
// Kafka's updateQuota on a dynamic broker config change. The measured
// history is kept.
func (q *Quota) SetRate(bytesPerSec int64) {
	if q == nil {
		return
	}
	if bytesPerSec < 0 {
		bytesPerSec = Unlimited
	}
	q.bound.Store(bytesPerSec)
}

// Rate is the bound in bytes/s (Unlimited when none).
func (q *Quota) Rate() int64 {
	if q == nil {
		return Unlimited
	}
	return q.bound.Load()
}

// MarkThrottled makes partitions of topic the throttled ones here
// (replacing the previous set); all marks every partition ("*").
func (q *Quota) MarkThrottled(topic string, all bool, partitions []int32) {
	t := topicThrottle{all: all, parts: make(map[int32]struct{}, len(partitions))}
	for _, p := range partitions {
		t.parts[p] = struct{}{}
	}
	q.mu.Lock()
	q.topics[topic] = t
	q.n.Store(int32(len(q.topics)))
	q.mu.Unlock()
}

// RemoveThrottle unthrottles every partition of topic.
func (q *Quota) RemoveThrottle(topic string) {
	q.mu.Lock()
	delete(q.topics, topic)
	q.n.Store(int32(len(q.topics)))
	q.mu.Unlock()
}

// IsThrottled reports whether partition p of topic is throttled here.
// Without any throttled topic it is one atomic load.
func (q *Quota) IsThrottled(topic string, p int32) bool {
	if q == nil || q.n.Load() == 0 {
		return false
	}
	q.mu.RLock()
	t, ok := q.topics[topic]
	q.mu.RUnlock()
	if !ok {
		return false
	}
	if t.all {
		return true
	}
	_, ok = t.parts[p]
	return ok
}

// IsQuotaExceeded reports whether the bytes recorded are above the bound
// at now (Kafka's sensor.checkQuotas: measured rate > bound).
func (q *Quota) IsQuotaExceeded(now time.Time) bool {
	if q == nil {
		return false
	}
	b := q.bound.Load()
	if b == Unlimited {
		return false
	}
	return q.rate.Exceeds(float64(b), now)
}

// ThrottleTime is how long until the measured rate is back at the bound
// (QuotaUtils.throttleTime over the quota's window); 0 when not exceeded.
// The follower waits about this long before it asks again.
func (q *Quota) ThrottleTime(now time.Time) time.Duration {
	if q == nil {
		return 0
	}
	b := q.bound.Load()
	if b == Unlimited {
		return 0
	}
	if b == 0 {
		return time.Second // nothing may move: look again in a while
	}
	return q.rate.ThrottleTime(float64(b), now)
}

// Record adds bytes moved for throttled partitions at now, whatever the
// quota says (Kafka records even past the bound).
func (q *Quota) Record(bytes int64, now time.Time) {
	if q == nil || bytes <= 0 {
		return
	}
	q.recorded.Add(bytes)
	q.rate.Record(float64(bytes), now)
}

// NoteOmitted counts n partitions left out of a fetch by this quota.
func (q *Quota) NoteOmitted(n int) {
	if q != nil && n > 0 {
		q.omitted.Add(int64(n))
	}
}

// ByteRate is the measured rate of throttled bytes at now, bytes/s
// (Kafka's <type> byte-rate metric).
func (q *Quota) ByteRate(now time.Time) float64 {
	if q == nil {
		return 0
	}
	return q.rate.Measure(now)
}

// RecordedBytes is the total of Record since start.
func (q *Quota) RecordedBytes() int64 {
	if q == nil {
		return 0
	}
	return q.recorded.Load()
}

// OmittedPartitions is the total of NoteOmitted since start.
func (q *Quota) OmittedPartitions() int64 {
	if q == nil {
		return 0
	}
	return q.omitted.Load()
}

// Managers are a broker's three replication quota managers (Kafka's
// QuotaFactory.QuotaManagers leader, follower, alterLogDirs).
type Managers struct {
	BrokerID int32
	// Leader throttles what this broker serves to followers
	// (leader.replication.throttled.rate, topic config
	// leader.replication.throttled.replicas).
	Leader *Quota
	// Follower throttles what this broker fetches as a follower
	// (follower.replication.throttled.rate,
	// follower.replication.throttled.replicas).
	Follower *Quota
	// AlterLogDirs holds replica.alter.log.dirs.io.max.bytes.per.second:
	// the AlterReplicaLogDirs copiers (partition/logdir_copier.go) record
	// every byte they copy and wait while it is exceeded; every moving
	// replica is throttled (no throttled-replicas list), as Kafka's.
	AlterLogDirs *Quota
}

// New builds the managers of broker brokerID with the windows and initial
// rates of q (replication.quota.window.*, alter.log.dirs.replication.quota.window.*,
// the three rate keys).
func New(brokerID int32, q config.Quotas) *Managers {
	return &Managers{
		BrokerID:     brokerID,
		Leader:       NewQuota("LeaderReplication", q.Replication, q.LeaderReplicationThrottledRate),
		Follower:     NewQuota("FollowerReplication", q.Replication, q.FollowerReplicationThrottledRate),
		AlterLogDirs: NewQuota("AlterLogDirsReplication", q.AlterLogDirs, q.ReplicaAlterLogDirsIOMaxBytesPerSecond),
	}
}

// ApplyTopicConfig sets topic's throttled partitions on this broker from
// its config overrides, as Kafka's TopicConfigHandler: a non-empty
// leader.replication.throttled.replicas / follower.replication.throttled.replicas
// marks "*" or the partitions whose entries name this broker; an absent
// or empty one removes the topic's throttle. A value that does not
// validate (only a hand-edited znode: writes are validated) leaves that
// side as it was and is returned as the error.
func (m *Managers) ApplyTopicConfig(topic string, overrides map[string]string) error {
	if m == nil {
		return nil
	}
	var first error
	for _, side := range []struct {
		key string
		q   *Quota
	}{{config.LeaderThrottledReplicasKey, m.Leader}, {config.FollowerThrottledReplicasKey, m.Follower}} {
		v, ok := overrides[side.key]
		if !ok || v == "" {
			side.q.RemoveThrottle(topic)
			continue
		}
		all, parts, err := config.ParseThrottledReplicas(side.key, v, m.BrokerID)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		side.q.MarkThrottled(topic, all, parts)
	}
	return first
}

// ShouldLeaderThrottle is the leader's decision for one partition of a
// follower's Fetch (Kafka's ReplicaManager.shouldLeaderThrottle): leave
// it out when the follower is not in the ISR, the partition is throttled
// and the leader quota is exceeded. In-sync followers are never
// throttled, so throttling cannot shrink the ISR.
func ShouldLeaderThrottle(q *Quota, topic string, p int32, followerInISR bool, now time.Time) bool {
	return !followerInISR && q.IsThrottled(topic, p) && q.IsQuotaExceeded(now)
}

// ShouldFollowerThrottle is the follower's decision for one partition of
// its next Fetch (Kafka's RemoteLeaderEndPoint.shouldFollowerThrottle):
// leave it out when it is not caught up with the leader's high watermark,
// is throttled and the follower quota is exceeded.
func ShouldFollowerThrottle(q *Quota, topic string, p int32, inSync bool, now time.Time) bool {
	return !inSync && q.IsThrottled(topic, p) && q.IsQuotaExceeded(now)
}

package clientquota

import (
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"gregor/quota"
)

// Manager holds the configured quotas of every entity and the sensors
// that measure each (user, client-id) against the quota that applies to
// it, one set per quota type. It is safe for concurrent use; the
// connection goroutines call it per request. A quota type no entity
// configures costs one read-locked check per request and records nothing
// (Kafka's quotasEnabled).
type Manager struct {
	client, mutation quota.Config
	now              func() time.Time

	mu        sync.RWMutex
	table     map[Entity]map[string]float64 // configured quota values by entity
	enabled   [numTypes]int                 // entities configuring each type
	sensors   map[sensorKey]*sensor
	lastSweep time.Time // when expired sensors were last removed
}

// SensorExpiration is how long a sensor may go without a record before
// it is removed with its metrics (Kafka's
// ClientQuotaManager.InactiveSensorExpirationTimeSeconds, 3600 s), so
// the sensors of client ids that come and go do not pile up.
const SensorExpiration = time.Hour

// sweepInterval is how often expired sensors are looked for (Kafka's
// Metrics runs its ExpireSensorTask every 30 s).
const sweepInterval = 30 * time.Second

// NewManager returns a manager without quotas. client is the window of
// the produce, fetch and request quotas (quota.window.num ×
// quota.window.size.seconds), mutation that of the controller mutation
// quota (controller.quota.window.*); now is the clock (nil = time.Now).
func NewManager(client, mutation quota.Config, now func() time.Time) *Manager {
	if now == nil {
		now = time.Now
	}
	return &Manager{client: client, mutation: mutation, now: now,
		table: map[Entity]map[string]float64{}, sensors: map[sensorKey]*sensor{}}
}

// Set replaces the quotas of e with values (quota keys to their value;
// other keys, such as SCRAM credentials in a user's znode, are ignored);
// no quota key removes e's quotas (Kafka's QuotaConfigHandler sets or
// removes each type's override).
func (m *Manager) Set(e Entity, values map[string]float64) {
	q := map[string]float64{}
	for k, v := range values {
		if _, ok := TypeOfKey(k); ok {
			q[k] = v
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.table[e] {
		t, _ := TypeOfKey(k)
		m.enabled[t]--
	}
	if len(q) == 0 {
		delete(m.table, e)
		return
	}
	for k := range q {
		t, _ := TypeOfKey(k)
		m.enabled[t]++
	}
	m.table[e] = q
}

// Quotas returns a copy of every entity's configured quotas.
func (m *Manager) Quotas() map[Entity]map[string]float64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[Entity]map[string]float64, len(m.table))
	for e, q := range m.table {
		c := make(map[string]float64, len(q))
		for k, v := range q {
			c[k] = v
		}
		out[e] = c
	}
	return out
}

// Enabled reports whether any entity configures a quota of type t.
func (m *Manager) Enabled(t Type) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.enabled[t] > 0
}

// Tags are the metric tags a connection is measured under: the sanitized
// user and the client id, either "" when the quota that applies is not
// set at that level (Kafka's quotaMetricTags: a client-id quota measures
// every user of the client id together).
type Tags struct {
	User, ClientID string
}

// resolveLocked is Kafka's DefaultQuotaCallback for quota key k: the
// metric tags of (sanitized user, client id) and the limit of the first
// entity that sets k in this order: user+client-id, user+default
// client-id, user, default user+client-id, default user+default
// client-id, default user, client-id, default client-id.
func (m *Manager) resolveLocked(k, user, clientID string) (Tags, float64, bool) {
	client := Sanitize(clientID)
	order := []struct {
		e    Entity
		tags Tags
	}{
		{Entity{user, client}, Tags{user, clientID}},
		{Entity{user, Default}, Tags{user, clientID}},
		{Entity{User: user}, Tags{User: user}},
		{Entity{Default, client}, Tags{user, clientID}},
		{Entity{Default, Default}, Tags{user, clientID}},
		{Entity{User: Default}, Tags{User: user}},
		{Entity{Client: client}, Tags{ClientID: clientID}},
		{Entity{Client: Default}, Tags{ClientID: clientID}},
	}
	for _, o := range order {
		if v, ok := m.table[o.e][k]; ok {
			return o.tags, v, true
		}
	}
	return Tags{ClientID: clientID}, 0, false
}

// Resolve returns the metric tags and limit of quota type t for a
// connection of principal name user and client id clientID; ok is false
// when no entity bounds it.
func (m *Manager) Resolve(t Type, user, clientID string) (Tags, float64, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.resolveLocked(t.Key(), Sanitize(user), clientID)
}

type sensorKey struct {
	t    Type
	tags Tags
}

// sensor measures one (type, tags): the quota's rate (or token bucket)
// plus, for the metrics, the throttle times handed out.
type sensor struct {
	rate          *quota.Rate        // bytes/s, %·s/s, or mutations/s
	bucket        *quota.TokenBucket // ControllerMutation only
	throttleSum   *quota.Rate        // throttle ms handed out, per second
	throttleCount *quota.Rate        // throttled responses, per second
	limit         float64            // the limit last applied (for metrics)
	lastRecord    atomic.Int64       // unix ms of the last record (or creation)
}

func (s *sensor) touch(now time.Time) { s.lastRecord.Store(now.UnixMilli()) }

// sweepLocked removes the sensors without a record for SensorExpiration,
// at most once per sweepInterval. A request that still holds a removed
// sensor records into it harmlessly; the next one gets a fresh sensor.
func (m *Manager) sweepLocked(now time.Time) {
	if now.Sub(m.lastSweep) < sweepInterval {
		return
	}
	m.lastSweep = now
	cutoff := now.Add(-SensorExpiration).UnixMilli()
	for k, s := range m.sensors {
		if s.lastRecord.Load() < cutoff {
			delete(m.sensors, k)
		}
	}
}

// Sensors is the number of live sensors (for tests and metrics).
func (m *Manager) Sensors() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.sensors)
}

// sensor returns the sensor of (t, tags) with limit as its bound now.
func (m *Manager) sensor(t Type, tags Tags, limit float64) *sensor {
	k := sensorKey{t, tags}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked(now)
	s := m.sensors[k]
	if s == nil {
		cfg := m.client
		if t == ControllerMutation {
			cfg = m.mutation
		}
		s = &sensor{rate: quota.NewRate(cfg), throttleSum: quota.NewRate(cfg), throttleCount: quota.NewRate(cfg)}
		if t == ControllerMutation {
			s.bucket = quota.NewTokenBucket(cfg)
		}
		s.touch(now)
		m.sensors[k] = s
	}
	s.limit = limit
	return s
}

// lookup resolves and returns the sensor, or nil when t bounds nothing
// for the connection (then nothing is recorded).
func (m *Manager) lookup(t Type, user, clientID string) (*sensor, float64) {
	if !m.Enabled(t) {
		return nil, 0
	}
	tags, limit, ok := m.Resolve(t, user, clientID)
	if !ok {
		return nil, 0
	}
	return m.sensor(t, tags, limit), limit
}

func (s *sensor) throttled(d time.Duration, now time.Time) {
	if d > 0 {
		s.throttleSum.Record(float64(d.Milliseconds()), now)
		s.throttleCount.Record(1, now)
	}
}

// RecordAndThrottle records v (produce request bytes, fetch response
// bytes, or request time in ms for Request) for the connection and
// returns how long it must be throttled: Kafka's
// ClientQuotaManager.maybeRecordAndGetThrottleTimeMs ((rate − limit) /
// limit × window) and, for Request, ClientRequestQuotaManager's (the
// time recorded as a percentage of one thread, the throttle bounded by
// one quota.window.size.seconds). 0 when no quota applies.
func (m *Manager) RecordAndThrottle(t Type, user, clientID string, v float64) time.Duration {
	s, limit := m.lookup(t, user, clientID)
	if s == nil {
		return 0
	}
	now := m.now()
	if t == Request {
		v *= 100.0 / 1000 // ms of thread time → percent·seconds
	}
	s.touch(now)
	d := s.rate.RecordAndThrottle(v, limit, now)
	if t == Request && d > m.client.Window {
		d = m.client.Window
	}
	s.throttled(d, now)
	return d
}

// Unrecord takes v back out of the connection's rate (Kafka's
// unrecordQuotaSensor: a throttled fetch answers no data, so its bytes
// are not counted).
func (m *Manager) Unrecord(t Type, user, clientID string, v float64) {
	if s, _ := m.lookup(t, user, clientID); s != nil {
		s.rate.Record(-v, m.now())
	}
}

// MaxValueInWindow is the most a single record may be without certain
// throttling: limit × (samples − 1) × window seconds, or +Inf when no
// quota applies (Kafka's getMaxValueInQuotaWindow, which bounds a
// consumer fetch's max bytes).
func (m *Manager) MaxValueInWindow(t Type, user, clientID string) float64 {
	if !m.Enabled(t) {
		return math.Inf(1)
	}
	_, limit, ok := m.Resolve(t, user, clientID)
	if !ok {
		return math.Inf(1)
	}
	return limit * float64(m.client.Samples-1) * m.client.Window.Seconds()
}

// MutationQuota is one request's controller mutation quota (Kafka's
// ControllerMutationQuota): Record takes partitions from the bucket.
// Strict (CreateTopics v6+, CreatePartitions v3+, DeleteTopics v5+)
// refuses a mutation while the bucket is negative (Record returns false:
// THROTTLING_QUOTA_EXCEEDED) and does not throttle the request that
// overdraws it; permissive always records and throttles by the deficit.
// A nil *MutationQuota is unbounded.
type MutationQuota struct {
	m        *Manager
	s        *sensor
	limit    float64
	strict   bool
	throttle time.Duration
}

// Mutation returns the quota of one mutation request of the connection,
// nil when no controller_mutation_rate applies to it.
func (m *Manager) Mutation(user, clientID string, strict bool) *MutationQuota {
	s, limit := m.lookup(ControllerMutation, user, clientID)
	if s == nil {
		return nil
	}
	return &MutationQuota{m: m, s: s, limit: limit, strict: strict}
}

// Record takes n mutations (partitions) from the bucket. It returns false
// when the strict quota is already exceeded: nothing is recorded and the
// caller answers THROTTLING_QUOTA_EXCEEDED for that topic.
func (q *MutationQuota) Record(n int) bool {
	if q == nil {
		return true
	}
	now := q.m.now()
	q.s.touch(now)
	if q.strict {
		if d := q.s.bucket.ThrottleTime(q.limit, now); d > 0 {
			q.throttle = d
			return false
		}
		q.s.bucket.Record(float64(n), q.limit, now)
		q.s.rate.Record(float64(n), now)
		return true
	}
	q.s.bucket.Record(float64(n), q.limit, now)
	q.s.rate.Record(float64(n), now)
	if d := q.s.bucket.ThrottleTime(q.limit, now); d > 0 {
		q.throttle = d
	}
	return true
}

// Throttle is the request's throttle time: the last refusal's (strict)
// or the deficit after recording (permissive). Recorded in the metrics.
func (q *MutationQuota) Throttle() time.Duration {
	if q == nil {
		return 0
	}
	q.s.throttled(q.throttle, q.m.now())
	return q.throttle
}

// Stat is one sensor's state for the metrics.
type Stat struct {
	Type Type
	Tags Tags
	// Rate is the measured rate: bytes/s (Produce, Fetch), percent of a
	// thread (Request), mutations/s (ControllerMutation).
	Rate float64
	// ThrottleTimeMs is the average throttle time of the throttled
	// responses over the window (Kafka's throttle-time Avg), 0 if none.
	ThrottleTimeMs float64
	// Limit is the quota the sensor was last measured against.
	Limit float64
	// Tokens is the token bucket's level (ControllerMutation only).
	Tokens float64
}

// Stats returns every live sensor's state (expired ones are removed
// first), sorted by type and tags.
func (m *Manager) Stats() []Stat {
	now := m.now()
	m.mu.Lock()
	m.sweepLocked(now)
	m.mu.Unlock()
	m.mu.RLock()
	out := make([]Stat, 0, len(m.sensors))
	for k, s := range m.sensors {
		st := Stat{Type: k.t, Tags: k.tags, Rate: s.rate.Measure(now), Limit: s.limit}
		if n := s.throttleCount.Measure(now); n > 0 {
			st.ThrottleTimeMs = s.throttleSum.Measure(now) / n
		}
		if s.bucket != nil {
			st.Tokens = s.bucket.Tokens(s.limit, now)
		}
		out = append(out, st)
	}
	m.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		if a.Tags.User != b.Tags.User {
			return a.Tags.User < b.Tags.User
		}
		return a.Tags.ClientID < b.Tags.ClientID
	})
	return out
}

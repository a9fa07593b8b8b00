// Package quota holds the measuring parts of Kafka's quota managers: a
// windowed rate (Kafka's Rate over a SampledStat of WindowedSum samples)
// with the throttle time Kafka derives from it (QuotaUtils.throttleTime),
// and a token bucket (KIP-599's TokenBucket, used for the controller
// mutation rate). The client quota managers (produce, fetch, request
// time, controller mutations) and the replication quota managers
// (leader/follower throttles) are built on them; this package has no
// notion of users, client ids or replicas.
//
// Times are passed in, never read, so the arithmetic is testable and the
// callers decide the clock.
package quota

import (
	"math"
	"sync"
	"time"
)

// Config is a quota's measuring window, as Kafka's MetricConfig for quota
// sensors: Samples windows of Window each (client quotas:
// quota.window.num, default 11, and quota.window.size.seconds, default 1;
// replication: replication.quota.window.num, default 11, and
// replication.quota.window.size.seconds, default 1).
type Config struct {
	Samples int           // number of sample windows kept, >= 1
	Window  time.Duration // length of one sample window, > 0
}

// DefaultConfig is Kafka's default quota window: 11 samples of 1 s.
var DefaultConfig = Config{Samples: 11, Window: time.Second}

func (c Config) normalized() Config {
	if c.Samples < 1 {
		c.Samples = 1
	}
	if c.Window <= 0 {
		c.Window = time.Second
	}
	return c
}

type sample struct {
	start, last int64 // ms: window start, last event
	value       float64
}

// Rate is a windowed sum per second, safe for concurrent use. It keeps
// Samples+1 samples (one may overlap the start of the monitored window,
// as Kafka's SampledStat keeps); samples without an event within
// Samples×Window are reset. The zero value is not usable; see NewRate.
type Rate struct {
	cfg     Config
	simple  bool // SimpleRate's window (NewSimpleRate)
	mu      sync.Mutex
	samples []sample
	current int
}

// NewRate returns an empty rate measured over cfg's windows.
func NewRate(cfg Config) *Rate {
	return &Rate{cfg: cfg.normalized()}
}

// NewSimpleRate is NewRate with Kafka's SimpleRate window, which the
// replication quota managers use: the time since the oldest kept sample
// started, but at least one Window (not Samples-1 of them), so a
// throttle bites from the first second instead of letting about
// Samples-1 windows' worth of bytes through at the start.
func NewSimpleRate(cfg Config) *Rate {
	return &Rate{cfg: cfg.normalized(), simple: true}
}

func ms(t time.Time) int64 { return t.UnixMilli() }

// Record adds v (bytes, requests, ms of request time, ...) at now.
func (r *Rate) Record(v float64, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := ms(now)
	s := r.currentLocked(t)
	if t-s.start >= r.cfg.Window.Milliseconds() {
		s = r.advanceLocked(t)
	}
	s.value += v
	s.last = t
}

func (r *Rate) currentLocked(t int64) *sample {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{start: t, last: t})
	}
	return &r.samples[r.current]
}

func (r *Rate) advanceLocked(t int64) *sample {
	r.current = (r.current + 1) % (r.cfg.Samples + 1)
	if r.current >= len(r.samples) {
		r.samples = append(r.samples, sample{start: t, last: t})
	} else {
		r.samples[r.current] = sample{start: t, last: t}
	}
	return &r.samples[r.current]
}

// purgeLocked resets samples without an event in the monitored window.
func (r *Rate) purgeLocked(t int64) {
	expire := int64(r.cfg.Samples) * r.cfg.Window.Milliseconds()
	for i := range r.samples {
		if t-r.samples[i].last >= expire {
			r.samples[i] = sample{start: t, last: t}
		}
	}
}

// windowLocked is Kafka's Rate.windowSize in ms: the time since the
// oldest kept sample started, but at least Samples-1 full windows (so one
// burst right after start does not read as a huge rate), at least 1 ms.
func (r *Rate) windowLocked(t int64) int64 {
	r.purgeLocked(t)
	oldest := r.currentLocked(t).start
	for _, s := range r.samples {
		if s.start < oldest {
			oldest = s.start
		}
	}
	elapsed := t - oldest
	w := r.cfg.Window.Milliseconds()
	if r.simple {
		return max(elapsed, w)
	}
	if full, min := elapsed/w, int64(r.cfg.Samples-1); full < min {
		elapsed += (min - full) * w
	}
	if elapsed < 1 {
		elapsed = 1
	}
	return elapsed
}

func (r *Rate) measureLocked(t int64) (perSec float64, windowMs int64) {
	windowMs = r.windowLocked(t)
	var sum float64
	for _, s := range r.samples {
		sum += s.value
	}
	return sum / (float64(windowMs) / 1000), windowMs
}

// Measure returns the rate at now in units per second.
func (r *Rate) Measure(now time.Time) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, _ := r.measureLocked(ms(now))
	return v
}

// Exceeds reports whether the rate at now is above bound (units per
// second), as Kafka's Sensor.checkQuotas raises a QuotaViolationException
// for an upper-bound quota.
func (r *Rate) Exceeds(bound float64, now time.Time) bool {
	return r.Measure(now) > bound
}

// ThrottleTime is how long the client must wait so the rate falls back to
// bound (units per second): (measured − bound) / bound × window, rounded
// to ms, as Kafka's QuotaUtils.throttleTime; 0 when the rate is within
// bound or bound is not positive.
func (r *Rate) ThrottleTime(bound float64, now time.Time) time.Duration {
	if bound <= 0 || math.IsInf(bound, 1) {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	v, w := r.measureLocked(ms(now))
	if v <= bound {
		return 0
	}
	return time.Duration(math.Round((v-bound)/bound*float64(w))) * time.Millisecond
}

// RecordAndThrottle records v at now and returns ThrottleTime(bound, now):
// what Kafka's ClientQuotaManager.recordAndGetThrottleTimeMs does per
// request (the value is recorded even when the quota is then violated).
func (r *Rate) RecordAndThrottle(v, bound float64, now time.Time) time.Duration {
	r.Record(v, now)
	return r.ThrottleTime(bound, now)
}

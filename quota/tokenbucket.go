package quota

import (
	"math"
	"sync"
	"time"
)

// TokenBucket is KIP-599's token bucket, safe for concurrent use: tokens
// refill at the quota (units per second) up to a burst of
// Samples × Window × quota; each recorded value takes tokens, which may
// go negative. Kafka uses it for controller_mutation_rate: a request that
// drives the bucket negative is throttled for −tokens / quota, and while
// it is negative further mutations are refused with THROTTLING_QUOTA_EXCEEDED.
type TokenBucket struct {
	cfg    Config
	mu     sync.Mutex
	tokens float64
	last   time.Time
	init   bool
}

// NewTokenBucket returns a bucket that starts full (Kafka's starts with
// its last refill at time 0, so its first use refills it to the burst).
func NewTokenBucket(cfg Config) *TokenBucket {
	return &TokenBucket{cfg: cfg.normalized()}
}

func (b *TokenBucket) refillLocked(quota float64, now time.Time) {
	burst := float64(b.cfg.Samples) * b.cfg.Window.Seconds() * quota
	if !b.init {
		b.init, b.last, b.tokens = true, now, burst
	}
	b.tokens = math.Min(burst, b.tokens+quota*now.Sub(b.last).Seconds())
	b.last = now
}

// Tokens returns the tokens left at now for the given quota.
func (b *TokenBucket) Tokens(quota float64, now time.Time) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(quota, now)
	return b.tokens
}

// Record takes v tokens at now.
func (b *TokenBucket) Record(v, quota float64, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked(quota, now)
	burst := float64(b.cfg.Samples) * b.cfg.Window.Seconds() * quota
	b.tokens = math.Min(burst, b.tokens-v)
}

// ThrottleTime is how long until the bucket is back at zero tokens:
// −tokens / quota, rounded to ms (Kafka's
// ControllerMutationQuota throttle time); 0 while tokens >= 0.
func (b *TokenBucket) ThrottleTime(quota float64, now time.Time) time.Duration {
	if quota <= 0 || math.IsInf(quota, 1) {
		return 0
	}
	t := b.Tokens(quota, now)
	if t >= 0 {
		return 0
	}
	return time.Duration(math.Round(-t/quota*1000)) * time.Millisecond
}

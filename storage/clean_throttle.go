package storage

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// cleanerThrottle bounds the log cleaner's reads plus writes, all
// cleanings of the broker together, to log.cleaner.io.max.bytes.per.second
// (Kafka's one "cleaner-io" Throttler of LogCleaner). The rate changes at
// run time (SetRate); stop ends every wait (ErrCleaningAborted), so a
// stopping broker does not wait out a throttled pass.
type cleanerThrottle struct {
	mu   sync.Mutex
	lim  *rate.Limiter // nil: unthrottled
	bps  float64
	stop chan struct{}
	once sync.Once
}

func newCleanerThrottle() *cleanerThrottle {
	return &cleanerThrottle{bps: math.MaxFloat64, stop: make(chan struct{})}
}

// throttleWindow is how many seconds of the rate may pass at once: Kafka's
// Throttler checks the rate every 300 ms, so a burst of that much is its
// resolution too.
const throttleWindow = 0.3

// SetRate sets the bound in bytes/s; math.MaxFloat64 (Kafka's default)
// or anything not positive and finite removes it. Waits already reserved
// keep their delay; the next I/O takes the new rate.
func (t *cleanerThrottle) SetRate(bps float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if bps == t.bps {
		return
	}
	t.bps = bps
	if !(bps > 0) || bps >= math.MaxFloat64 || math.IsInf(bps, 0) {
		t.lim = nil
		return
	}
	burst := int(min(max(bps*throttleWindow, 1), math.MaxInt32))
	if t.lim == nil {
		t.lim = rate.NewLimiter(rate.Limit(bps), burst)
		return
	}
	now := time.Now()
	t.lim.SetLimitAt(now, rate.Limit(bps))
	t.lim.SetBurstAt(now, burst)
}

// wait accounts n bytes of cleaner I/O and sleeps until the rate allows
// them. Errors: ErrCleaningAborted once stopped.
func (t *cleanerThrottle) wait(n int) error {
	if t == nil {
		return nil
	}
	select {
	case <-t.stop:
		return ErrCleaningAborted
	default:
	}
	t.mu.Lock()
	lim := t.lim
	t.mu.Unlock()
	if lim == nil || n <= 0 {
		return nil
	}
	// Reserve n in pieces of at most the burst: each reservation queues
	// behind the previous one, so the last one's delay is the whole wait.
	now := time.Now()
	var delay time.Duration
	for left, b := n, max(lim.Burst(), 1); left > 0; left -= b {
		r := lim.ReserveN(now, min(left, b))
		if !r.OK() {
			return nil // the limit changed to unthrottled meanwhile
		}
		delay = r.DelayFrom(now)
	}
	if delay <= 0 {
		return nil
	}
	tm := time.NewTimer(delay)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-t.stop:
		return ErrCleaningAborted
	}
}

// close ends every wait, now and later.
func (t *cleanerThrottle) close() { t.once.Do(func() { close(t.stop) }) }

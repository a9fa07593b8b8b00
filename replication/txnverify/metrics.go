package txnverify

import "time"

// Observer is told of every verification the Manager answers, for Kafka's
// kafka.server:type=AddPartitionsToTxnManager metrics: VerificationTimeMs
// (histogram of elapsed) and VerificationFailureRate (meter of failed).
// Implementations must be safe for concurrent use and must not block: it
// is called on whatever goroutine answers (a coordinator actor's callback,
// a per-broker sender).
type Observer interface {
	// VerificationDone reports one transactional id's verification:
	// elapsed from Verify to its answer; failed, how many of its
	// partitions were answered with an error code (not verified: the
	// coordinator's refusal, a lost or timed-out request, a replaced or
	// fenced waiter, Close). A coordinator broker that cannot verify
	// (ErrUnsupported) answers with no failure, as in Kafka.
	VerificationDone(elapsed time.Duration, failed int)
}

type observerBox struct{ o Observer }

// SetObserver makes o (nil: none) observe the verifications answered from
// now on. Safe for concurrent use with Verify.
func (m *Manager) SetObserver(o Observer) {
	if o == nil {
		m.observer.Store(nil)
		return
	}
	m.observer.Store(&observerBox{o})
}

// observed wraps reply so that the observer, if any when Verify started,
// sees the answer's time and failures first.
func (m *Manager) observed(reply func(Codes)) func(Codes) {
	box := m.observer.Load()
	if box == nil {
		return reply
	}
	start := time.Now()
	return func(c Codes) {
		failed := 0
		for _, ps := range c {
			for _, code := range ps {
				if code != 0 {
					failed++
				}
			}
		}
		box.o.VerificationDone(time.Since(start), failed)
		reply(c)
	}
}

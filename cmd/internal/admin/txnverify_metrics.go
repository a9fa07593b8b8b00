package admin

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TxnVerificationMetrics are Kafka's KIP-890 verification metrics
// (kafka.server:type=AddPartitionsToTxnManager) in the naming above:
//
//   - kafka_server_addpartitionstotxnmanager_verification_time_seconds:
//     histogram of the time from a verification's start to its answer
//     (VerificationTimeMs), one observation per transactional id verified
//     (a Produce's partitions of one producer together, or a
//     TxnOffsetCommit's group partition).
//   - kafka_server_addpartitionstotxnmanager_verification_failures_total:
//     partitions answered unverified (VerificationFailureRate: the
//     coordinator's refusal, a lost or timed-out request, a fenced or
//     replaced waiter).
//
// It implements txnverify.Observer; safe for concurrent use.
type TxnVerificationMetrics struct {
	time     prometheus.Histogram
	failures prometheus.Counter
}

// txnVerifyMetrics holds the Server's TxnVerificationMetrics, registered
// on first use.
type txnVerifyMetrics struct {
	once sync.Once
	m    *TxnVerificationMetrics
}

// TxnVerificationMetrics registers the verification metrics in the
// broker's registry on the first call and returns them (the same on
// every call). The broker calls it at start whether or not
// transaction.partition.verification.enable is set, as Kafka always has
// its AddPartitionsToTxnManager: with verification off they stay at zero.
func (s *Server) TxnVerificationMetrics() *TxnVerificationMetrics {
	s.txnVerify.once.Do(func() {
		m := &TxnVerificationMetrics{
			time: prometheus.NewHistogram(prometheus.HistogramOpts{
				Name: "kafka_server_addpartitionstotxnmanager_verification_time_seconds",
				Help: "Time from the start of a KIP-890 transaction verification to the coordinator's answer, per transactional id (Kafka AddPartitionsToTxnManager VerificationTimeMs).",
				// 10µs … ~30s: an in-process coordinator answers in
				// microseconds, a remote one within request.timeout.ms.
				Buckets: prometheus.ExponentialBuckets(10e-6, 2.5, 17),
			}),
			failures: prometheus.NewCounter(prometheus.CounterOpts{
				Name: "kafka_server_addpartitionstotxnmanager_verification_failures_total",
				Help: "Partitions a KIP-890 transaction verification answered unverified (Kafka AddPartitionsToTxnManager VerificationFailureRate).",
			}),
		}
		s.metrics.reg.MustRegister(m.time, m.failures)
		s.txnVerify.m = m
	})
	return s.txnVerify.m
}

// VerificationDone implements txnverify.Observer.
func (m *TxnVerificationMetrics) VerificationDone(elapsed time.Duration, failed int) {
	m.time.Observe(elapsed.Seconds())
	if failed > 0 {
		m.failures.Add(float64(failed))
	}
}

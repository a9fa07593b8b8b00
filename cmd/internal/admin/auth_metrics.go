package admin

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// AuthMetrics are Kafka's per-listener SASL authentication counters of
// kafka.server:type=socket-server-metrics (successful-authentication-total,
// failed-authentication-total and their re-authentication counterparts,
// KIP-368), as kafka_server_socket_server_metrics_<name>_total{listener}.
// They implement server.AuthObserver.
type AuthMetrics struct {
	ok, failed, reauthOK, reauthFailed *prometheus.CounterVec // {listener}
}

type authMetrics struct {
	once sync.Once
	m    *AuthMetrics
}

// AuthMetrics registers the authentication counters in the broker's
// registry on the first call and returns them (the same on every call).
func (s *Server) AuthMetrics() *AuthMetrics {
	s.auth.once.Do(func() {
		vec := func(name, help string) *prometheus.CounterVec {
			return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kafka_server_socket_server_metrics_" + name, Help: help}, []string{"listener"})
		}
		m := &AuthMetrics{
			ok:           vec("successful_authentication_total", "Connections that completed SASL authentication (Kafka successful-authentication-total)."),
			failed:       vec("failed_authentication_total", "Connections that failed SASL authentication: bad credentials, unsupported mechanism, unexpected request or timeout (Kafka failed-authentication-total)."),
			reauthOK:     vec("successful_reauthentication_total", "Completed SASL re-authentications, KIP-368 (Kafka successful-reauthentication-total)."),
			reauthFailed: vec("failed_reauthentication_total", "Failed SASL re-authentications, KIP-368 (Kafka failed-reauthentication-total)."),
		}
		s.metrics.reg.MustRegister(m.ok, m.failed, m.reauthOK, m.reauthFailed)
		s.auth.m = m
	})
	return s.auth.m
}

// AuthenticationDone implements server.AuthObserver.
func (m *AuthMetrics) AuthenticationDone(listener, _ string, reauth, ok bool) {
	switch {
	case reauth && ok:
		m.reauthOK.WithLabelValues(listener).Inc()
	case reauth:
		m.reauthFailed.WithLabelValues(listener).Inc()
	case ok:
		m.ok.WithLabelValues(listener).Inc()
	default:
		m.failed.WithLabelValues(listener).Inc()
	}
}

package admin

import "github.com/prometheus/client_golang/prometheus"

// ConnectionStats reads the protocol server's connection counters
// (wire/server Stats), so this package needs no import of it.
type ConnectionStats struct {
	Open, Accepted, Refused func() int64
}

// ObserveConnections registers the protocol server's connection counters:
// kafka_server_socket_server_metrics_connection_count (open connections,
// Kafka's socket-server-metrics connection-count summed over listeners),
// gregor_server_connections_accepted_total and
// gregor_server_connections_refused_total (closed at accept by
// max.connections, max.connections.per.ip(.overrides) or
// max.connection.creation.rate). Call it once.
func (s *Server) ObserveConnections(st ConnectionStats) {
	f := func(fn func() int64) func() float64 { return func() float64 { return float64(fn()) } }
	s.metrics.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kafka_server_socket_server_metrics_connection_count",
			Help: "Open client and broker connections on every listener (Kafka socket-server-metrics connection-count)."}, f(st.Open)),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gregor_server_connections_accepted_total",
			Help: "Connections accepted and served since start."}, f(st.Accepted)),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gregor_server_connections_refused_total",
			Help: "Connections closed at accept by a connection quota (max.connections, max.connections.per.ip, max.connections.per.ip.overrides, max.connection.creation.rate)."}, f(st.Refused)),
	)
}

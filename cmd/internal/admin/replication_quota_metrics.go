package admin

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"gregor/replication/throttle"
)

// ObserveReplicationQuotas registers the replication throttle metrics of
// the leader and follower quotas (Kafka's LeaderReplication and
// FollowerReplication byte-rate, kafka.server:type=LeaderReplication /
// FollowerReplication):
//
//	kafka_server_leaderreplication_byte_rate     gauge, bytes/s of throttled partitions served to followers, over the quota window
//	kafka_server_followerreplication_byte_rate   gauge, bytes/s of throttled partitions fetched as a follower
//	gregor_replication_throttled_bytes_total{side}      counter, the bytes recorded against each quota
//	gregor_replication_throttled_partitions_total{side} counter, partitions left out of a fetch response (leader) or request (follower)
//	gregor_replication_throttle_rate_bytes{side}        gauge, the bound in bytes/s (9223372036854775807 = none)
//
// side is "leader" or "follower". Call it once.
func (s *Server) ObserveReplicationQuotas(leader, follower *throttle.Quota) {
	rate := func(q *throttle.Quota) func() float64 { return func() float64 { return q.ByteRate(time.Now()) } }
	s.metrics.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kafka_server_leaderreplication_byte_rate",
			Help: "Bytes/s of throttled partitions this leader sent to followers, over replication.quota.window.num × replication.quota.window.size.seconds (Kafka LeaderReplication byte-rate)."}, rate(leader)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kafka_server_followerreplication_byte_rate",
			Help: "Bytes/s of throttled partitions this follower fetched (Kafka FollowerReplication byte-rate)."}, rate(follower)),
	)
	for _, side := range []struct {
		name string
		q    *throttle.Quota
	}{{"leader", leader}, {"follower", follower}} {
		q := side.q
		l := prometheus.Labels{"side": side.name}
		s.metrics.reg.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gregor_replication_throttled_bytes_total", ConstLabels: l,
				Help: "Bytes of throttled partitions recorded against the replication quota (sent as leader, fetched as follower), in sync or not."},
				func() float64 { return float64(q.RecordedBytes()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gregor_replication_throttled_partitions_total", ConstLabels: l,
				Help: "Partitions left out of a follower Fetch response (leader) or of a Fetch request (follower) because the replication quota was exceeded."},
				func() float64 { return float64(q.OmittedPartitions()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gregor_replication_throttle_rate_bytes", ConstLabels: l,
				Help: "The replication throttle in bytes/s (leader.replication.throttled.rate, follower.replication.throttled.rate); 9223372036854775807 = none."},
				func() float64 { return float64(q.Rate()) }),
		)
	}
}

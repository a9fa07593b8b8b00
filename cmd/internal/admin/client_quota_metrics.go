package admin

import (
	"github.com/prometheus/client_golang/prometheus"

	"gregor/quota/clientquota"
)

// ObserveClientQuotas registers the client quota metrics of m (Kafka's
// per-entity quota sensors, kafka.server:type=<QuotaType>,user=…,client-id=…),
// one series per live sensor, labelled user (the sanitized principal
// name, as Kafka's tag) and client_id, either "" when the quota that
// applies is not set at that level (a client-id quota measures all users
// of the client id together):
//
//	kafka_server_produce_byte_rate             produce request bytes/s over the quota window (Produce byte-rate)
//	kafka_server_fetch_byte_rate               consumer fetch response bytes/s (Fetch byte-rate)
//	kafka_server_request_request_time          request handling time as % of one thread (Request request-time)
//	kafka_server_controllermutation_mutation_rate  partitions created or deleted per second (ControllerMutation mutation-rate)
//	kafka_server_controllermutation_tokens     the token bucket's level (ControllerMutation tokens)
//	kafka_server_<type>_throttle_time          average throttle ms of the throttled responses over the window (throttle-time)
//	gregor_client_quota_limit{quota_type}      the quota the sensor is held to (producer_byte_rate, consumer_byte_rate,
//	                                           request_percentage, controller_mutation_rate), quota_type produce|fetch|request|controller_mutation
//
// A sensor exists once a quota applied to a request of its entity and
// goes an hour after its last record (clientquota.SensorExpiration).
// Call it once.
func (s *Server) ObserveClientQuotas(m *clientquota.Manager) {
	s.metrics.reg.MustRegister(&clientQuotaCollector{m: m})
}

var quotaLabels = []string{"user", "client_id"}

func quotaDesc(name, help string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append(extra, quotaLabels...), nil)
}

// clientQuotaDescs are the descriptors per quota type: the rate, the
// throttle time.
var clientQuotaDescs = [...]struct{ rate, throttle *prometheus.Desc }{
	clientquota.Produce: {
		quotaDesc("kafka_server_produce_byte_rate", "Produce request bytes/s of the entity over quota.window.num × quota.window.size.seconds (Kafka Produce byte-rate)."),
		quotaDesc("kafka_server_produce_throttle_time", "Average throttle time in ms of the entity's throttled Produce responses over the quota window (Kafka Produce throttle-time)."),
	},
	clientquota.Fetch: {
		quotaDesc("kafka_server_fetch_byte_rate", "Consumer Fetch response bytes/s of the entity over the quota window (Kafka Fetch byte-rate)."),
		quotaDesc("kafka_server_fetch_throttle_time", "Average throttle time in ms of the entity's throttled Fetch responses (Kafka Fetch throttle-time)."),
	},
	clientquota.Request: {
		quotaDesc("kafka_server_request_request_time", "Request handling time of the entity as a percentage of one thread over the quota window (Kafka Request request-time)."),
		quotaDesc("kafka_server_request_throttle_time", "Average throttle time in ms handed out for the entity's request time (Kafka Request throttle-time)."),
	},
	clientquota.ControllerMutation: {
		quotaDesc("kafka_server_controllermutation_mutation_rate", "Partitions created or deleted per second by the entity over controller.quota.window.num × controller.quota.window.size.seconds (Kafka ControllerMutation mutation-rate)."),
		quotaDesc("kafka_server_controllermutation_throttle_time", "Average throttle time in ms of the entity's throttled topic/partition mutations (Kafka ControllerMutation throttle-time)."),
	},
}

var (
	quotaTokensDesc = quotaDesc("kafka_server_controllermutation_tokens",
		"Tokens left in the entity's controller mutation token bucket; negative while throttled (Kafka ControllerMutation tokens).")
	quotaLimitDesc = quotaDesc("gregor_client_quota_limit",
		"The quota the entity is held to: bytes/s (produce, fetch), percent of a thread (request), partitions/s (controller_mutation).", "quota_type")
	quotaTypeLabel = [...]string{clientquota.Produce: "produce", clientquota.Fetch: "fetch",
		clientquota.Request: "request", clientquota.ControllerMutation: "controller_mutation"}
)

// clientQuotaCollector reads Manager.Stats at each scrape (the sensors
// come and go with the clients, so the series are built per scrape).
type clientQuotaCollector struct{ m *clientquota.Manager }

func (c *clientQuotaCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range clientQuotaDescs {
		ch <- d.rate
		ch <- d.throttle
	}
	ch <- quotaTokensDesc
	ch <- quotaLimitDesc
}

func (c *clientQuotaCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range c.m.Stats() {
		d := clientQuotaDescs[st.Type]
		u, cl := st.Tags.User, st.Tags.ClientID
		ch <- prometheus.MustNewConstMetric(d.rate, prometheus.GaugeValue, st.Rate, u, cl)
		ch <- prometheus.MustNewConstMetric(d.throttle, prometheus.GaugeValue, st.ThrottleTimeMs, u, cl)
		ch <- prometheus.MustNewConstMetric(quotaLimitDesc, prometheus.GaugeValue, st.Limit, quotaTypeLabel[st.Type], u, cl)
		if st.Type == clientquota.ControllerMutation {
			ch <- prometheus.MustNewConstMetric(quotaTokensDesc, prometheus.GaugeValue, st.Tokens, u, cl)
		}
	}
}

package admin

import (
	"encoding/binary"
	"reflect"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/actors"
	"gregor/wire/server"
)

// Metric naming: Kafka's JMX meanings under Prometheus names built as
// kafka_<domain>_<type>_<name>, lower-case with underscores, e.g.
// kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec,topic=t →
// kafka_server_brokertopicmetrics_bytes_in_total{topic="t"}. Rates become
// _total counters (Prometheus derives rates), *TimeMs histograms become one
// _seconds histogram with a phase label. Gregor-only metrics (actors,
// faults, tracing) start with gregor_. Every metric lives in a registry of
// its own per broker (never the global default registry).
type metrics struct {
	reg *prometheus.Registry

	bytesIn, bytesOut, messagesIn *prometheus.CounterVec // {topic}
	replicationBytesOut           prometheus.Counter
	requests                      *prometheus.CounterVec // {request}
	errors                        *prometheus.CounterVec // {request, error}
	reqTime                       *prometheus.HistogramVec

	isrShrinks, isrExpands       prometheus.Counter
	leaderElections, uncleanElec prometheus.Counter
	rebalances                   prometheus.Counter
	restarts                     *prometheus.CounterVec // {kind}
	faults                       *prometheus.CounterVec // {action}

	txnTimedOutAborts prometheus.Counter
	txnMarkers        *prometheus.HistogramVec // {result}
	txnLoad           prometheus.Histogram
}

// apiNames caches kmsg.NameForKey for label values.
var apiNames = func() map[int16]string {
	m := make(map[int16]string)
	for k := int16(0); k < 100; k++ {
		if n := kmsg.NameForKey(k); n != "" && n != "Unknown" {
			m[k] = n
		}
	}
	return m
}()

func apiName(k int16) string {
	if n, ok := apiNames[k]; ok {
		return n
	}
	return strconv.Itoa(int(k))
}

func newMetrics(state prometheus.Collector) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	ctr := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	m.bytesIn = ctr("kafka_server_brokertopicmetrics_bytes_in_total",
		"Bytes of record batches appended from Produce requests, by topic (Kafka BytesInPerSec).", "topic")
	m.bytesOut = ctr("kafka_server_brokertopicmetrics_bytes_out_total",
		"Bytes of record batches sent in Fetch responses to consumers, by topic (Kafka BytesOutPerSec; follower fetches count in replication_bytes_out_total).", "topic")
	m.messagesIn = ctr("kafka_server_brokertopicmetrics_messages_in_total",
		"Records appended from Produce requests, by topic (Kafka MessagesInPerSec).", "topic")
	m.requests = ctr("kafka_network_requestmetrics_requests_total",
		"Requests answered, by API and request version (Kafka RequestsPerSec, tagged request and version).", "request", "version")
	m.errors = ctr("kafka_network_requestmetrics_errors_total",
		"Error codes in responses, by API and error (Kafka ErrorsPerSec; one count per partition or group carrying the error).", "request", "error")
	m.reqTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "kafka_network_requestmetrics_time_seconds",
		Help: "Request time by API and phase: queue (read to dispatch), local (handler), remote (waiting for replication, long poll or an actor), send (writing), total (Kafka RequestQueueTimeMs, LocalTimeMs, RemoteTimeMs, ResponseSendTimeMs, TotalTimeMs).",
		// 50µs … ~26s.
		Buckets: prometheus.ExponentialBuckets(50e-6, 2.5, 15),
	}, []string{"request", "phase"})
	one := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	m.replicationBytesOut = one("kafka_server_brokertopicmetrics_replication_bytes_out_total",
		"Bytes of record batches sent in Fetch responses to follower brokers, all topics (Kafka ReplicationBytesOutPerSec).")
	m.isrShrinks = one("kafka_server_replicamanager_isr_shrinks_total", "ISR shrinks by leaders on this broker (Kafka IsrShrinksPerSec).")
	m.isrExpands = one("kafka_server_replicamanager_isr_expands_total", "ISR expansions by leaders on this broker (Kafka IsrExpandsPerSec).")
	m.leaderElections = one("kafka_controller_controllerstats_leader_elections_total", "Partition leader elections by the controller on this broker (Kafka LeaderElectionRateAndTimeMs count).")
	m.uncleanElec = one("kafka_controller_controllerstats_unclean_leader_elections_total", "Unclean leader elections (Kafka UncleanLeaderElectionsPerSec).")
	m.rebalances = one("kafka_coordinator_group_rebalances_total", "Consumer group rebalances started by the group coordinator on this broker.")
	m.restarts = ctr("gregor_actor_restarts_total", "Actor restarts after a failure, by actor kind.", "kind")
	m.faults = ctr("gregor_faults_injected_total", "Faults injected through the admin listener, by action (kill, stop, delay, request_drop, request_error, request_delay).", "action")
	m.txnTimedOutAborts = one("kafka_coordinator_transaction_timed_out_aborts_total",
		"Transactions the coordinator on this broker aborted because they outlived their transaction.timeout.ms (the abort written, the producer's epoch bumped).")
	m.txnMarkers = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "kafka_coordinator_transaction_marker_latency_seconds",
		Help: "Time from a transaction's first WriteTxnMarkers sent to the last of its partitions answered, by result (commit, abort).",
		// 500µs … ~60s.
		Buckets: prometheus.ExponentialBuckets(500e-6, 2.5, 14),
	}, []string{"result"})
	m.txnLoad = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "kafka_server_transaction_coordinator_metrics_partition_load_time_seconds",
		Help: "Time to load one __transaction_state partition (Kafka transaction-coordinator-metrics partition-load-time-avg/-max: _sum/_count is the average).",
		// 1ms … ~100s.
		Buckets: prometheus.ExponentialBuckets(1e-3, 2.5, 13),
	})
	m.reg.MustRegister(m.bytesIn, m.bytesOut, m.replicationBytesOut, m.messagesIn, m.requests, m.errors, m.reqTime,
		m.isrShrinks, m.isrExpands, m.leaderElections, m.uncleanElec, m.rebalances, m.restarts, m.faults,
		m.txnTimedOutAborts, m.txnMarkers, m.txnLoad,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if state != nil {
		m.reg.MustRegister(state)
	}
	return m
}

// event is the actors.Instruments sink.
func (m *metrics) event(e actors.Event) {
	switch e.Name {
	case actors.EventActorRestart:
		m.restarts.WithLabelValues(e.Kind).Inc()
	case actors.EventFaultInjected:
		m.faults.WithLabelValues(e.Kind).Inc()
	case actors.EventIsrShrink:
		m.isrShrinks.Inc()
	case actors.EventIsrExpand:
		m.isrExpands.Inc()
	case actors.EventLeaderElection:
		m.leaderElections.Inc()
	case actors.EventUncleanElection:
		m.leaderElections.Inc()
		m.uncleanElec.Inc()
	case actors.EventGroupRebalance:
		m.rebalances.Inc()
	case actors.EventTxnTimedOutAbort:
		m.txnTimedOutAborts.Inc()
	case actors.EventTxnMarkersLatency:
		m.txnMarkers.WithLabelValues(e.Kind).Observe(e.Value)
	case actors.EventTxnPartitionLoad:
		m.txnLoad.Observe(e.Value)
	}
}

// FetchBytesOut counts record bytes a Fetch response carries for topic
// (the wire/handlers hook): to a consumer by topic, to a follower
// (replication) for all topics, as Kafka's BrokerTopicStats.updateBytesOut.
func (m *metrics) FetchBytesOut(topic string, n int64, replication bool) {
	switch {
	case n <= 0:
	case replication:
		m.replicationBytesOut.Add(float64(n))
	default:
		m.bytesOut.WithLabelValues(topic).Add(float64(n))
	}
}

// requestDone records one answered request.
func (m *metrics) requestDone(t *server.RequestTiming) {
	name := apiName(t.Key)
	names := []string{name}
	if req, ok := t.Request.(*kmsg.FetchRequest); ok {
		// Kafka's RequestMetrics count a Fetch under FetchFollower or
		// FetchConsumer as well as Fetch.
		if req.ReplicaID >= 0 {
			names = append(names, "FetchFollower")
		} else {
			names = append(names, "FetchConsumer")
		}
	}
	version := strconv.Itoa(int(t.Version))
	for _, n := range names {
		m.requests.WithLabelValues(n, version).Inc()
	}
	obs := func(phase string, d time.Duration) {
		if d < 0 {
			d = 0
		}
		for _, n := range names {
			m.reqTime.WithLabelValues(n, phase).Observe(d.Seconds())
		}
	}
	obs("queue", t.Dispatched.Sub(t.Received))
	obs("local", t.Handled.Sub(t.Dispatched))
	obs("remote", t.Resolved.Sub(t.Handled))
	obs("send", t.Sent.Sub(t.Resolved))
	obs("total", t.Sent.Sub(t.Received))

	if req, ok := t.Request.(*kmsg.ProduceRequest); ok {
		m.produced(req, t.Response.Msg)
		return
	}
	if t.Response.Msg != nil {
		countErrors(reflect.ValueOf(t.Response.Msg), func(code int16) {
			m.errors.WithLabelValues(name, errName(code)).Inc()
		})
	}
}

func errName(code int16) string {
	if e := kerr.ErrorForCode(code); e != nil {
		if ke, ok := e.(*kerr.Error); ok {
			return ke.Message
		}
		return e.Error()
	}
	return strconv.Itoa(int(code))
}

// produced counts bytes and records of the partitions the broker accepted
// (error code 0; acks=0 has no response and counts everything sent), and
// the partitions' error codes.
func (m *metrics) produced(req *kmsg.ProduceRequest, msg kmsg.Response) {
	resp, _ := msg.(*kmsg.ProduceResponse)
	for ti := range req.Topics {
		rt := &req.Topics[ti]
		var bytes, recs int64
		for pi := range rt.Partitions {
			rp := &rt.Partitions[pi]
			if resp != nil {
				code := partitionCode(resp, rt.Topic, rp.Partition, ti, pi)
				if code != 0 {
					m.errors.WithLabelValues("Produce", errName(code)).Inc()
					continue
				}
			}
			bytes += int64(len(rp.Records))
			recs += countRecords(rp.Records)
		}
		if bytes > 0 {
			m.bytesIn.WithLabelValues(rt.Topic).Add(float64(bytes))
			m.messagesIn.WithLabelValues(rt.Topic).Add(float64(recs))
		}
	}
}

// partitionCode finds a partition's error code in a ProduceResponse,
// first at the request's own position (handlers answer in request order).
func partitionCode(resp *kmsg.ProduceResponse, topic string, p int32, ti, pi int) int16 {
	if ti < len(resp.Topics) && resp.Topics[ti].Topic == topic {
		ps := resp.Topics[ti].Partitions
		if pi < len(ps) && ps[pi].Partition == p {
			return ps[pi].ErrorCode
		}
	}
	for _, t := range resp.Topics {
		if t.Topic != topic {
			continue
		}
		for _, rp := range t.Partitions {
			if rp.Partition == p {
				return rp.ErrorCode
			}
		}
	}
	return 0
}

// countRecords sums the record counts of the v2 record batches in b
// (batch header: baseOffset int64, batchLength int32, …, magic at 16,
// recordCount int32 at 57); a v0/v1 message set counts one per entry.
func countRecords(b []byte) int64 {
	var n int64
	for len(b) >= 17 {
		length := int64(binary.BigEndian.Uint32(b[8:12]))
		size := 12 + length
		if length < 0 || size > int64(len(b)) {
			break
		}
		if b[16] == 2 && size >= 61 {
			n += int64(int32(binary.BigEndian.Uint32(b[57:61])))
		} else {
			n++
		}
		b = b[size:]
	}
	return n
}

var int16Type = reflect.TypeOf(int16(0))

// countErrors calls f for every non-zero ErrorCode field in a kmsg
// response (top level, per topic, per partition, per group…).
func countErrors(v reflect.Value, f func(int16)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			countErrors(v.Elem(), f)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct || v.Type().Elem().Kind() == reflect.Pointer {
			for i := 0; i < v.Len(); i++ {
				countErrors(v.Index(i), f)
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			fv := v.Field(i)
			if sf.Name == "ErrorCode" && sf.Type == int16Type {
				if c := int16(fv.Int()); c != 0 {
					f(c)
				}
				continue
			}
			switch fv.Kind() {
			case reflect.Slice, reflect.Struct, reflect.Pointer:
				countErrors(fv, f)
			}
		}
	}
}

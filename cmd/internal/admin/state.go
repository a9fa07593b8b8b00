package admin

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/actors"
	"gregor/actors/txncoordinator"
	"gregor/partition"
	"gregor/replication/metadata"
)

// PartitionSource lists the partitions hosted here (*partition.Manager).
type PartitionSource interface {
	Partitions() []*partition.Handle
}

// stateCollector computes the gauges that are a function of current
// state at scrape time, so nothing has to keep them up to date.
type stateCollector struct {
	brokerID int32
	parts    PartitionSource
	snapshot func() *metadata.Snapshot // nil = no metadata
	active   func() bool               // is this broker the active controller; nil = the snapshot's controller id
	// eventQueue is the controller's event queue size (ok false: not
	// answered, no sample); nil = no gauge.
	eventQueue func() (int, bool)
	// txns is the transaction coordinator's state (ok false: not
	// answered, no sample); nil = no transaction gauges.
	txns func() (txncoordinator.Stats, bool)
	inst *actors.Instruments // nil = no actor gauges
}

var (
	descUnderReplicated = prometheus.NewDesc("kafka_server_replicamanager_under_replicated_partitions",
		"Partitions led here whose ISR is smaller than their assigned replicas (Kafka UnderReplicatedPartitions).", nil, nil)
	descUnderMinIsr = prometheus.NewDesc("kafka_server_replicamanager_under_min_isr_partition_count",
		"Partitions led here whose ISR is smaller than min.insync.replicas (Kafka UnderMinIsrPartitionCount).", nil, nil)
	descLeaders = prometheus.NewDesc("kafka_server_replicamanager_leader_count",
		"Partitions led here (Kafka LeaderCount).", nil, nil)
	descPartitions = prometheus.NewDesc("kafka_server_replicamanager_partition_count",
		"Partition replicas hosted here (Kafka PartitionCount).", nil, nil)
	descOfflineLocal = prometheus.NewDesc("kafka_server_replicamanager_offline_replica_count",
		"Replicas hosted here that are offline (KAFKA_STORAGE_ERROR): their actor failed too often and the supervisor gave up, or an operator stopped it.", nil, nil)
	descOffline = prometheus.NewDesc("kafka_controller_kafkacontroller_offline_partitions_count",
		"Partitions without a leader, reported by the active controller only (Kafka OfflinePartitionsCount).", nil, nil)
	descActiveController = prometheus.NewDesc("kafka_controller_kafkacontroller_active_controller_count",
		"1 on the broker that is the active controller, else 0 (Kafka ActiveControllerCount).", nil, nil)
	descEventQueue = prometheus.NewDesc("kafka_controller_controllereventmanager_event_queue_size",
		"Controller events and requests waiting behind the one being handled (Kafka ControllerEventManager EventQueueSize).", nil, nil)
	descTxnIDs = prometheus.NewDesc("kafka_coordinator_transaction_transactional_ids",
		"Transactional ids coordinated here, by Kafka's transaction state (Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, PrepareEpochFence, Dead).", []string{"state"}, nil)
	descTxnActive = prometheus.NewDesc("kafka_coordinator_transaction_active_transactions",
		"Transactions coordinated here that are begun and not yet complete (Ongoing, PrepareCommit, PrepareAbort, PrepareEpochFence).", nil, nil)
	descTxnPendingMarkers = prometheus.NewDesc("kafka_coordinator_transaction_transactionmarkerchannelmanager_pending_markers",
		"Transactions coordinated here whose WriteTxnMarkers are being sent (Kafka's transactionsWithPendingMarkers).", nil, nil)
	descTxnUnknownDest = prometheus.NewDesc("kafka_coordinator_transaction_transactionmarkerchannelmanager_unknown_destination_queue_size",
		"Transaction markers waiting for their partition to have a leader (Kafka kafka.coordinator.transaction:type=TransactionMarkerChannelManager,name=UnknownDestinationQueueSize).", nil, nil)
	descTxnAppendRetry = prometheus.NewDesc("kafka_coordinator_transaction_transactionmarkerchannelmanager_log_append_retry_queue_size",
		"Transaction completions waiting to be appended to __transaction_state again (Kafka kafka.coordinator.transaction:type=TransactionMarkerChannelManager,name=LogAppendRetryQueueSize).", nil, nil)
	descTxnLoading = prometheus.NewDesc("kafka_coordinator_transaction_partitions_loading",
		"__transaction_state partitions led here whose transactions are still being loaded.", nil, nil)
	descMailbox = prometheus.NewDesc("gregor_actor_mailbox_depth",
		"User messages waiting in the mailboxes of live actors, summed by actor kind.", []string{"kind"}, nil)
	descActors = prometheus.NewDesc("gregor_actors",
		"Live actors by kind.", []string{"kind"}, nil)
	descTraceDropped = prometheus.NewDesc("gregor_trace_events_dropped_total",
		"Trace events dropped because a /trace reader was too slow.", nil, nil)
)

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUnderReplicated, descUnderMinIsr, descLeaders, descPartitions,
		descOfflineLocal, descOffline, descActiveController, descEventQueue, descMailbox, descActors, descTraceDropped,
		descTxnIDs, descTxnActive, descTxnPendingMarkers, descTxnUnknownDest, descTxnAppendRetry, descTxnLoading} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if c.parts != nil {
		var under, underMin, leaders, total, offline int
		for _, h := range c.parts.Partitions() {
			total++
			v := h.View()
			if v.Err == kerr.KafkaStorageError {
				offline++
				continue
			}
			if !v.IsLeader() {
				continue
			}
			leaders++
			s := h.State()
			if len(v.ISR) < len(s.Replicas) {
				under++
			}
			if len(v.ISR) < max(s.MinInsyncReplicas, 1) {
				underMin++
			}
		}
		gauge(descUnderReplicated, float64(under))
		gauge(descUnderMinIsr, float64(underMin))
		gauge(descLeaders, float64(leaders))
		gauge(descPartitions, float64(total))
		gauge(descOfflineLocal, float64(offline))
	}
	if c.snapshot != nil {
		snap := c.snapshot()
		active := snap != nil && snap.ControllerID == c.brokerID
		if c.active != nil {
			active = c.active()
		}
		offline := 0
		if active && snap != nil { // nil: elected, nothing published yet
			for _, t := range snap.Topics {
				for _, p := range t.Partitions {
					if p.Leader < 0 {
						offline++
					}
				}
			}
		}
		gauge(descOffline, float64(offline))
		gauge(descActiveController, b2f(active))
	}
	if c.eventQueue != nil {
		if n, ok := c.eventQueue(); ok {
			gauge(descEventQueue, float64(n))
		}
	}
	if c.txns != nil {
		if st, ok := c.txns(); ok {
			for state, n := range st.ByState {
				gauge(descTxnIDs, float64(n), state)
			}
			gauge(descTxnActive, float64(st.Active))
			gauge(descTxnPendingMarkers, float64(st.PendingMarkers))
			gauge(descTxnUnknownDest, float64(st.UnknownDestination))
			gauge(descTxnAppendRetry, float64(st.LogAppendRetry))
			gauge(descTxnLoading, float64(st.Loading))
		}
	}
	if c.inst != nil {
		depth, count := c.inst.MailboxByKind()
		for kind, n := range count {
			gauge(descActors, float64(n), kind)
			gauge(descMailbox, float64(depth[kind]), kind)
		}
		ch <- prometheus.MustNewConstMetric(descTraceDropped, prometheus.CounterValue, float64(c.inst.TraceDropped()))
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

package broker

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// scrape reads the admin listener's /metrics into "name{labels}" → value.
func scrape(t *testing.T, b *Broker) map[string]float64 {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second}
	resp, err := hc.Get("http://" + b.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitMetrics scrapes until every wanted sample has its value (bounded);
// the coordinator's markers and timed-out aborts complete after the
// client's request is answered, with no event the test could await.
func waitMetrics(t *testing.T, b *Broker, want map[string]float64) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := scrape(t, b)
		var diff []string
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v {
				diff = append(diff, fmt.Sprintf("%s = %v (present %t), want %v", k, g, ok, v))
			}
		}
		if len(diff) == 0 {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics never matched:\n%s", strings.Join(diff, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTransactionCoordinatorMetrics: after a committed transaction, an
// aborted one, one aborted by the coordinator for outliving its timeout
// and one left open, the admin listener's /metrics show each
// transactional id in its state, one active transaction, one timed-out
// abort, a marker latency per completed transaction by result, one load
// per __transaction_state partition, and empty marker queues.
func TestTransactionCoordinatorMetrics(t *testing.T) {
	b, cl := startTxnNode(t, map[string]string{
		"admin.listener": "127.0.0.1:0",
		"transaction.abort.timed.out.transaction.cleanup.interval.ms": "50",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "m"); err != nil {
		t.Fatal(err)
	}
	txn := func(id string, commit bool) {
		t.Helper()
		p, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()[0].String()), kgo.TransactionalID(id), kgo.DefaultProduceTopic("m"))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"a", "b", "c"} {
			if err := p.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
		}
		if err := p.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("end %s: %v", id, err)
		}
	}
	txn("m-commit", true)
	txn("m-abort", false)

	// Raw transactions: one with a 100 ms timeout the coordinator aborts,
	// one with a long timeout that stays open.
	begin := func(id string, timeoutMs int32) (int64, int16) {
		t.Helper()
		ir := kmsg.NewPtrInitProducerIDRequest()
		ir.TransactionalID, ir.TransactionTimeoutMillis = &id, timeoutMs
		init := request(t, cl, ir, func(r *kmsg.InitProducerIDResponse) int16 { return r.ErrorCode })
		if init.ErrorCode != 0 {
			t.Fatalf("init %s: %v", id, kerr.ErrorForCode(init.ErrorCode))
		}
		a := kmsg.NewPtrAddPartitionsToTxnRequest()
		a.TransactionalID, a.ProducerID, a.ProducerEpoch = id, init.ProducerID, init.ProducerEpoch
		at := kmsg.NewAddPartitionsToTxnRequestTopic()
		at.Topic, at.Partitions = "m", []int32{0, 1}
		a.Topics = append(a.Topics, at)
		resp := request(t, cl, a, func(r *kmsg.AddPartitionsToTxnResponse) int16 { return r.Topics[0].Partitions[0].ErrorCode })
		for _, p := range resp.Topics[0].Partitions {
			if p.ErrorCode != 0 {
				t.Fatalf("add %s: %v", id, kerr.ErrorForCode(p.ErrorCode))
			}
		}
		return init.ProducerID, init.ProducerEpoch
	}
	pid, epoch := begin("m-timeout", 100)
	begin("m-open", 60000)

	got := waitMetrics(t, b, map[string]float64{
		`kafka_coordinator_transaction_transactional_ids{state="CompleteCommit"}`:                      1,
		`kafka_coordinator_transaction_transactional_ids{state="CompleteAbort"}`:                       2,
		`kafka_coordinator_transaction_transactional_ids{state="Ongoing"}`:                             1,
		`kafka_coordinator_transaction_transactional_ids{state="PrepareAbort"}`:                        0,
		`kafka_coordinator_transaction_active_transactions`:                                            1,
		`kafka_coordinator_transaction_timed_out_aborts_total`:                                         1,
		`kafka_coordinator_transaction_marker_latency_seconds_count{result="commit"}`:                  1,
		`kafka_coordinator_transaction_marker_latency_seconds_count{result="abort"}`:                   2,
		`kafka_coordinator_transaction_transactionmarkerchannelmanager_pending_markers`:                0,
		`kafka_coordinator_transaction_transactionmarkerchannelmanager_unknown_destination_queue_size`: 0,
		`kafka_coordinator_transaction_transactionmarkerchannelmanager_log_append_retry_queue_size`:    0,
		`kafka_coordinator_transaction_partitions_loading`:                                             0,
		// transaction.state.log.num.partitions=5, each loaded once.
		`kafka_server_transaction_coordinator_metrics_partition_load_time_seconds_count`: 5,
	})
	if s := got[`kafka_coordinator_transaction_marker_latency_seconds_sum{result="commit"}`]; s <= 0 || s > 20 {
		t.Errorf("commit marker latency sum %v s", s)
	}
	// The timed-out abort fenced the producer: its epoch was bumped.
	e := kmsg.NewPtrEndTxnRequest()
	e.TransactionalID, e.ProducerID, e.ProducerEpoch, e.Commit = "m-timeout", pid, epoch, true
	er := request(t, cl, e, func(r *kmsg.EndTxnResponse) int16 { return r.ErrorCode })
	if er.ErrorCode != kerr.InvalidProducerEpoch.Code && er.ErrorCode != kerr.ProducerFenced.Code {
		t.Fatalf("commit of the timed-out transaction: %v, want the producer fenced", kerr.ErrorForCode(er.ErrorCode))
	}
}

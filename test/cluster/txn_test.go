package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/test/harness"
)

// txnCleanupInterval is the brokers'
// transaction.abort.timed.out.transaction.cleanup.interval.ms: short, so
// the timeout scenario's abort comes within a second of the deadline.
const txnCleanupInterval = 500 * time.Millisecond

// expiringTimeout is the transaction.timeout.ms of the transaction the
// coordinator kill leaves behind. The kill comes well within it, so the
// new coordinator is the one that times it out, about when the failover
// (some 4 s) is done: from the start time it loads, not its load time.
const expiringTimeout = 5 * time.Second

// TestClusterTransactions runs Kafka's transaction clients against three
// broker processes on a real ZooKeeper with every topic at RF 3 and
// min.insync.replicas=2, __transaction_state included
// (transaction.state.log.replication.factor=3, min.isr=2). The scenarios
// share the cluster but no topic or transactional id, in an order that
// keeps them apart: the healthy-cluster ones first, then the coordinator
// kill (whose broker returns), then the pipeline's coordinator kill
// (whose broker stays down), then one that leaves a single broker.
func TestClusterTransactions(t *testing.T) {
	c := startCluster(t, 3, map[string]string{
		"min.insync.replicas":                                         "2",
		"transaction.state.log.replication.factor":                    "3",
		"transaction.state.log.min.isr":                               "2",
		"transaction.abort.timed.out.transaction.cleanup.interval.ms": strconv.Itoa(int(txnCleanupInterval / time.Millisecond)),
		"group.initial.rebalance.delay.ms":                            "0",
	}, nil)
	t.Run("GroupTransactSession", func(t *testing.T) { txnPipeline(t, c.on(t)) })
	t.Run("librdkafka", func(t *testing.T) { txnConfluent(t, c.on(t)) })
	t.Run("Sarama", func(t *testing.T) { txnSarama(t, c.on(t)) })
	t.Run("ZombieFenced", func(t *testing.T) { txnZombie(t, c.on(t)) })
	t.Run("CoordinatorTimeout", func(t *testing.T) { txnTimeout(t, c.on(t)) })
	t.Run("CoordinatorKilled", func(t *testing.T) { txnCoordinatorKilled(t, c.on(t)) })
	t.Run("PipelineCoordinatorKilled", func(t *testing.T) { txnPipelineKilled(t, c.on(t)) })
	t.Run("StateLogBelowMinISR", func(t *testing.T) { txnBelowMinISR(t, c.on(t)) })
}

// on is c reporting to t (a subtest): helpers fail and register cleanups
// on the test whose goroutine calls them.
func (c *cluster) on(t *testing.T) *cluster {
	cc := *c
	cc.t = t
	return &cc
}

// txnPipeline: franz-go's GroupTransactSession consuming one replicated
// topic and producing to another, every third transaction aborted; the
// read_committed output holds every input exactly once.
func txnPipeline(t *testing.T, c *cluster) {
	c.createTopic("eos-in", 3, 3, nil)
	c.createTopic("eos-out", 3, 3, nil)
	p := harness.Pipeline{Seeds: c.seeds(), TxnID: "eos-pipeline", Group: "eos-group", In: "eos-in", Out: "eos-out", N: 300}
	harness.ProduceInputs(t, p.Seeds, p.In, p.N)
	committed, aborted := p.Run(t)
	if committed != p.N || aborted == 0 {
		t.Fatalf("committed %d records in all (want %d) with %d aborted transactions (want some)", committed, p.N, aborted)
	}
	p.CheckOutput(t)
	c.waitStable("eos-out", 10*time.Second)
}

// txnPipelineKilled: the GroupTransactSession pipeline again, with the
// broker coordinating its transactional id killed with SIGKILL once a
// third of the inputs are committed. The application restarts its session
// on each error; the read_committed output still holds every input
// exactly once.
func txnPipelineKilled(t *testing.T, c *cluster) {
	c.createTopic("eos2-in", 3, 3, nil)
	c.createTopic("eos2-out", 3, 3, nil)
	p := harness.Pipeline{Seeds: c.seeds(), TxnID: "eos2-pipeline", Group: "eos2-group", In: "eos2-in", Out: "eos2-out", N: 300, Batch: 20, Faults: true, Timeout: 120 * time.Second}
	harness.ProduceInputs(t, p.Seeds, p.In, p.N)
	killed := int32(-1)
	p.AfterCommit = func(committed int) {
		if killed >= 0 || committed < p.N/3 {
			return
		}
		killed = c.txnCoordinator(p.TxnID)
		t.Logf("killing broker %d, the coordinator of %s, after %d committed inputs", killed, p.TxnID, committed)
		c.brokers[killed].Kill()
	}
	start := time.Now()
	committed, aborted := p.Run(t)
	t.Logf("pipeline: %d inputs seen committed, %d aborted transactions, %v", committed, aborted, time.Since(start).Round(time.Millisecond))
	if killed < 0 || aborted == 0 {
		t.Fatalf("coordinator killed: %d, aborted transactions: %d; want both", killed, aborted)
	}
	p.Seeds = c.seeds()
	p.CheckOutput(t)
	for _, topic := range c.topics() {
		c.waitStable(topic, 30*time.Second)
	}
}

// txnBelowMinISR: with one broker left of three, every __transaction_state
// partition's ISR shrinks to it, below transaction.state.log.min.isr=2,
// so the coordinator cannot write a transaction's state: InitProducerId
// is answered COORDINATOR_NOT_AVAILABLE (Kafka's mapping of the log's
// NOT_ENOUGH_REPLICAS) at once, never a producer id whose state was not
// replicated; once the topic's min.insync.replicas is lowered to 1 the
// same request is served. Runs last: it leaves two brokers down.
func txnBelowMinISR(t *testing.T, c *cluster) {
	var survivor int32 = -1
	for _, id := range []int32{1, 2, 3} {
		b := c.brokers[id]
		if !b.Running() {
			continue
		}
		if survivor < 0 {
			survivor = id
			continue
		}
		b.Kill()
	}
	if survivor < 0 {
		t.Fatal("no broker running")
	}
	c.waitFor(fmt.Sprintf("every __transaction_state ISR shrunk to broker %d", survivor), 3*sessionTimeout+30*time.Second, func() (bool, string) {
		for p := int32(0); p < 50; p++ {
			st, ok := c.partitionState("__transaction_state", p)
			if !ok || st.Leader != survivor || len(st.ISR) != 1 {
				return false, fmt.Sprintf("partition %d: %+v", p, st)
			}
		}
		return true, ""
	})
	cl := c.client(kgo.SeedBrokers(c.brokers[survivor].Addr()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrInitProducerIDRequest()
	tid := "below-min-isr"
	req.TransactionalID, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = &tid, 10000, -1, -1
	// To the broker itself: kgo's routed requests retry a retriable
	// error for their retry timeout.
	// The state above is the controller's; the survivor leads those
	// partitions once their LeaderAndIsr has reached it, and answers
	// NOT_COORDINATOR (or COORDINATOR_LOAD_IN_PROGRESS) until then.
	var resp *kmsg.InitProducerIDResponse
	c.waitFor("the survivor answering as the coordinator", 30*time.Second, func() (bool, string) {
		kresp, err := cl.SeedBrokers()[0].Request(ctx, req)
		if err != nil {
			t.Fatalf("InitProducerId: %v", err)
		}
		resp = kresp.(*kmsg.InitProducerIDResponse)
		return resp.ErrorCode != kerr.NotCoordinator.Code && resp.ErrorCode != kerr.CoordinatorLoadInProgress.Code, codeName(resp.ErrorCode)
	})
	if resp.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("InitProducerId with the state log's ISR below min.isr: %s producer %d, want COORDINATOR_NOT_AVAILABLE", codeName(resp.ErrorCode), resp.ProducerID)
	}

	// The refusal was the min.isr: with the topic's min.insync.replicas
	// lowered to 1 (a topic config, applied from /config/changes) the
	// same request gets a producer id.
	one := "1"
	if _, err := c.admin().AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "min.insync.replicas", Value: &one}}, "__transaction_state"); err != nil {
		t.Fatalf("lower min.insync.replicas of __transaction_state: %v", err)
	}
	c.waitFor("InitProducerId served with min.insync.replicas=1", 20*time.Second, func() (bool, string) {
		kresp, err := cl.SeedBrokers()[0].Request(ctx, req)
		if err != nil {
			return false, err.Error()
		}
		r := kresp.(*kmsg.InitProducerIDResponse)
		return r.ErrorCode == 0 && r.ProducerID >= 0, fmt.Sprintf("%s producer %d", codeName(r.ErrorCode), r.ProducerID)
	})
}

// txnConfluent: librdkafka's transactional producer commits and aborts
// over the three brokers.
func txnConfluent(t *testing.T, c *cluster) {
	c.createTopic("rdk-txn", 2, 3, nil)
	harness.ConfluentTransactions(t, strings.Join(c.seeds(), ","), "rdk-txn", "rdk-cluster")
	c.waitStable("rdk-txn", 10*time.Second)
}

// txnSarama: Sarama's transactional producer commits and aborts over the
// three brokers.
func txnSarama(t *testing.T, c *cluster) {
	c.createTopic("sarama-txn", 2, 3, nil)
	harness.SaramaTransactions(t, c.seeds(), "sarama-txn", "sarama-cluster")
	c.waitStable("sarama-txn", 10*time.Second)
}

// txnProducer is a franz-go transactional producer on c writing to topic
// with transaction.timeout.ms timeout. Its retries back off 250 ms (not
// franz-go's exponential default, seconds after a few failed dials to a
// killed coordinator), which keeps the failover scenario short.
func (c *cluster) txnProducer(id, topic string, timeout time.Duration) *kgo.Client {
	return c.client(kgo.TransactionalID(id), kgo.TransactionTimeout(timeout), kgo.DefaultProduceTopic(topic),
		kgo.RetryBackoffFn(func(int) time.Duration { return 250 * time.Millisecond }))
}

// produceTxn begins a transaction on cl and writes vals (keys spread over
// the partitions), waiting for every acknowledgement; it returns the
// first produce error.
func produceTxn(ctx context.Context, t *testing.T, cl *kgo.Client, vals ...string) error {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatalf("begin: %v", err)
	}
	rs := make([]*kgo.Record, len(vals))
	for i, v := range vals {
		rs[i] = &kgo.Record{Key: []byte("k" + strconv.Itoa(i)), Value: []byte(v)}
	}
	return cl.ProduceSync(ctx, rs...).FirstErr()
}

// nextTxn begins a transaction on cl and produces one record, returning
// the first error.
func nextTxn(ctx context.Context, cl *kgo.Client, val string) error {
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	return cl.ProduceSync(ctx, &kgo.Record{Key: []byte("k0"), Value: []byte(val)}).FirstErr()
}

// values are prefix0..prefix<n-1>.
func values(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// fenced reports whether err is how franz-go surfaces a fenced producer:
// PRODUCER_FENCED from the coordinator or INVALID_PRODUCER_EPOCH from a
// partition leader.
func fenced(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch)
}

// txnZombie: a second producer with the same transactional id fences the
// first. Its InitProducerId makes the coordinator abort the first one's
// open transaction; the first producer's next produce and its commit
// fail as fenced, and read_committed readers see only the second one's
// records.
func txnZombie(t *testing.T, c *cluster) {
	c.createTopic("txn-zombie", 3, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	old := c.txnProducer("zombie", "txn-zombie", 20*time.Second)
	if err := produceTxn(ctx, t, old, values("old-", 30)...); err != nil {
		t.Fatalf("old producer's first records: %v", err)
	}
	oldTxn := c.describeTxn("zombie")
	if oldTxn.State != "Ongoing" {
		t.Fatalf("old producer's transaction is %s, want Ongoing", oldTxn.State)
	}

	newer := c.txnProducer("zombie", "txn-zombie", 20*time.Second)
	if err := produceTxn(ctx, t, newer, values("new-", 30)...); err != nil {
		t.Fatalf("new producer's records: %v", err)
	}
	if err := newer.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("new producer's commit: %v", err)
	}
	if d := c.waitTxnState("zombie", "CompleteCommit"); d.ProducerID != oldTxn.ProducerID || d.ProducerEpoch <= oldTxn.ProducerEpoch {
		t.Fatalf("after the new producer: producer %d epoch %d, want producer %d with an epoch above %d", d.ProducerID, d.ProducerEpoch, oldTxn.ProducerID, oldTxn.ProducerEpoch)
	}

	after := c.describeTxn("zombie")

	// The zombie's records are refused by the partitions (their producer
	// state has the newer epoch from the abort marker) and franz-go then
	// refuses to commit (OPERATION_NOT_ATTEMPTED: a produce failed).
	// Its abort only marks the producer id for re-initialisation
	// (KIP-360/588: InitProducerId with its old id and epoch), which
	// the coordinator fences: the epoch is neither the current one nor
	// the last before it.
	late := make([]*kgo.Record, 6)
	for i := range late {
		late[i] = &kgo.Record{Key: []byte("k" + strconv.Itoa(i)), Value: []byte("late-" + strconv.Itoa(i))}
	}
	if err := old.ProduceSync(ctx, late...).FirstErr(); !fenced(err) {
		t.Fatalf("zombie's produce after the fence: %v, want PRODUCER_FENCED or INVALID_PRODUCER_EPOCH", err)
	}
	if err := old.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("zombie's commit succeeded")
	}
	if err := old.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatalf("zombie's abort: %v", err)
	}
	if err := nextTxn(ctx, old, "zombie-again"); !fenced(err) {
		t.Fatalf("zombie's next transaction: %v, want PRODUCER_FENCED", err)
	}
	if d := c.describeTxn("zombie"); d.State != "CompleteCommit" || d.ProducerEpoch != after.ProducerEpoch {
		t.Fatalf("after the zombie's attempts: %s epoch %d, want the new producer's CompleteCommit at epoch %d", d.State, d.ProducerEpoch, after.ProducerEpoch)
	}

	c.waitStable("txn-zombie", 20*time.Second)
	got := c.readThrough("txn-zombie", true)
	want := values("new-", 30)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("read_committed output %q, want the new producer's 30 records alone", got)
	}
	// The aborted records are in the log: the abort hid them.
	if all := c.readThrough("txn-zombie", false); len(all) != 60 {
		t.Fatalf("read_uncommitted output has %d records, want 60 (the zombie's 30 and the new 30)", len(all))
	}
}

// txnTimeout: two producers stall past their transaction.timeout.ms and
// the coordinator aborts both with an epoch bump; the partitions' last
// stable offset moves past their records while they are still silent.
// The first then commits: the coordinator refuses it as fenced. The
// second produces first: the partitions refuse its stale epoch with
// INVALID_PRODUCER_EPOCH, and its attempt to re-initialise with the old
// epoch is fenced too; a restarted producer with its id commits.
func txnTimeout(t *testing.T, c *cluster) {
	c.createTopic("txn-timeout", 3, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const timeout = 2 * time.Second
	committer := c.txnProducer("stalled-commit", "txn-timeout", timeout)
	producer := c.txnProducer("stalled-produce", "txn-timeout", timeout)
	begun := map[string]kadm.DescribedTransaction{}
	for id, cl := range map[string]*kgo.Client{"stalled-commit": committer, "stalled-produce": producer} {
		if err := produceTxn(ctx, t, cl, values(id+"-", 20)...); err != nil {
			t.Fatalf("%s: records: %v", id, err)
		}
		begun[id] = c.describeTxn(id)
		if begun[id].State != "Ongoing" {
			t.Fatalf("%s: transaction is %s, want Ongoing", id, begun[id].State)
		}
	}
	if lso, hw := c.offsets("txn-timeout"); !lagging(lso, hw) {
		t.Fatalf("open transactions but read_committed end %v equals the high watermark %v", lso, hw)
	}
	// Records behind the open transactions, and a read_committed
	// consumer (franz-go's default 5 s fetch wait) parked at the last
	// stable offset: the abort must release them to it.
	behind := c.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var rs []*kgo.Record
	for p := int32(0); p < 3; p++ {
		rs = append(rs, &kgo.Record{Topic: "txn-timeout", Partition: p, Value: []byte("behind-" + strconv.Itoa(int(p)))})
	}
	if err := behind.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("records behind the open transactions: %v", err)
	}
	parked := c.client(kgo.ConsumeTopics("txn-timeout"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	released := make(chan []string, 1)
	var early atomic.Bool // the consumer had them: checked against an Ongoing state answered later
	go func() {
		var got []string
		for len(got) < len(rs) && ctx.Err() == nil {
			parked.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		}
		early.Store(len(got) > 0)
		released <- got
	}()

	// The stall: nothing from the producers while the coordinator's
	// cleanup (every txnCleanupInterval) finds the transactions expired.
	start := time.Now()
	c.waitFor("the coordinator to abort the stalled transactions", timeout+10*time.Second, func() (bool, string) {
		var states []string
		had := early.Load()
		for id, b := range begun {
			d := c.describeTxn(id)
			if had && d.State == "Ongoing" {
				t.Fatalf("a read_committed consumer got records behind %s's transaction while it is still open", id)
			}
			if d.State != "CompleteAbort" || d.ProducerEpoch <= b.ProducerEpoch {
				states = append(states, fmt.Sprintf("%s: %s epoch %d", id, d.State, d.ProducerEpoch))
			}
		}
		return len(states) == 0, fmt.Sprint(states)
	})
	aborted := time.Now()
	t.Logf("aborted within %v of the last record (timeout %v)", aborted.Sub(start).Round(time.Millisecond), timeout)
	select {
	case got := <-released:
		slices.Sort(got)
		if want := []string{"behind-0", "behind-1", "behind-2"}; !slices.Equal(got, want) {
			t.Fatalf("the parked read_committed consumer got %q, want %q", got, want)
		}
		t.Logf("the parked read_committed consumer got the records behind the aborted transactions %v after the abort was seen", time.Since(aborted).Round(time.Millisecond))
	case <-ctx.Done():
		t.Fatal("the parked read_committed consumer is still stuck")
	}
	c.waitStable("txn-timeout", 10*time.Second)
	if got := c.readThrough("txn-timeout", true); !slices.Equal(got, []string{"behind-0", "behind-1", "behind-2"}) {
		t.Fatalf("read_committed output %q after the timeout aborts, want the records behind the aborted transactions alone", got)
	}

	if err := committer.EndTransaction(ctx, kgo.TryCommit); !fenced(err) {
		t.Fatalf("the stalled producer's commit: %v, want PRODUCER_FENCED or INVALID_PRODUCER_EPOCH", err)
	}

	// Keys k0..k4 go to partitions the transaction already added, so the
	// produce reaches the partition leaders (not AddPartitionsToTxn).
	late := make([]*kgo.Record, 5)
	for i := range late {
		late[i] = &kgo.Record{Key: []byte("k" + strconv.Itoa(i)), Value: []byte("late-" + strconv.Itoa(i))}
	}
	if err := producer.ProduceSync(ctx, late...).FirstErr(); !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("the stalled producer's produce: %v, want INVALID_PRODUCER_EPOCH", err)
	}
	if err := producer.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("commit after a refused produce succeeded")
	}
	// franz-go's abort marks the id for KIP-588 re-initialisation with
	// the old epoch; the coordinator fences it, as Kafka 2.8–3.9 do (a
	// timeout abort is an epoch fence, which keeps no last epoch).
	if err := producer.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatalf("abort after the refused produce: %v", err)
	}
	if err := nextTxn(ctx, producer, "fenced-"); !fenced(err) {
		t.Fatalf("the timed-out producer's next transaction: %v, want PRODUCER_FENCED", err)
	}

	// A restarted producer with the same id takes over the producer id.
	restarted := c.txnProducer("stalled-produce", "txn-timeout", 20*time.Second)
	if err := produceTxn(ctx, t, restarted, values("after-", 5)...); err != nil {
		t.Fatalf("restarted producer's records: %v", err)
	}
	if err := restarted.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("restarted producer's commit: %v", err)
	}
	if d, b := c.waitTxnState("stalled-produce", "CompleteCommit"), begun["stalled-produce"]; d.State != "CompleteCommit" || d.ProducerID != b.ProducerID || d.ProducerEpoch <= b.ProducerEpoch+1 {
		t.Fatalf("after the restart: %+v, want CompleteCommit with producer id %d above epoch %d", d, b.ProducerID, b.ProducerEpoch+1)
	}
	c.waitStable("txn-timeout", 10*time.Second)
	got := c.readThrough("txn-timeout", true)
	if want := append(values("after-", 5), "behind-0", "behind-1", "behind-2"); !slices.Equal(got, want) {
		t.Fatalf("read_committed output %q, want %q", got, want)
	}
}

// txnCoordinatorKilled: the broker coordinating four transactional ids
// is killed with SIGKILL while three have a transaction open and the
// fourth's commit is on its way (its EndTxn sent as the kill comes:
// answered or not, with or without its markers written). After failover
// the first producer's commit reaches the new coordinator and commits;
// the second, abandoned, is aborted when a restarted producer with its
// id initialises; the third, abandoned for good, is timed out by the new
// coordinator; the racing one ends committed or aborted. Every
// partition's last stable offset reaches its high watermark and each
// transaction's records are visible read_committed exactly when it
// committed. The killed broker then returns and, after a preferred
// election, coordinates again from the state it reloads.
func txnCoordinatorKilled(t *testing.T, c *cluster) {
	c.createTopic("txn-failover", 3, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	coord := c.txnCoordinator("fo-live")
	ids := c.sameCoordinator(coord, "fo-", 100, 3)
	abandonedID, endingID, expiringID := ids[0], ids[1], ids[2]
	t.Logf("coordinator of fo-live, %s, %s and %s: broker %d", abandonedID, endingID, expiringID, coord)

	live := c.txnProducer("fo-live", "txn-failover", 30*time.Second)
	if err := produceTxn(ctx, t, live, values("live-", 30)...); err != nil {
		t.Fatalf("live producer's records: %v", err)
	}
	abandoned := c.txnProducer(abandonedID, "txn-failover", 60*time.Second)
	if err := produceTxn(ctx, t, abandoned, values("abandoned-", 30)...); err != nil {
		t.Fatalf("abandoned producer's records: %v", err)
	}
	ending := c.txnProducer(endingID, "txn-failover", 30*time.Second)
	if err := produceTxn(ctx, t, ending, values("ending-", 30)...); err != nil {
		t.Fatalf("ending producer's records: %v", err)
	}
	// Never ends its transaction: the new coordinator times it out from
	// the start time it loads.
	expiring := c.txnProducer(expiringID, "txn-failover", expiringTimeout)
	if err := produceTxn(ctx, t, expiring, values("expiring-", 30)...); err != nil {
		t.Fatalf("expiring producer's records: %v", err)
	}
	expiringTxn := c.describeTxn(expiringID)
	for _, id := range []string{"fo-live", abandonedID, endingID, expiringID} {
		if d := c.describeTxn(id); d.State != "Ongoing" {
			t.Fatalf("%s is %s before the kill, want Ongoing", id, d.State)
		}
	}
	abandoned.Close()
	expiring.Close()

	endErr := make(chan error, 1)
	go func() { endErr <- ending.EndTransaction(ctx, kgo.TryCommit) }()
	c.brokers[coord].Kill()
	killed := time.Now()
	var moved int32
	c.waitFor("a new coordinator for fo-live", 3*sessionTimeout+20*time.Second, func() (bool, string) {
		n, err := c.tryTxnCoordinator("fo-live")
		moved = n
		return err == nil && n != coord, fmt.Sprint(n, err)
	})
	step := func(what string) { t.Logf("%v after the kill: %s", time.Since(killed).Round(time.Millisecond), what) }
	step(fmt.Sprintf("coordinator %d → %d", coord, moved))

	if err := live.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("live producer's commit after the failover: %v", err)
	}
	// An unconfirmed commit (the coordinator died with the request) is
	// retried as an abort, as franz-go documents: that re-initialises the
	// producer id, which fence-aborts the transaction if it was still
	// open.
	step("fo-live committed")
	restarted := c.txnProducer(abandonedID, "txn-failover", 30*time.Second)
	if err := produceTxn(ctx, t, restarted, values("restarted-", 10)...); err != nil {
		t.Fatalf("restarted producer's records: %v", err)
	}
	if err := restarted.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("restarted producer's commit: %v", err)
	}
	step("the restarted producer committed")
	// An unconfirmed commit (the coordinator died with the request) is
	// retried as an abort, as franz-go documents: that re-initialises the
	// producer id, which fence-aborts the transaction if it was still
	// open.
	wantEnding := "CompleteCommit"
	if err := <-endErr; err != nil {
		t.Logf("commit racing the kill: %v", err)
		if err := ending.EndTransaction(ctx, kgo.TryAbort); err != nil {
			t.Fatalf("abort after the unconfirmed commit: %v", err)
		}
		wantEnding = ""
	}
	step("the commit racing the kill returned")
	if d := c.waitTxnState(expiringID, "CompleteAbort"); d.ProducerEpoch <= expiringTxn.ProducerEpoch {
		t.Fatalf("%s aborted at epoch %d, want a bump above %d", expiringID, d.ProducerEpoch, expiringTxn.ProducerEpoch)
	}
	step(expiringID + " timed out")

	c.waitStable("txn-failover", 30*time.Second)
	step("txn-failover stable")
	for _, id := range []string{"fo-live", abandonedID} {
		c.waitTxnState(id, "CompleteCommit")
	}
	var endingState string
	c.waitFor(endingID+" completed", 20*time.Second, func() (bool, string) {
		endingState = c.describeTxn(endingID).State
		return endingState == "CompleteCommit" || endingState == "CompleteAbort" || (wantEnding == "" && endingState == "Empty"), endingState
	})
	if wantEnding != "" && endingState != wantEnding {
		t.Fatalf("%s is %s after a confirmed commit, want %s", endingID, endingState, wantEnding)
	}
	t.Logf("the commit racing the kill ended %s", endingState)
	want := append(values("live-", 30), values("restarted-", 10)...)
	if endingState == "CompleteCommit" {
		want = append(want, values("ending-", 30)...)
	}
	got := c.readThrough("txn-failover", true)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("read_committed output %q, want %q", got, want)
	}
	// Every partition of the cluster, the other scenarios' topics and the
	// internal ones included, is stable once idle.
	for _, topic := range c.topics() {
		c.waitStable(topic, 30*time.Second)
	}
	step("every topic stable")

	// The killed broker returns (once its registration expired), catches
	// up and, after a preferred election, coordinates fo-live again from
	// the state it loads from its replica: the same producer id and epoch,
	// and the live producer's next transaction commits through it.
	before := c.describeTxn("fo-live")
	c.waitUnregistered(coord)
	c.brokers[coord].Start()
	step(fmt.Sprintf("broker %d restarted", coord))
	c.waitFor(fmt.Sprintf("broker %d coordinating fo-live again", coord), 60*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// Refused (PREFERRED_LEADER_NOT_AVAILABLE) until it is back in the ISRs.
		_, _ = c.admin().ElectLeaders(ctx, kadm.ElectPreferredReplica, nil)
		n, err := c.tryTxnCoordinator("fo-live")
		return err == nil && n == coord, fmt.Sprint(n, err)
	})
	step(fmt.Sprintf("broker %d coordinates fo-live again", coord))
	// The old leader answers for fo-live until its own LeaderAndIsr
	// (follower) arrives, a moment after the new leader's: wait for
	// DescribeTransactions to come from the returned coordinator too.
	c.waitFor(fmt.Sprintf("DescribeTransactions answered by broker %d", coord), 30*time.Second, func() (bool, string) {
		d := c.describeTxn("fo-live")
		return d.Coordinator == coord, fmt.Sprint(d.Coordinator)
	})
	if d := c.describeTxn("fo-live"); d.Coordinator != coord || d.State != before.State || d.ProducerID != before.ProducerID || d.ProducerEpoch != before.ProducerEpoch {
		t.Fatalf("fo-live on the returned coordinator: %+v, want %s with producer %d epoch %d", d, before.State, before.ProducerID, before.ProducerEpoch)
	}
	if err := produceTxn(ctx, t, live, values("back-", 10)...); err != nil {
		t.Fatalf("live producer's records after the failback: %v", err)
	}
	if err := live.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("live producer's commit after the failback: %v", err)
	}
	c.waitTxnState("fo-live", "CompleteCommit")
	for _, topic := range c.topics() {
		c.waitStable(topic, 30*time.Second)
	}
	want = append(want, values("back-", 10)...)
	slices.Sort(want)
	if got := c.readThrough("txn-failover", true); !slices.Equal(got, want) {
		t.Fatalf("read_committed output after the failback %q, want %q", got, want)
	}
	step("failback done")
}

// txnCoordinator is the broker FindCoordinator (key type 1) names for
// transactional id id, waiting up to 30 s for one (the first lookup
// creates __transaction_state).
func (c *cluster) txnCoordinator(id string) int32 {
	c.t.Helper()
	var node int32 = -1
	c.waitFor("a coordinator for "+id, 30*time.Second, func() (bool, string) {
		n, err := c.tryTxnCoordinator(id)
		node = n
		return err == nil, fmt.Sprint(err)
	})
	return node
}

func (c *cluster) tryTxnCoordinator(id string) (int32, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r := c.admin().FindTxnCoordinators(ctx, id)[id]
	return r.NodeID, r.Err
}

// sameCoordinator returns the first k of prefix0..prefix<n-1> coordinated
// by broker coord, waiting up to 30 s for the __transaction_state
// partitions to have leaders (COORDINATOR_NOT_AVAILABLE until then).
func (c *cluster) sameCoordinator(coord int32, prefix string, n, k int) []string {
	c.t.Helper()
	ids := values(prefix, n)
	var out []string
	c.waitFor(fmt.Sprintf("%d transactional ids coordinated by broker %d", k, coord), 30*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rs := c.admin().FindTxnCoordinators(ctx, ids...)
		out = out[:0]
		unavailable := 0
		for _, id := range ids {
			r := rs[id]
			if r.Err != nil {
				unavailable++
			} else if r.NodeID == coord && len(out) < k {
				out = append(out, id)
			}
		}
		return len(out) == k, fmt.Sprintf("%d found, %d without a coordinator", len(out), unavailable)
	})
	return out
}

// topics lists every topic of the cluster, internal ones included.
func (c *cluster) topics() []string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	td, err := c.admin().ListTopicsWithInternal(ctx)
	if err != nil {
		c.t.Fatalf("list topics: %v", err)
	}
	return td.Names()
}

// describeTxn is DescribeTransactions of id (asked of its coordinator).
func (c *cluster) describeTxn(id string) kadm.DescribedTransaction {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ds, err := c.admin().DescribeTransactions(ctx, id)
	if err != nil {
		c.t.Fatalf("describe transaction %s: %v", id, err)
	}
	d, ok := ds[id]
	if !ok || d.Err != nil {
		c.t.Fatalf("describe transaction %s: %+v", id, d)
	}
	return d
}

// offsets lists topic's read_committed end (last stable offset) and high
// watermark per partition; a partition whose lookup failed is absent.
func (c *cluster) offsets(topic string) (lso, hw map[int32]int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	adm := c.admin()
	lso, hw = map[int32]int64{}, map[int32]int64{}
	if l, err := adm.ListCommittedOffsets(ctx, topic); err == nil {
		l.Each(func(o kadm.ListedOffset) {
			if o.Err == nil {
				lso[o.Partition] = o.Offset
			}
		})
	}
	if l, err := adm.ListEndOffsets(ctx, topic); err == nil {
		l.Each(func(o kadm.ListedOffset) {
			if o.Err == nil {
				hw[o.Partition] = o.Offset
			}
		})
	}
	return lso, hw
}

// lagging reports whether some partition's last stable offset is below
// its high watermark.
func lagging(lso, hw map[int32]int64) bool {
	for p, h := range hw {
		if l, ok := lso[p]; ok && l < h {
			return true
		}
	}
	return false
}

// waitStable waits until every partition of topic answers ListOffsets
// read_committed with its high watermark: no transaction is open on it
// and every marker is written and replicated.
func (c *cluster) waitStable(topic string, d time.Duration) {
	c.t.Helper()
	c.waitFor("read_committed end = high watermark on "+topic, d, func() (bool, string) {
		lso, hw := c.offsets(topic)
		if len(hw) == 0 || len(lso) != len(hw) {
			return false, fmt.Sprintf("lso %v hw %v", lso, hw)
		}
		return !lagging(lso, hw), fmt.Sprintf("lso %v hw %v", lso, hw)
	})
}

// waitTxnState waits up to 20 s until DescribeTransactions shows id in
// state (EndTxn is answered once Prepare* is logged; the markers and the
// Complete* record follow) and returns the description.
func (c *cluster) waitTxnState(id, state string) kadm.DescribedTransaction {
	c.t.Helper()
	var d kadm.DescribedTransaction
	c.waitFor(id+" in state "+state, 20*time.Second, func() (bool, string) {
		d = c.describeTxn(id)
		return d.State == state, d.State
	})
	return d
}

// readThrough appends a sentinel record (non-transactional) to every
// partition of topic, then reads the topic from the start, read_committed
// when committed is set, until it has seen every sentinel: what it
// returns (sorted, sentinels left out) is everything visible before them,
// with no wait for records that might still come. It fails the test after
// 30 s.
func (c *cluster) readThrough(topic string, committed bool) []string {
	c.t.Helper()
	_, hw := c.offsets(topic)
	if len(hw) == 0 {
		c.t.Fatalf("no partitions of %s listed", topic)
	}
	tag := "sentinel-" + strconv.FormatInt(time.Now().UnixNano(), 10) + "-"
	pr := c.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for p := range hw {
		rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(tag + strconv.Itoa(int(p)))})
	}
	if err := pr.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		c.t.Fatalf("sentinels to %s: %v", topic, err)
	}
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl := c.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(iso), kgo.FetchMaxWait(200*time.Millisecond))
	var out []string
	for seen := 0; seen < len(hw); {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			c.t.Fatalf("read %s: %d of %d sentinels after 30 s (%d records)", topic, seen, len(hw), len(out))
		}
		fs.EachError(func(tp string, p int32, err error) { c.t.Logf("fetch %s-%d (retried): %v", tp, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			v := string(r.Value)
			switch {
			case strings.HasPrefix(v, tag):
				seen++
			case strings.HasPrefix(v, "sentinel-"):
			default:
				out = append(out, v)
			}
		})
	}
	cl.Close()
	slices.Sort(out)
	return out
}

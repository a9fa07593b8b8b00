package broker

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"go.uber.org/zap"

	"gregor/actors/txncoordinator"
	"gregor/wire/handlers"
)

// startTxnNode starts a zero-config single node (embedded metadata, no
// transaction.state.log.* set: replication factor 3 and min.isr 2 are
// capped at the one broker) and a plain client on it.
func startTxnNode(t *testing.T, props map[string]string) (*Broker, *kgo.Client) {
	t.Helper()
	props["log.dirs"] = filepath.Join(t.TempDir(), "data")
	props["transaction.state.log.num.partitions"] = "5"
	cfg, _ := configOnFreePort(t, props)
	b, err := Start(cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()[0].String()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return b, cl
}

// request sends req, retrying while the coordinator loads or is being
// created, and returns the response.
func request[T kmsg.Response](t *testing.T, cl *kgo.Client, req kmsg.Request, code func(T) int16) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		var kresp kmsg.Response
		var err error
		if _, batched := req.(*kmsg.FindCoordinatorRequest); batched {
			// To the broker itself: kgo's client would shard a batched
			// FindCoordinator and merge the answers in its own order.
			kresp, err = cl.SeedBrokers()[0].Request(ctx, req)
		} else {
			kresp, err = cl.Request(ctx, req)
		}
		if err != nil {
			t.Fatalf("%T: %v", req, err)
		}
		resp := kresp.(T)
		c := code(resp)
		if c != kerr.CoordinatorLoadInProgress.Code && c != kerr.CoordinatorNotAvailable.Code && c != kerr.NotCoordinator.Code {
			return resp
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%T still answered %v", req, kerr.ErrorForCode(c))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestTransactionCoordinatorOnSingleNode drives the coordinator's APIs over
// the wire on a single node: FindCoordinator finds it (creating
// __transaction_state), InitProducerId hands out ids and bumps epochs,
// fences, validates the timeout; AddPartitionsToTxn checks partitions;
// EndTxn refuses what Kafka refuses.
func TestTransactionCoordinatorOnSingleNode(t *testing.T) {
	b, cl := startTxnNode(t, map[string]string{"transaction.max.timeout.ms": "60000"})
	ctx := context.Background()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "out"); err != nil {
		t.Fatal(err)
	}

	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorType, fc.CoordinatorKeys = 1, []string{"tx-a", "tx-b"}
	fr := request(t, cl, fc, func(r *kmsg.FindCoordinatorResponse) int16 {
		for _, c := range r.Coordinators {
			if c.ErrorCode != 0 {
				return c.ErrorCode
			}
		}
		return 0
	})
	if len(fr.Coordinators) != 2 || fr.Coordinators[0].NodeID != b.cfg.BrokerID || fr.Coordinators[1].Key != "tx-b" {
		t.Fatalf("FindCoordinator %+v", fr.Coordinators)
	}
	// __transaction_state as Kafka creates it, capped for the single node.
	adm := kadm.NewClient(cl)
	td, err := adm.ListTopicsWithInternal(ctx, txncoordinator.TopicName)
	if err != nil || td[txncoordinator.TopicName].Err != nil || len(td[txncoordinator.TopicName].Partitions) != 5 {
		t.Fatalf("topic %+v %v", td[txncoordinator.TopicName], err)
	}
	rc, err := adm.DescribeTopicConfigs(ctx, txncoordinator.TopicName)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"cleanup.policy": "compact", "min.insync.replicas": "1", "segment.bytes": "104857600", "compression.type": "uncompressed"}
	for _, c := range rc[0].Configs {
		if w, ok := want[c.Key]; ok {
			if c.MaybeValue() != w {
				t.Errorf("%s = %q, want %q", c.Key, c.MaybeValue(), w)
			}
			delete(want, c.Key)
		}
	}
	if len(want) != 0 {
		t.Errorf("configs missing: %v", want)
	}

	// kgo sends the highest version both sides support: an old client is
	// one pinned to Kafka 2.5's versions (InitProducerId v3).
	old, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()[0].String()), kgo.MaxVersions(kversion.V2_5_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	init := func(version int16, id string, timeout int32, pid int64, epoch int16) *kmsg.InitProducerIDResponse {
		r := kmsg.NewPtrInitProducerIDRequest()
		r.TransactionalID, r.TransactionTimeoutMillis, r.ProducerID, r.ProducerEpoch = &id, timeout, pid, epoch
		c := cl
		if version < 4 {
			c = old
		}
		return request(t, c, r, func(r *kmsg.InitProducerIDResponse) int16 { return r.ErrorCode })
	}
	first := init(4, "tx-a", 30000, -1, -1)
	if first.ErrorCode != 0 || first.ProducerID < 0 || first.ProducerEpoch != 0 {
		t.Fatalf("init %+v", first)
	}
	second := init(4, "tx-a", 30000, -1, -1)
	if second.ErrorCode != 0 || second.ProducerID != first.ProducerID || second.ProducerEpoch != 1 {
		t.Fatalf("re-init %+v", second)
	}
	if r := init(4, "tx-a", 30000, first.ProducerID, 0); r.ErrorCode != kerr.ProducerFenced.Code {
		t.Fatalf("stale epoch v4: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := init(3, "tx-a", 30000, first.ProducerID, 0); r.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("stale epoch v3: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := init(4, "tx-a", 60001, -1, -1); r.ErrorCode != kerr.InvalidTransactionTimeout.Code {
		t.Fatalf("timeout above transaction.max.timeout.ms: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := init(4, "tx-a", 30000, first.ProducerID, -1); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("producer id without epoch: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	pid, epoch := second.ProducerID, second.ProducerEpoch

	end := func(commit bool) int16 {
		r := kmsg.NewPtrEndTxnRequest()
		r.Version, r.TransactionalID, r.ProducerID, r.ProducerEpoch, r.Commit = 3, "tx-a", pid, epoch, commit
		return request(t, cl, r, func(r *kmsg.EndTxnResponse) int16 { return r.ErrorCode }).ErrorCode
	}
	if code := end(true); code != kerr.InvalidTxnState.Code {
		t.Fatalf("commit with no transaction: %v", kerr.ErrorForCode(code))
	}

	add := func(topic string, parts ...int32) map[int32]int16 {
		r := kmsg.NewPtrAddPartitionsToTxnRequest()
		r.Version, r.TransactionalID, r.ProducerID, r.ProducerEpoch = 3, "tx-a", pid, epoch
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = topic, parts
		r.Topics = append(r.Topics, rt)
		resp := request(t, cl, r, func(r *kmsg.AddPartitionsToTxnResponse) int16 {
			for _, t := range r.Topics {
				for _, p := range t.Partitions {
					if p.ErrorCode != 0 {
						return p.ErrorCode
					}
				}
			}
			return 0
		})
		out := map[int32]int16{}
		for _, rt := range resp.Topics {
			for _, p := range rt.Partitions {
				out[p.Partition] = p.ErrorCode
			}
		}
		return out
	}
	if got := add("out", 0, 7); got[0] != kerr.OperationNotAttempted.Code || got[7] != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("add with a missing partition: %v", got)
	}
	if got := add("out", 0, 1); got[0] != 0 || got[1] != 0 {
		t.Fatalf("add: %v", got)
	}
	// DescribeTransactions and ListTransactions (kafka-transactions.sh) see it.
	dt, err := adm.DescribeTransactions(ctx, "tx-a")
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := dt["tx-a"]; !ok || d.Err != nil || d.State != "Ongoing" || d.ProducerID != pid || d.ProducerEpoch != epoch || len(d.Topics["out"]) != 2 {
		t.Fatalf("describe %+v", dt)
	}
	lt, err := adm.ListTransactions(ctx, nil, []string{"Ongoing"})
	if err != nil {
		t.Fatal(err)
	}
	if l := lt.TransactionalIDs(); len(l) != 1 || l[0] != "tx-a" {
		t.Fatalf("list ongoing %v", l)
	}
	// v4+ verification (the partition leader's KIP-890 check).
	vr := kmsg.NewPtrAddPartitionsToTxnRequest()
	vr.Version = 4
	vt := kmsg.NewAddPartitionsToTxnRequestTransaction()
	vt.TransactionalID, vt.ProducerID, vt.ProducerEpoch, vt.VerifyOnly = "tx-a", pid, epoch, true
	vtt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	vtt.Topic, vtt.Partitions = "out", []int32{1}
	vt.Topics = append(vt.Topics, vtt)
	vr.Transactions = append(vr.Transactions, vt)
	vresp := request(t, cl, vr, func(r *kmsg.AddPartitionsToTxnResponse) int16 { return r.ErrorCode })
	if len(vresp.Transactions) != 1 || vresp.Transactions[0].Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("verify %+v", vresp)
	}
	// Another producer instance of tx-a fences this one: its transaction
	// is aborted (CONCURRENT_TRANSACTIONS until the abort completes).
	r := kmsg.NewPtrInitProducerIDRequest()
	id := "tx-a"
	r.Version, r.TransactionalID, r.TransactionTimeoutMillis = 4, &id, 30000
	kresp, err := r.RequestWith(ctx, cl)
	if err != nil || kresp.ErrorCode != kerr.ConcurrentTransactions.Code {
		t.Fatalf("init over an ongoing transaction: %v %v", kresp, err)
	}
	if code := end(true); code != kerr.ProducerFenced.Code {
		t.Fatalf("commit of the fenced producer: %v", kerr.ErrorForCode(code))
	}
	if !hasWriteTxnMarkers() {
		t.Skip("the abort's markers need the WriteTxnMarkers handler (API 27, the partition side of issue 11)")
	}
	// The client retries CONCURRENT_TRANSACTIONS until the abort's markers
	// are written and the abort completes.
	var fresh *kmsg.InitProducerIDResponse
	for i := 0; ; i++ {
		if fresh = init(4, "tx-a", 30000, -1, -1); fresh.ErrorCode != kerr.ConcurrentTransactions.Code || i == 500 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if fresh.ErrorCode != 0 || fresh.ProducerID != pid || fresh.ProducerEpoch != epoch+2 {
		t.Fatalf("init after the fence %+v", fresh)
	}
}

func hasWriteTxnMarkers() bool {
	for _, r := range handlers.SupportedRanges() {
		if r.Key == 27 {
			return true
		}
	}
	return false
}

// TestTransactionalProducerOnSingleNode: franz-go's transactional producer
// commits one transaction and aborts the next; a read_committed consumer
// sees exactly the committed records. It needs the partition side of
// issue 11 (transactional produce, WriteTxnMarkers, read_committed fetch).
func TestTransactionalProducerOnSingleNode(t *testing.T) {
	if !hasWriteTxnMarkers() {
		t.Skip("needs the WriteTxnMarkers handler (API 27) and transactional produce, the partition side of issue 11")
	}
	b, cl := startTxnNode(t, map[string]string{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 3, 1, nil, "out"); err != nil {
		t.Fatal(err)
	}
	p, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()[0].String()), kgo.TransactionalID("tx-producer"), kgo.DefaultProduceTopic("out"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	produce := func(commit bool, values ...string) {
		t.Helper()
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			if err := p.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
				t.Fatalf("produce %s: %v", v, err)
			}
		}
		if err := p.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("end (commit %t): %v", commit, err)
		}
	}
	produce(true, "c1", "c2", "c3")
	produce(false, "a1", "a2")
	produce(true, "c4")

	c, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()[0].String()), kgo.ConsumeTopics("out"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := map[string]bool{}
	for len(got) < 4 {
		fs := c.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read_committed saw %v, want c1..c4", got)
		}
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("fetch: %v", err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)] = true })
	}
	for _, v := range []string{"a1", "a2"} {
		if got[v] {
			t.Fatalf("read_committed returned aborted record %s", v)
		}
	}
}

// TestTransactionStateSurvivesRestart: a restarted single node reloads
// __transaction_state when it leads its partitions again: the
// transactional id keeps its producer id (the next epoch is handed out)
// and its ongoing transaction, which a new producer instance fences.
func TestTransactionStateSurvivesRestart(t *testing.T) {
	cfg, _ := configOnFreePort(t, map[string]string{
		"log.dirs":                             filepath.Join(t.TempDir(), "data"),
		"transaction.state.log.num.partitions": "3",
	})
	run := func(fn func(cl *kgo.Client)) {
		t.Helper()
		withBroker(t, cfg, fn)
	}
	id := "tx-restart"
	init := func(cl *kgo.Client) *kmsg.InitProducerIDResponse {
		r := kmsg.NewPtrInitProducerIDRequest()
		r.TransactionalID, r.TransactionTimeoutMillis = &id, 30000
		return request(t, cl, r, func(r *kmsg.InitProducerIDResponse) int16 { return r.ErrorCode })
	}
	var pid int64
	run(func(cl *kgo.Client) {
		if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 1, 1, nil, "out"); err != nil {
			t.Fatal(err)
		}
		r := init(cl)
		if r.ErrorCode != 0 || r.ProducerEpoch != 0 {
			t.Fatalf("init %+v", r)
		}
		pid = r.ProducerID
		r = init(cl)
		if r.ErrorCode != 0 || r.ProducerID != pid || r.ProducerEpoch != 1 {
			t.Fatalf("re-init %+v", r)
		}
	})
	run(func(cl *kgo.Client) {
		r := init(cl)
		if r.ErrorCode != 0 || r.ProducerID != pid || r.ProducerEpoch != 2 {
			t.Fatalf("init after restart %+v, want producer id %d epoch 2", r, pid)
		}
		a := kmsg.NewPtrAddPartitionsToTxnRequest()
		a.TransactionalID, a.ProducerID, a.ProducerEpoch = id, pid, 2
		at := kmsg.NewAddPartitionsToTxnRequestTopic()
		at.Topic, at.Partitions = "out", []int32{0}
		a.Topics = append(a.Topics, at)
		resp := request(t, cl, a, func(r *kmsg.AddPartitionsToTxnResponse) int16 { return r.Topics[0].Partitions[0].ErrorCode })
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("add: %v", kerr.ErrorForCode(code))
		}
	})
	run(func(cl *kgo.Client) {
		// Still ongoing after the restart: a new instance fences it.
		r := init(cl)
		if r.ErrorCode != kerr.ConcurrentTransactions.Code {
			t.Fatalf("init over the reloaded ongoing transaction: %v", kerr.ErrorForCode(r.ErrorCode))
		}
	})
}

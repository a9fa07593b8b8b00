package clustertest_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clustertest"
	"gregor/storage/record"
	"gregor/test/harness"
)

// txnEnv sends raw transactional requests to the brokers of a cluster.
type txnEnv struct {
	t     *testing.T
	c     *clustertest.Cluster
	topic string
}

// send issues req to broker id alone (no client routing or retries).
func (e *txnEnv) send(id int32, req kmsg.Request) kmsg.Response {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.c.Addr(id)), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		e.t.Fatalf("%T to broker %d: %v", req, id, err)
	}
	return resp
}

// produce writes vals as one batch (transactional for pid >= 0) to the
// leader id and returns its base offset.
func (e *txnEnv) produce(id int32, pid int64, vals ...string) int64 {
	e.t.Helper()
	opts := record.BatchOptions{PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli()}
	if pid >= 0 {
		opts.Transactional, opts.Producer = true, &record.Producer{ID: pid, Epoch: 0, BaseSequence: 0}
	}
	recs := make([]record.BatchRecord, len(vals))
	for i, v := range vals {
		recs[i] = record.BatchRecord{Value: []byte(v), TimestampDelta: int64(i)}
	}
	batch, err := record.BuildBatch(opts, recs)
	if err != nil {
		e.t.Fatal(err)
	}
	req := harness.ProduceRequest(e.topic, 0, batch, -1, 5*time.Second)
	if pid >= 0 {
		tid := fmt.Sprintf("txn-%d", pid)
		req.TransactionID = &tid
	}
	p := e.send(id, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		e.t.Fatalf("produce %v to broker %d: error %d", vals, id, p.ErrorCode)
	}
	return p.BaseOffset
}

// marker ends producer pid's transaction on the partition through its leader id.
func (e *txnEnv) marker(id int32, pid int64, commit bool) {
	e.t.Helper()
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = pid, 0, commit, 0
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = e.topic, []int32{0}
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)
	resp := e.send(id, req).(*kmsg.WriteTxnMarkersResponse)
	if code := resp.Markers[0].Topics[0].Partitions[0].ErrorCode; code != 0 {
		e.t.Fatalf("marker for producer %d on broker %d: error %d", pid, id, code)
	}
}

// committedView fetches the partition read_committed from broker id:
// its last stable offset and the aborted transactions listed from 0.
func (e *txnEnv) committedView(id int32) (lso int64, abortedList []int64, code int16) {
	e.t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxBytes, req.IsolationLevel, req.SessionEpoch = -1, 1<<20, 1, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = e.topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	p := e.send(id, req).(*kmsg.FetchResponse).Topics[0].Partitions[0]
	for _, a := range p.AbortedTransactions {
		abortedList = append(abortedList, a.ProducerID, a.FirstOffset)
	}
	return p.LastStableOffset, abortedList, p.ErrorCode
}

// consume reads the partition from the start at isolation level iso
// until it has len(want) records and checks them, in order.
func (e *txnEnv) consume(iso kgo.IsolationLevel, want ...string) {
	e.t.Helper()
	cl := e.c.Client(kgo.FetchIsolationLevel(iso), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{e.topic: {0: kgo.NewOffset().AtStart()}}))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var got []string
	for len(got) < len(want) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			e.t.Fatalf("consumed %q, want %q", got, want)
		}
		fs.EachError(func(_ string, _ int32, err error) { e.t.Logf("fetch error (retried): %v", err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if !slices.Equal(got, want) {
		e.t.Fatalf("consumed %q, want %q", got, want)
	}
}

// TestTransactionsReadCommittedAcrossLeaderFailover: transactional batches
// and markers on a replicated partition. A franz-go read_committed
// consumer skips the aborted transaction (it applies the fetch's
// aborted_transactions) and stops at the open one; the followers rebuild
// the same producer state and .txnindex from the replicated batches, so
// after the leader is killed (kill -9) the new leader answers the same
// last stable offset and aborted list, and so does the old leader after it
// restarts from its disk and leads again. The batches come from made-up
// producers with no transaction coordinator, so KIP-890 verification is
// off (transaction.partition.verification.enable=false, the pre-3.6
// behaviour this exercises).
func TestTransactionsReadCommittedAcrossLeaderFailover(t *testing.T) {
	c := clustertest.MakeClusterWith(t, 3, clustertest.Options{Props: map[string]string{"transaction.partition.verification.enable": "false"}})
	c.CreateTopic("txn", 1, 3)
	e := &txnEnv{t: t, c: c, topic: "txn"}
	leader := c.WaitServing("txn", 0)

	if off := e.produce(leader, 1000, "a0", "a1", "a2"); off != 0 { // aborted below
		t.Fatalf("first batch at %d", off)
	}
	e.produce(leader, 2000, "b0", "b1") // committed below
	e.produce(leader, -1, "p0")
	e.marker(leader, 1000, false)
	e.marker(leader, 2000, true)
	if off := e.produce(leader, 3000, "c0"); off != 8 { // stays open
		t.Fatalf("open transaction at %d, want 8", off)
	}
	e.produce(leader, -1, "p1")

	check := func(id int32) {
		t.Helper()
		c.WaitFor(fmt.Sprintf("broker %d serving read_committed up to the open transaction", id), 10*time.Second, func() (bool, string) {
			lso, ab, code := e.committedView(id)
			return code == 0 && lso == 8 && slices.Equal(ab, []int64{1000, 0}), fmt.Sprintf("code %d lso %d aborted %v", code, lso, ab)
		})
	}
	check(leader)
	e.consume(kgo.ReadCommitted(), "b0", "b1", "p0")
	e.consume(kgo.ReadUncommitted(), "a0", "a1", "a2", "b0", "b1", "p0", "c0", "p1")

	// kill -9 of the leader: a follower takes over with the same state.
	c.Kill(leader)
	second := c.WaitServing("txn", 0)
	if second == leader {
		t.Fatalf("leadership stayed on killed broker %d", leader)
	}
	check(second)
	e.consume(kgo.ReadCommitted(), "b0", "b1", "p0")

	// The old leader restarts from its disk, catches up, and leads again
	// once the second leader is killed too (unless the third one wins the
	// election: it holds the same state).
	c.Restart(leader)
	c.WaitFor("the restarted broker back in the ISR", 15*time.Second, func() (bool, string) {
		st, ok := c.PartitionState("txn", 0)
		return ok && len(st.ISR) == 3, fmt.Sprintf("%+v", st)
	})
	c.Kill(second)
	third := c.WaitServing("txn", 0)
	check(third)

	// The open transaction commits on the current leader: everything is
	// stable, the aborted one still skipped.
	e.marker(third, 3000, true)
	e.consume(kgo.ReadCommitted(), "b0", "b1", "p0", "c0", "p1")
}

// listLatest asks broker id for the partition's latest offset at
// isolation level iso (ListOffsets v7).
func (e *txnEnv) listLatest(id int32, iso int8) int64 {
	e.t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID, req.IsolationLevel = -1, iso
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = e.topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp, rp.CurrentLeaderEpoch = -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	p := e.send(id, req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		e.t.Fatalf("ListOffsets on broker %d: error %d", id, p.ErrorCode)
	}
	return p.Offset
}

// TestTransactionsSurviveBrokerRestart: on a single broker, the last
// stable offset held by an open transaction and the aborted list survive
// a kill -9 of the whole broker (state rebuilt from the log) and a clean
// restart (state loaded from the snapshot written at shutdown), and the
// transaction can still be committed afterwards. No coordinator: KIP-890
// verification is off, as in the test above.
func TestTransactionsSurviveBrokerRestart(t *testing.T) {
	c := clustertest.MakeClusterWith(t, 1, clustertest.Options{Props: map[string]string{"offsets.topic.replication.factor": "1",
		"transaction.partition.verification.enable": "false"}})
	c.CreateTopic("txn1", 1, 1)
	e := &txnEnv{t: t, c: c, topic: "txn1"}
	id := c.WaitServing("txn1", 0)
	e.produce(id, 1000, "a0", "a1") // 0-1, aborted
	e.marker(id, 1000, false)       // 2
	e.produce(id, -1, "p0")         // 3
	e.produce(id, 2000, "b0")       // 4, left open
	e.produce(id, -1, "p1")         // 5

	for _, how := range []string{"kill -9", "clean stop"} {
		if how == "kill -9" {
			c.Kill(id)
		} else {
			c.Stop(id)
		}
		c.Restart(id)
		c.WaitServing("txn1", 0)
		lso, ab, code := e.committedView(id)
		if code != 0 || lso != 4 || !slices.Equal(ab, []int64{1000, 0}) {
			t.Fatalf("after %s: code %d lso %d aborted %v, want lso 4 and producer 1000's abort", how, code, lso, ab)
		}
		if rc, ru := e.listLatest(id, 1), e.listLatest(id, 0); rc != 4 || ru != 6 {
			t.Fatalf("after %s: ListOffsets read_committed %d read_uncommitted %d, want 4 and 6", how, rc, ru)
		}
		e.consume(kgo.ReadCommitted(), "p0")
	}
	e.marker(id, 2000, true)
	e.consume(kgo.ReadCommitted(), "p0", "b0", "p1")
}

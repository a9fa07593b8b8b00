package clustertest_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"gregor/storage/record"
)

// TestTxnVerificationAcrossBrokers: KIP-890 verification when the
// partition's leader is not the transaction's coordinator goes over the
// network (AddPartitionsToTxn VerifyOnly from the leader to the
// coordinator broker), and when it is, in-process: on both, a partition
// not added is refused (TRANSACTION_ABORTABLE at Produce v11, which kgo
// picks; INVALID_TXN_STATE below) and an added one is
// appended. A franz-go transactional producer then commits across both
// partitions and a read_committed consumer reads every record. With the
// coordinator's broker dead, a first batch is refused NOT_ENOUGH_REPLICAS.
func TestTxnVerificationAcrossBrokers(t *testing.T) {
	c := txnCluster(t, nil)
	const id = "tv-cluster"
	pid, epoch, coord := initTxnProducer(t, c, id)
	other := int32(1)
	if coord == 1 {
		other = 2
	}
	c.CreateTopicAssigned("tvc", map[int32][]int32{0: {other}, 1: {coord}})
	c.WaitServing("tvc", 0)
	c.WaitServing("tvc", 1)

	send := func(broker int32, req kmsg.Request) kmsg.Response {
		t.Helper()
		e := &txnEnv{t: t, c: c}
		return e.send(broker, req)
	}
	seq := map[int32]int32{}
	produce := func(p int32) (code int16, off int64, version int16) {
		t.Helper()
		batch, err := record.BuildBatch(record.BatchOptions{PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli(), Transactional: true,
			Producer: &record.Producer{ID: pid, Epoch: epoch, BaseSequence: seq[p]}}, []record.BatchRecord{{Value: []byte("raw")}})
		if err != nil {
			t.Fatal(err)
		}
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis, req.TransactionID = -1, 5000, kmsg.StringPtr(id)
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "tvc"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = p, batch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		leader := other
		if p == 1 {
			leader = coord
		}
		resp := send(leader, req).(*kmsg.ProduceResponse)
		out := resp.Topics[0].Partitions[0]
		if out.ErrorCode == 0 {
			seq[p]++
		}
		return out.ErrorCode, out.BaseOffset, resp.Version
	}

	for p, where := range []string{"remote coordinator", "local coordinator"} {
		code, _, v := produce(int32(p))
		want := kerr.InvalidTxnState // below v11, Kafka's mapping of TRANSACTION_ABORTABLE
		if v >= 11 {
			want = kerr.TransactionAbortable
		}
		if code != want.Code {
			t.Fatalf("%s: v%d produce to a partition not added: %v, want %v", where, v, kerr.ErrorForCode(code), want)
		}
	}
	add := kmsg.NewPtrAddPartitionsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch = id, pid, epoch
	at := kmsg.NewAddPartitionsToTxnRequestTopic()
	at.Topic, at.Partitions = "tvc", []int32{0, 1}
	add.Topics = append(add.Topics, at)
	// A client's AddPartitionsToTxn is v3 at most (v4+ is the brokers').
	v3 := kversion.Stable()
	v3.SetMaxKeyVersion(add.Key(), 3)
	acl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr(coord)), kgo.MaxVersions(v3))
	if err != nil {
		t.Fatal(err)
	}
	defer acl.Close()
	addResp, err := add.RequestWith(context.Background(), acl)
	if err != nil {
		t.Fatal(err)
	}
	for _, rp := range addResp.Topics[0].Partitions {
		if rp.ErrorCode != 0 {
			t.Fatalf("AddPartitionsToTxn %d: %v", rp.Partition, kerr.ErrorForCode(rp.ErrorCode))
		}
	}
	for p, where := range []string{"remote coordinator", "local coordinator"} {
		if code, off, _ := produce(int32(p)); code != 0 || off != 0 {
			t.Fatalf("%s: produce after AddPartitionsToTxn: %v at %d", where, kerr.ErrorForCode(code), off)
		}
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, pid, epoch, true
	if r := send(coord, end).(*kmsg.EndTxnResponse); r.ErrorCode != 0 {
		t.Fatalf("EndTxn: %v", kerr.ErrorForCode(r.ErrorCode))
	}

	// A real transactional producer over the same brokers.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pr := c.Client(kgo.TransactionalID("tv-franz"), kgo.DefaultProduceTopic("tvc"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err := pr.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if err := pr.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatalf("transactional produce %d: %v", i, err)
		}
	}
	if err := pr.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit: %v", err)
	}
	cons := c.Client(kgo.ConsumeTopics("tvc"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var got []string
	for len(got) < 8 && ctx.Err() == nil {
		cons.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	slices.Sort(got)
	if want := []string{"0", "1", "2", "3", "4", "5", "raw", "raw"}; !slices.Equal(got, want) {
		t.Fatalf("read_committed got %q, want %q", got, want)
	}

	// The coordinator's broker dies (its __transaction_state partition has
	// no other replica): a first batch on the other broker cannot be
	// verified and is refused retriably, never appended unverified.
	c.Kill(coord)
	code, _, _ := produce(0)
	if code != kerr.NotEnoughReplicas.Code {
		t.Fatalf("produce with the coordinator gone: %v, want NOT_ENOUGH_REPLICAS", kerr.ErrorForCode(code))
	}
}

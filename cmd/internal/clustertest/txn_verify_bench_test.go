package clustertest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"gregor/storage/record"
)

// BenchmarkTxnVerification measures the produce latency KIP-890
// verification adds, with raw requests so nothing else is in the timing:
// each transaction is AddPartitionsToTxn (untimed), two acks=1 produces of
// one 100-byte record to the partition's leader (timed), EndTxn commit
// (untimed, and the next AddPartitionsToTxn retried until the markers are
// written). transaction.partition.verification.enable on and off; the
// coordinator on the partition's leader (local: verified in-process) or on
// the other broker (remote: one AddPartitionsToTxn VerifyOnly round trip
// over loopback). first-p50-us/first-mean-us: the transaction's first
// produce on the partition, the one verified; next-p50-us: the second
// (the transaction is ongoing there: never verified).
//
//	go test -run x -bench TxnVerification -benchtime 2000x ./cmd/internal/clustertest/
func BenchmarkTxnVerification(b *testing.B) {
	for _, where := range []string{"local", "remote"} {
		for _, verify := range []string{"true", "false"} {
			b.Run(where+"/verify="+verify, func(b *testing.B) { benchVerification(b, where == "remote", verify) })
		}
	}
}

func benchVerification(b *testing.B, remote bool, verify string) {
	c := txnCluster(b, map[string]string{"transaction.partition.verification.enable": verify})
	const id = "bench"
	pid, epoch, coord := initTxnProducer(b, c, id)
	leader := coord
	if remote {
		leader = 3 - coord // brokers 1 and 2
	}
	c.CreateTopicAssigned("tvb", map[int32][]int32{0: {leader}})
	c.WaitServing("tvb", 0)

	v3 := kversion.Stable()
	v3.SetMaxKeyVersion(24, 3) // a client's AddPartitionsToTxn
	coordCl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr(coord)), kgo.MaxVersions(v3))
	if err != nil {
		b.Fatal(err)
	}
	defer coordCl.Close()
	leaderCl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr(leader)))
	if err != nil {
		b.Fatal(err)
	}
	defer leaderCl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cb, lb := coordCl.SeedBrokers()[0], leaderCl.SeedBrokers()[0]

	var seq int32
	produce := func() time.Duration {
		batch, err := record.BuildBatch(record.BatchOptions{PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli(), Transactional: true,
			Producer: &record.Producer{ID: pid, Epoch: epoch, BaseSequence: seq}}, []record.BatchRecord{{Value: make([]byte, 100)}})
		if err != nil {
			b.Fatal(err)
		}
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis, req.TransactionID = 1, 5000, kmsg.StringPtr(id)
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "tvb"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = batch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		t0 := time.Now()
		resp, err := req.RequestWith(ctx, lb)
		d := time.Since(t0)
		if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
			b.Fatalf("produce: %v %v", err, kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode))
		}
		seq++
		return d
	}
	add := func() {
		for tries := 0; ; tries++ {
			r := kmsg.NewPtrAddPartitionsToTxnRequest()
			r.TransactionalID, r.ProducerID, r.ProducerEpoch = id, pid, epoch
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic, rt.Partitions = "tvb", []int32{0}
			r.Topics = append(r.Topics, rt)
			resp, err := r.RequestWith(ctx, cb)
			if err != nil {
				b.Fatal(err)
			}
			code := resp.Topics[0].Partitions[0].ErrorCode
			if code == 0 {
				return
			}
			if code != kerr.ConcurrentTransactions.Code || tries > 100000 {
				b.Fatalf("AddPartitionsToTxn: %v", kerr.ErrorForCode(code))
			}
			// The previous commit's markers are still being written.
		}
	}
	end := func() {
		r := kmsg.NewPtrEndTxnRequest()
		r.TransactionalID, r.ProducerID, r.ProducerEpoch, r.Commit = id, pid, epoch, true
		resp, err := r.RequestWith(ctx, cb)
		if err != nil || resp.ErrorCode != 0 {
			b.Fatalf("EndTxn: %v %+v", err, resp)
		}
	}
	for range 50 { // warm-up: connections, the partition's first appends
		add()
		produce()
		produce()
		end()
	}
	first := make([]time.Duration, 0, b.N)
	next := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		add()
		first = append(first, produce())
		next = append(next, produce())
		end()
	}
	b.StopTimer()
	p50 := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Nanoseconds()) / 1e3
	}
	var sum time.Duration
	for _, d := range first {
		sum += d
	}
	b.ReportMetric(float64(sum.Nanoseconds())/1e3/float64(b.N), "first-mean-us")
	b.ReportMetric(p50(first), "first-p50-us")
	b.ReportMetric(p50(next), "next-p50-us")
}

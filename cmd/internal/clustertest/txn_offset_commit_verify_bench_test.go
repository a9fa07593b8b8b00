package clustertest_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/actors/coordinator"
)

// BenchmarkTxnOffsetCommitVerification measures the TxnOffsetCommit
// latency KIP-890 verification adds, with raw requests: each transaction
// is AddOffsetsToTxn (untimed, retried while the previous markers are
// being written), two TxnOffsetCommits of one partition to the group's
// coordinator (timed), EndTxn commit (untimed).
// transaction.partition.verification.enable on and off; the group's
// coordinator on the transaction coordinator's broker (local: verified
// in-process) or on the other (remote: one AddPartitionsToTxn VerifyOnly
// round trip). first-p50-us: the transaction's first commit, the one
// verified; next-p50-us: the second (ongoing on the partition: not
// verified).
//
//	go test -run x -bench TxnOffsetCommitVerification -benchtime 2000x ./cmd/internal/clustertest/
func BenchmarkTxnOffsetCommitVerification(b *testing.B) {
	for _, where := range []string{"local", "remote"} {
		for _, verify := range []string{"true", "false"} {
			b.Run(where+"/verify="+verify, func(b *testing.B) { benchOffsetVerification(b, where == "remote", verify) })
		}
	}
}

func benchOffsetVerification(b *testing.B, remote bool, verify string) {
	c := txnCluster(b, map[string]string{"offsets.topic.num.partitions": "2", "transaction.partition.verification.enable": verify})
	const id = "bench-offsets"
	pid, epoch, coord := initTxnProducer(b, c, id)
	target := coord
	if remote {
		target = 3 - coord // brokers 1 and 2
	}
	c.CreateTopicAssigned("tob", map[int32][]int32{0: {target}})
	c.WaitServing("tob", 0)
	var group string
	c.WaitFor("a group coordinated on broker "+fmt.Sprint(target), 15*time.Second, func() (bool, string) {
		r := kmsg.NewPtrFindCoordinatorRequest()
		r.CoordinatorKey = "bench-g"
		_, _ = r.RequestWith(context.Background(), c.Client()) // creates __consumer_offsets
		for i := range 20 {
			g := fmt.Sprintf("bench-g%d", i)
			if c.Leader(coordinator.OffsetsTopicName, coordinator.PartitionFor(g, 2)) == target {
				group = g
				return true, ""
			}
		}
		return false, "no partition led there yet"
	})
	coordCl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr(coord)))
	if err != nil {
		b.Fatal(err)
	}
	defer coordCl.Close()
	groupCl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr(target)))
	if err != nil {
		b.Fatal(err)
	}
	defer groupCl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cb, gb := coordCl.SeedBrokers()[0], groupCl.SeedBrokers()[0]

	var off int64
	commit := func() (time.Duration, int16) {
		off++
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = id, group, pid, epoch, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "tob"
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Offset, rp.LeaderEpoch = off, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		t0 := time.Now()
		resp, err := req.RequestWith(ctx, gb)
		d := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		return d, resp.Topics[0].Partitions[0].ErrorCode
	}
	timed := func() time.Duration {
		d, code := commit()
		if code != 0 {
			b.Fatalf("TxnOffsetCommit: %v", kerr.ErrorForCode(code))
		}
		return d
	}
	add := func() {
		for tries := 0; ; tries++ {
			r := kmsg.NewPtrAddOffsetsToTxnRequest()
			r.TransactionalID, r.ProducerID, r.ProducerEpoch, r.Group = id, pid, epoch, group
			resp, err := r.RequestWith(ctx, cb)
			if err != nil {
				b.Fatal(err)
			}
			if resp.ErrorCode == 0 {
				return
			}
			if resp.ErrorCode != kerr.ConcurrentTransactions.Code || tries > 100000 {
				b.Fatalf("AddOffsetsToTxn: %v", kerr.ErrorForCode(resp.ErrorCode))
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
	// The group's partition loads after FindCoordinator: retry the first
	// commit while it does, and while the topic reaches that broker's
	// metadata (not timed).
	add()
	for tries := 0; ; tries++ {
		_, code := commit()
		if code == 0 {
			break
		}
		if tries > 1000 || (code != kerr.CoordinatorLoadInProgress.Code && code != kerr.NotCoordinator.Code && code != kerr.CoordinatorNotAvailable.Code && code != kerr.UnknownTopicOrPartition.Code) {
			b.Fatalf("first TxnOffsetCommit: %v", kerr.ErrorForCode(code))
		}
		time.Sleep(10 * time.Millisecond) // a client's retry backoff
	}
	end()
	for range 50 { // warm-up
		add()
		timed()
		timed()
		end()
	}
	first := make([]time.Duration, 0, b.N)
	next := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		add()
		first = append(first, timed())
		next = append(next, timed())
		end()
	}
	b.StopTimer()
	p50 := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Nanoseconds()) / 1e3
	}
	b.ReportMetric(p50(first), "first-p50-us")
	b.ReportMetric(p50(next), "next-p50-us")
}

package clustertest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"gregor/actors/coordinator"
)

// TestTxnOffsetCommitVerificationAcrossBrokers: KIP-890 verification of
// TxnOffsetCommit with the group's coordinator on the transaction
// coordinator's broker (in-process) and on the other broker
// (AddPartitionsToTxn VerifyOnly over the network): on both, a commit
// before AddOffsetsToTxn is refused TRANSACTION_ABORTABLE (v4) and one
// after it is accepted; the COMMIT makes both offsets visible. With the
// transaction coordinator's broker dead, a commit on the other broker is
// refused retriably and stages nothing.
func TestTxnOffsetCommitVerificationAcrossBrokers(t *testing.T) {
	c := txnCluster(t, map[string]string{"offsets.topic.num.partitions": "2"})
	const id = "tvo-cluster"
	pid, epoch, coord := initTxnProducer(t, c, id)
	other := int32(1)
	if coord == 1 {
		other = 2
	}
	c.CreateTopicAssigned("tvo", map[int32][]int32{0: {other}})
	c.WaitServing("tvo", 0)
	// One group per __consumer_offsets partition; the partitions' leaders
	// tell which group is coordinated on which broker.
	groups := map[int32]string{}
	for i := 0; len(groups) < 2; i++ {
		g := "tvo-g" + string(rune('a'+i))
		if _, ok := groups[coordinator.PartitionFor(g, 2)]; !ok {
			groups[coordinator.PartitionFor(g, 2)] = g
		}
	}
	groupOn := map[int32]string{} // broker → a group it coordinates
	c.WaitFor("__consumer_offsets led on both brokers", 15*time.Second, func() (bool, string) {
		r := kmsg.NewPtrFindCoordinatorRequest()
		r.CoordinatorKey = groups[0]
		_, _ = r.RequestWith(context.Background(), c.Client()) // creates __consumer_offsets
		for p, g := range groups {
			if l := c.Leader(coordinator.OffsetsTopicName, p); l > 0 {
				groupOn[l] = g
			}
		}
		return groupOn[coord] != "" && groupOn[other] != "", "leaders not spread yet"
	})
	e := &txnEnv{t: t, c: c}
	commit := func(broker int32, group string, off int64) *kerr.Error {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			req := kmsg.NewPtrTxnOffsetCommitRequest()
			req.Version = 4
			req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = id, group, pid, epoch, -1
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic = "tvo"
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = 0, off, -1
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			resp := e.send(broker, req).(*kmsg.TxnOffsetCommitResponse)
			ke := kerr.TypedErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
			if ke != kerr.CoordinatorLoadInProgress || time.Now().After(deadline) {
				return ke
			}
			time.Sleep(20 * time.Millisecond) // the group's partition is loading: a client's retry backoff
		}
	}
	fetch := func(broker int32, group string) (*kerr.Error, int64) {
		t.Helper()
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version, req.Group, req.RequireStable = 7, group, true
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = "tvo", []int32{0}
		req.Topics = append(req.Topics, rt)
		// kgo sends the highest version both sides have: pin v7 (one
		// group, the fields above; v8+ lists groups).
		vs := kversion.Stable()
		vs.SetMaxKeyVersion(req.Key(), 7)
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr(broker)), kgo.MaxVersions(vs))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
		if err != nil {
			t.Fatalf("OffsetFetch to broker %d: %v", broker, err)
		}
		if resp.Version != 7 {
			t.Fatalf("OffsetFetch went out at v%d", resp.Version)
		}
		if resp.ErrorCode != 0 {
			return kerr.TypedErrorForCode(resp.ErrorCode), -1
		}
		p := resp.Topics[0].Partitions[0]
		return kerr.TypedErrorForCode(p.ErrorCode), p.Offset
	}

	for _, b := range []int32{coord, other} {
		c.WaitFor("group coordinator serving on broker "+fmt.Sprint(b), 15*time.Second, func() (bool, string) {
			err, _ := fetch(b, groupOn[b])
			return err == nil, fmt.Sprint(err)
		})
	}
	where := map[int32]string{coord: "local coordinator", other: "remote coordinator"}
	for _, b := range []int32{coord, other} {
		if err := commit(b, groupOn[b], 7); err != kerr.TransactionAbortable {
			t.Fatalf("%s: commit before AddOffsetsToTxn: %v, want TRANSACTION_ABORTABLE", where[b], err)
		}
		ao := kmsg.NewPtrAddOffsetsToTxnRequest()
		ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = id, pid, epoch, groupOn[b]
		if r := e.send(coord, ao).(*kmsg.AddOffsetsToTxnResponse); r.ErrorCode != 0 {
			t.Fatalf("AddOffsetsToTxn %s: %v", groupOn[b], kerr.ErrorForCode(r.ErrorCode))
		}
		if err := commit(b, groupOn[b], 7); err != nil {
			t.Fatalf("%s: commit after AddOffsetsToTxn: %v", where[b], err)
		}
		if err, off := fetch(b, groupOn[b]); err != kerr.UnstableOffsetCommit {
			t.Fatalf("%s: accepted commit: require_stable %v (offset %d), want UNSTABLE_OFFSET_COMMIT", where[b], err, off)
		}
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, pid, epoch, true
	if r := e.send(coord, end).(*kmsg.EndTxnResponse); r.ErrorCode != 0 {
		t.Fatalf("EndTxn: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	for _, b := range []int32{coord, other} {
		c.WaitFor(where[b]+" offset committed", 15*time.Second, func() (bool, string) {
			err, off := fetch(b, groupOn[b])
			return err == nil && off == 7, fmt.Sprintf("markers not written yet: %v %d", err, off)
		})
	}

	// A new transaction; the coordinator's broker dies.
	c.Kill(coord)
	if err := commit(other, groupOn[other], 9); err != kerr.CoordinatorNotAvailable && err != kerr.CoordinatorLoadInProgress {
		t.Fatalf("commit with the transaction coordinator gone: %v, want a retriable COORDINATOR_NOT_AVAILABLE or COORDINATOR_LOAD_IN_PROGRESS", err)
	}
	if err, off := fetch(other, groupOn[other]); err != nil || off != 7 {
		t.Fatalf("after the refused commit: %v offset %d, want 7 and nothing pending", err, off)
	}
}

package clustertest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/actors/coordinator"
	"gregor/cmd/internal/clustertest"
)

// TestTxnOffsetCommitVerifiedAcrossBrokers: KIP-890 part 1 when the
// group's coordinator and the transaction's are different brokers. The
// group coordinator asks the transaction coordinator (AddPartitionsToTxn
// v4 VerifyOnly over the network) before appending: a TxnOffsetCommit of
// a transaction that added the group's partition is accepted and becomes
// the committed offset once the transaction commits; an old epoch is
// INVALID_PRODUCER_EPOCH, a transaction that never sent AddOffsetsToTxn
// TRANSACTION_ABORTABLE (v4) and an unknown transactional id
// INVALID_PRODUCER_ID_MAPPING, and none of them leaves offsets pending.
func TestTxnOffsetCommitVerifiedAcrossBrokers(t *testing.T) {
	c := clustertest.MakeClusterWith(t, 3, clustertest.Options{Props: map[string]string{
		"transaction.state.log.num.partitions": "3",
		"offsets.topic.num.partitions":         "3",
	}})
	c.CreateTopic("vin", 1, 3)
	c.WaitServing("vin", 0)
	e := &txnEnv{t: t, c: c, topic: "vin"}

	// Coordinators: __transaction_state and __consumer_offsets are created
	// by FindCoordinator.
	coordOf := func(keyType int8, key, topic string) int32 {
		t.Helper()
		var leader int32
		c.WaitFor(fmt.Sprintf("a coordinator for %s", key), 15*time.Second, func() (bool, string) {
			leader = c.Leader(topic, coordinator.PartitionFor(key, 3))
			if leader <= 0 {
				cl := c.Client()
				defer cl.Close()
				fc := kmsg.NewPtrFindCoordinatorRequest()
				fc.CoordinatorType, fc.CoordinatorKey = keyType, key
				_, _ = fc.RequestWith(context.Background(), cl)
				return false, "no leader yet"
			}
			return true, ""
		})
		return leader
	}
	const id, idIdle = "tx-verify", "tx-verify-idle"
	txnCoord := coordOf(1, id, "__transaction_state")
	group := ""
	var groupCoord int32
	for i := 0; i < 50 && group == ""; i++ {
		g := fmt.Sprintf("vg-%d", i)
		if l := coordOf(0, g, "__consumer_offsets"); l != txnCoord {
			group, groupCoord = g, l
		}
	}
	if group == "" {
		t.Fatalf("no group coordinated away from broker %d", txnCoord)
	}

	init := func(txnID string) (int64, int16) {
		t.Helper()
		coord := coordOf(1, txnID, "__transaction_state")
		var r *kmsg.InitProducerIDResponse
		c.WaitFor("InitProducerId "+txnID, 15*time.Second, func() (bool, string) {
			var ok bool
			r, ok = txnInit(t, c, coord, txnID)
			return ok, fmt.Sprintf("%+v", r)
		})
		if r.ErrorCode != 0 {
			t.Fatalf("InitProducerId %s: %v", txnID, kerr.ErrorForCode(r.ErrorCode))
		}
		return r.ProducerID, r.ProducerEpoch
	}
	pid, epoch := init(id)
	idlePid, idleEpoch := init(idIdle)

	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = id, pid, epoch, group
	if code := e.send(txnCoord, add).(*kmsg.AddOffsetsToTxnResponse).ErrorCode; code != 0 {
		t.Fatalf("AddOffsetsToTxn: %v", kerr.ErrorForCode(code))
	}
	commitOffsets := func(txnID string, p int64, ep int16, off int64) int16 {
		t.Helper()
		r := kmsg.NewPtrTxnOffsetCommitRequest()
		r.TransactionalID, r.Group, r.ProducerID, r.ProducerEpoch, r.Generation = txnID, group, p, ep, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "vin"
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = 0, off, -1
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		resp := e.send(groupCoord, r).(*kmsg.TxnOffsetCommitResponse)
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	check := func(what string, got, want int16) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %v, want %v", what, kerr.ErrorForCode(got), kerr.ErrorForCode(want))
		}
	}
	check("TxnOffsetCommit with an old epoch", commitOffsets(id, pid, epoch-1, 5), kerr.InvalidProducerEpoch.Code)
	check("TxnOffsetCommit of a transaction without AddOffsetsToTxn", commitOffsets(idIdle, idlePid, idleEpoch, 6), kerr.TransactionAbortable.Code)
	check("TxnOffsetCommit of an unknown transactional id", commitOffsets("tx-verify-never", 424242, 0, 7), kerr.InvalidProducerIDMapping.Code)
	check("TxnOffsetCommit in the transaction", commitOffsets(id, pid, epoch, 42), 0)

	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, pid, epoch, true
	if code := e.send(txnCoord, end).(*kmsg.EndTxnResponse).ErrorCode; code != 0 {
		t.Fatalf("EndTxn: %v", kerr.ErrorForCode(code))
	}
	// The commit marker reaches __consumer_offsets: 42 is committed and
	// stable (no refused commit left anything pending).
	c.WaitFor("the committed offset", 15*time.Second, func() (bool, string) {
		r := kmsg.NewPtrOffsetFetchRequest()
		r.RequireStable = true
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = group
		rt := kmsg.NewOffsetFetchRequestGroupTopic()
		rt.Topic, rt.Partitions = "vin", []int32{0}
		rg.Topics = append(rg.Topics, rt)
		r.Groups = append(r.Groups, rg)
		resp := e.send(groupCoord, r).(*kmsg.OffsetFetchResponse)
		if len(resp.Groups) != 1 || len(resp.Groups[0].Topics) != 1 || len(resp.Groups[0].Topics[0].Partitions) != 1 {
			return false, fmt.Sprintf("answer %+v", resp)
		}
		p := resp.Groups[0].Topics[0].Partitions[0]
		return p.ErrorCode == 0 && p.Offset == 42, fmt.Sprintf("%v offset %d", kerr.ErrorForCode(p.ErrorCode), p.Offset)
	})
}

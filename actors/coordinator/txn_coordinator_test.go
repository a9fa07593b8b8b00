package coordinator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage/record"
)

// txnOffsetCommitReq is a TxnOffsetCommit of partitions of topic "in" at
// offsets offs (partition i at offs[i]).
func txnOffsetCommitReq(v int16, group string, pid int64, epoch int16, offs ...int64) *kmsg.TxnOffsetCommitRequest {
	r := kmsg.NewPtrTxnOffsetCommitRequest()
	r.Version, r.TransactionalID, r.Group, r.ProducerID, r.ProducerEpoch = v, "tx", group, pid, epoch
	r.Generation = -1
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = "in"
	for i, off := range offs {
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = int32(i), off, 4, strp("txn-meta")
		rt.Partitions = append(rt.Partitions, rp)
	}
	r.Topics = append(r.Topics, rt)
	return r
}

// txnCommitCodes sends req and returns its partitions' codes.
func txnCommitCodes(t *testing.T, c *Coordinator, req *kmsg.TxnOffsetCommitRequest) []int16 {
	t.Helper()
	ch, reply := chanOf[*kmsg.TxnOffsetCommitResponse]()
	c.TxnOffsetCommit(context.Background(), req, 0, reply)
	resp := wait(t, ch)
	if resp.Version != req.Version || len(resp.Topics) != 1 {
		t.Fatalf("response %+v", resp)
	}
	var codes []int16
	for _, p := range resp.Topics[0].Partitions {
		codes = append(codes, p.ErrorCode)
	}
	return codes
}

func TestTxnOffsetCommitVisibleAfterCommitMarker(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic)
	p := c.PartitionFor("g")
	if codes := txnCommitCodes(t, c, txnOffsetCommitReq(3, "g", 7, 2, 42)); codes[0] != 0 {
		t.Fatalf("txn commit %v", codes)
	}
	// The batch in __consumer_offsets: transactional, the producer's id and
	// epoch, no sequence (AppendOrigin.COORDINATOR), not a control batch.
	bs := topic.Batches(p)
	h, err := record.ParseHeader(bs[len(bs)-1])
	if err != nil || !h.IsTransactional() || h.IsControl() || h.ProducerID != 7 || h.ProducerEpoch != 2 || h.BaseSequence != -1 {
		t.Fatalf("batch %+v (%v)", h, err)
	}
	if code, off := fetchStable(t, c, "g", "in", 0); code != kerr.UnstableOffsetCommit.Code || off != -1 {
		t.Fatalf("require_stable before the marker: %d/%d", code, off)
	}
	if off := offsetOf(fetchAll(t, c, "g"), "in", 0); off != -1 {
		t.Fatalf("visible before the marker at %d", off)
	}
	// A marker of another producer, or in another partition, changes nothing.
	c.CompleteTxnOffsets(p, 8, 0, true)
	c.CompleteTxnOffsets((p+1)%10, 7, 2, true)
	if code, _ := fetchStable(t, c, "g", "in", 0); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("other markers completed the transaction: %d", code)
	}
	if _, err := topic.AppendMarker(p, 7, 2, true); err != nil {
		t.Fatal(err)
	}
	c.CompleteTxnOffsets(p, 7, 2, true)
	// The completion is routed ahead of the fetch (both go through the
	// router and the group actor's mailbox in order).
	if code, off := fetchStable(t, c, "g", "in", 0); code != 0 || off != 42 {
		t.Fatalf("after the commit marker: %d/%d, want 0/42", code, off)
	}
	f := fetchAll(t, c, "g")
	if pp := f.Topics[0].Partitions[0]; pp.LeaderEpoch != 4 || *pp.Metadata != "txn-meta" {
		t.Fatalf("committed %+v", pp)
	}

	// An aborted transaction leaves 42.
	if codes := txnCommitCodes(t, c, txnOffsetCommitReq(3, "g", 7, 2, 50)); codes[0] != 0 {
		t.Fatal(codes)
	}
	if _, err := topic.AppendMarker(p, 7, 2, false); err != nil {
		t.Fatal(err)
	}
	c.CompleteTxnOffsets(p, 7, 2, false)
	if code, off := fetchStable(t, c, "g", "in", 0); code != 0 || off != 42 {
		t.Fatalf("after the abort marker: %d/%d, want 0/42", code, off)
	}
}

// A reload rebuilds committed and open transactions from the log: the
// open one completes through the router's index built by the load, and a
// marker arriving while the partition loads is applied once it is loaded.
func TestTxnOffsetsAcrossReloads(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic)
	p := c.PartitionFor("g")
	txnCommitCodes(t, c, txnOffsetCommitReq(3, "g", 7, 0, 42))
	topic.AppendMarker(p, 7, 0, true)
	c.CompleteTxnOffsets(p, 7, 0, true)
	if codes := txnCommitCodes(t, c, txnOffsetCommitReq(3, "g", 9, 0, 50)); codes[0] != 0 {
		t.Fatal(codes)
	}
	c.Stop()

	c2 := startCoord(t, topic)
	if off := offsetOf(fetchAll(t, c2, "g"), "in", 0); off != 42 {
		t.Fatalf("reloaded committed offset %d, want 42", off)
	}
	if code, _ := fetchStable(t, c2, "g", "in", 0); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("reloaded open transaction: %d, want UNSTABLE_OFFSET_COMMIT", code)
	}
	topic.AppendMarker(p, 9, 0, true)
	c2.CompleteTxnOffsets(p, 9, 0, true)
	if code, off := fetchStable(t, c2, "g", "in", 0); code != 0 || off != 50 {
		t.Fatalf("reloaded transaction after its marker: %d/%d, want 0/50", code, off)
	}
	txnCommitCodes(t, c2, txnOffsetCommitReq(3, "g", 11, 0, 60))
	c2.Stop()

	// The next load reads the log before producer 11's marker is there.
	release := topic.HoldLoads()
	c3 := startCoord(t, topic)
	first, reply := chanOf[*kmsg.OffsetFetchResponse]()
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version, r.Group, r.RequireStable = 7, "g", true
	c3.OffsetFetch(context.Background(), r, reply) // starts the load, queued behind it
	eventually(t, "load held", func() (bool, string) { return topic.Held() == 1, fmt.Sprintf("%d held", topic.Held()) })
	topic.AppendMarker(p, 11, 0, false)
	c3.CompleteTxnOffsets(p, 11, 0, false)
	release()
	if f := wait(t, first); f.Topics[0].Partitions[0].ErrorCode != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("fetch queued before the marker: %+v", f.Topics[0].Partitions[0])
	}
	if code, off := fetchStable(t, c3, "g", "in", 0); code != 0 || off != 50 {
		t.Fatalf("after the abort that came during the load: %d/%d, want 0/50", code, off)
	}
}

func TestTxnOffsetCommitErrors(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic)
	if codes := txnCommitCodes(t, c, txnOffsetCommitReq(3, "", 7, 0, 1)); codes[0] != kerr.InvalidGroupID.Code {
		t.Fatalf("empty group id: %v", codes)
	}
	// Oversized metadata: that partition only, once the group accepted.
	big := txnOffsetCommitReq(3, "g", 7, 0, 1, 2)
	big.Topics[0].Partitions[1].Metadata = strp(strings.Repeat("x", 4097))
	if codes := txnCommitCodes(t, c, big); codes[0] != 0 || codes[1] != kerr.OffsetMetadataTooLarge.Code {
		t.Fatalf("oversized metadata: %v", codes)
	}
	// KIP-447 fencing (v3+) against a live member; v2 carries none.
	member, gen := joinAndSync(t, c, "live")
	for _, tc := range []struct {
		name   string
		v      int16
		member string
		gen    int32
		want   int16
	}{
		{"member", 3, member, gen, 0},
		{"stale generation", 3, member, gen - 1, kerr.IllegalGeneration.Code},
		{"unknown member", 4, "zombie", gen, kerr.UnknownMemberID.Code},
		{"v2 (no membership fields)", 2, "zombie", gen - 1, 0},
	} {
		req := txnOffsetCommitReq(tc.v, "live", 7, 0, 5)
		req.MemberID, req.Generation = tc.member, tc.gen
		if codes := txnCommitCodes(t, c, req); codes[0] != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, codes[0], tc.want)
		}
	}
	// Not the coordinator of the group.
	topic.SetLocal(c.PartitionFor("g"), false)
	if codes := txnCommitCodes(t, c, txnOffsetCommitReq(3, "g", 7, 0, 1)); codes[0] != kerr.NotCoordinator.Code {
		t.Fatalf("not coordinator: %v", codes)
	}
	// A failed append maps as a commit's does and leaves nothing pending.
	topic.SetLocal(c.PartitionFor("g"), true)
	topic.SetAppendErr(kerr.NotEnoughReplicas)
	if codes := txnCommitCodes(t, c, txnOffsetCommitReq(3, "h", 7, 0, 1)); codes[0] != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("NOT_ENOUGH_REPLICAS append: %v, want COORDINATOR_NOT_AVAILABLE", codes)
	}
	topic.SetAppendErr(nil)
	if code, _ := fetchStable(t, c, "h", "in", 0); code != 0 {
		t.Fatalf("require_stable after a failed transactional append: %d", code)
	}
}

// A group actor restarted after a panic rebuilds its open transaction's
// offsets from the log, with their log positions, and the marker still
// completes them.
func TestTxnOffsetsSurviveGroupActorRestart(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic)
	p := c.PartitionFor("g")
	txnCommitCodes(t, c, txnOffsetCommitReq(3, "g", 7, 0, 42, 43)) // partitions 0 and 1
	// A plain commit of partition 0 written after the transactional one:
	// it must win when the transaction commits, after the restart too.
	if code := commit(t, c, "g", "", -1, "in", 0, 500); code != 0 {
		t.Fatal(code)
	}
	failed := make(chan int16, 1)
	c.send(&GroupRequest{Group: "g", API: "Crash",
		Apply: func(*Group, time.Time) { panic("injected") },
		Fail:  func(code int16) { failed <- code },
	})
	if code := wait(t, failed); code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("panicked request answered %d", code)
	}
	if code, _ := fetchStable(t, c, "g", "in", 1); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("after the restart: %d, want UNSTABLE_OFFSET_COMMIT", code)
	}
	topic.AppendMarker(p, 7, 0, true)
	c.CompleteTxnOffsets(p, 7, 0, true)
	if code, off := fetchStable(t, c, "g", "in", 0); code != 0 || off != 500 {
		t.Fatalf("partition 0 after the marker: %d/%d, want the later plain 500", code, off)
	}
	if code, off := fetchStable(t, c, "g", "in", 1); code != 0 || off != 43 {
		t.Fatalf("partition 1 after the marker: %d/%d, want 0/43", code, off)
	}
}

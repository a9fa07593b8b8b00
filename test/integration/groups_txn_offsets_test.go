package integration

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/actors/coordinator"
	"gregor/test/harness"
)

// TestTxnOffsetCommitAndMarkersProcess drives the group coordinator's
// side of transactions in a `gregor server` process with raw requests, as
// the transaction coordinator and a KIP-447 producer would: TxnOffsetCommit
// (producer id from InitProducerId without a transactional id) stages the
// offsets (OffsetFetch require_stable: UNSTABLE_OFFSET_COMMIT, without it
// the previous commit), and WriteTxnMarkers to the group's
// __consumer_offsets partition commits or aborts them; an open
// transaction survives a restart. It skips while the broker lacks the
// partition side (coordinator-origin transactional batches, WriteTxnMarkers).
// KIP-890 verification is off: the producer has no transaction at a
// coordinator to verify with (TestTxnVerificationOnTxnOffsetCommit covers
// the verified path).
func TestTxnOffsetCommitAndMarkersProcess(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{"offsets.topic.num.partitions": "3", "transaction.partition.verification.enable": "false"})
	createTopic(t, b, "txin", 2, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := b.Client(kgo.RetryTimeout(20 * time.Second))

	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.Version, ip.TransactionTimeoutMillis = 4, 60000
	ipr, err := ip.RequestWith(ctx, cl)
	if err != nil || ipr.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v %+v", err, ipr)
	}
	pid, epoch := ipr.ProducerID, ipr.ProducerEpoch
	const group = "txgroup"
	offsetsPartition := coordinator.PartitionFor(group, 3)

	txnCommit := func(cl *kgo.Client, off int64) int16 {
		t.Helper()
		r := kmsg.NewPtrTxnOffsetCommitRequest()
		r.Version, r.TransactionalID, r.Group, r.ProducerID, r.ProducerEpoch, r.Generation = 3, "tx", group, pid, epoch, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "txin"
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = 1, off, -1
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("TxnOffsetCommit: %v", err)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	fetch := func(cl *kgo.Client, stable bool) (int16, int64) {
		t.Helper()
		r := kmsg.NewPtrOffsetFetchRequest()
		r.Version, r.Group, r.RequireStable = 7, group, stable
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = "txin", []int32{1}
		r.Topics = append(r.Topics, rt)
		resp, err := r.RequestWith(ctx, cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("OffsetFetch: %v %+v", err, resp)
		}
		p := resp.Topics[0].Partitions[0]
		return p.ErrorCode, p.Offset
	}
	marker := func(cl *kgo.Client, commit bool) {
		t.Helper()
		r := kmsg.NewPtrWriteTxnMarkersRequest()
		r.Version = 1
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.Committed = pid, epoch, commit
		mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		mt.Topic, mt.Partitions = coordinator.OffsetsTopicName, []int32{offsetsPartition}
		m.Topics = append(m.Topics, mt)
		r.Markers = append(r.Markers, m)
		kresp, err := cl.Broker(0).Request(ctx, r)
		if err != nil {
			t.Fatalf("WriteTxnMarkers: %v", err)
		}
		resp := kresp.(*kmsg.WriteTxnMarkersResponse)
		if len(resp.Markers) != 1 || len(resp.Markers[0].Topics) != 1 || resp.Markers[0].Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("WriteTxnMarkers answer %+v", resp.Markers)
		}
	}

	code := txnCommit(cl, 10)
	if code == kerr.InvalidRecord.Code {
		t.Skip("the __consumer_offsets partition refuses coordinator-origin transactional batches (the partition side of transactions)")
	}
	if code != 0 {
		t.Fatalf("TxnOffsetCommit: %v", kerr.ErrorForCode(code))
	}
	vr, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	served := false
	for _, k := range vr.ApiKeys {
		served = served || (k.ApiKey == 27 && k.MaxVersion >= 1)
	}
	if !served {
		t.Skip("WriteTxnMarkers (API 27) is not served yet (the partition side of transactions)")
	}

	if c, off := fetch(cl, true); c != kerr.UnstableOffsetCommit.Code || off != -1 {
		t.Fatalf("require_stable before the marker: %d/%d", c, off)
	}
	if c, off := fetch(cl, false); c != 0 || off != -1 {
		t.Fatalf("before the marker: %d/%d, want nothing committed", c, off)
	}
	marker(cl, true)
	if c, off := fetch(cl, true); c != 0 || off != 10 {
		t.Fatalf("after COMMIT: %d/%d, want 0/10", c, off)
	}
	if code := txnCommit(cl, 20); code != 0 {
		t.Fatal(code)
	}
	marker(cl, false)
	if c, off := fetch(cl, true); c != 0 || off != 10 {
		t.Fatalf("after ABORT: %d/%d, want 0/10", c, off)
	}
	if code := txnCommit(cl, 30); code != 0 {
		t.Fatal(code)
	}
	b.Stop()
	b.Start()
	cl2 := b.Client(kgo.RetryTimeout(20 * time.Second))
	if c, _ := fetch(cl2, true); c != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("open transaction after restart: %d, want UNSTABLE_OFFSET_COMMIT", c)
	}
	if c, off := fetch(cl2, false); c != 0 || off != 10 {
		t.Fatalf("after restart: %d/%d, want the committed 10", c, off)
	}
	marker(cl2, true)
	if c, off := fetch(cl2, true); c != 0 || off != 30 {
		t.Fatalf("after restart and COMMIT: %d/%d, want 0/30", c, off)
	}
}

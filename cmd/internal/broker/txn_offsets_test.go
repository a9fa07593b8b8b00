package broker

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/actors/coordinator"
)

// TestTxnOffsetCommitOnBroker runs the group coordinator's side of
// transactions on a real single-node broker over loopback: raw
// TxnOffsetCommit requests (producer id from InitProducerId without a
// transactional id) are appended to __consumer_offsets' real partition as
// transactional batches, stay invisible to OffsetFetch (require_stable:
// UNSTABLE_OFFSET_COMMIT) until a WriteTxnMarkers COMMIT marker is in the
// log (the handler calls CompleteTxnOffsets), and an aborted one leaves the committed
// offset. A restart rebuilds committed and open transactions from the
// log, control batches included. KIP-890 verification is off: these
// producers have no transaction at a coordinator to verify with
// (txn_offset_commit_verify_test.go covers the verified path).
func TestTxnOffsetCommitOnBroker(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	props := func() map[string]string {
		return map[string]string{"log.dirs": dir, "offsets.topic.num.partitions": "3", "group.initial.rebalance.delay.ms": "0",
			"transaction.partition.verification.enable": "false"}
	}
	cfg, port := configOnFreePort(t, props())
	b, err := Start(cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { b.Close() }()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RetryTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cl.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "in"); err != nil {
		t.Fatal(err)
	}

	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.Version, ip.TransactionTimeoutMillis = 4, 60000
	ipr, err := ip.RequestWith(ctx, cl)
	if err != nil || ipr.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v %+v", err, ipr)
	}
	pid, epoch := ipr.ProducerID, ipr.ProducerEpoch

	txnCommit := func(off int64) int16 {
		t.Helper()
		r := kmsg.NewPtrTxnOffsetCommitRequest()
		r.Version, r.TransactionalID, r.Group, r.ProducerID, r.ProducerEpoch, r.Generation = 3, "tx", "g", pid, epoch, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "in"
		for p := int32(0); p < 3; p++ { // partition 2 does not exist
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = p, off+int64(p), -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		r.Topics = append(r.Topics, rt)
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("TxnOffsetCommit: %v", err)
		}
		ps := resp.Topics[0].Partitions
		if len(ps) != 3 || ps[2].ErrorCode != kerr.UnknownTopicOrPartition.Code || ps[0].ErrorCode != ps[1].ErrorCode {
			t.Fatalf("TxnOffsetCommit answer %+v", ps)
		}
		return ps[0].ErrorCode
	}
	fetch := func(stable bool) (int16, int64) {
		t.Helper()
		r := kmsg.NewPtrOffsetFetchRequest()
		r.Version, r.Group, r.RequireStable = 7, "g", stable
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = "in", []int32{1}
		r.Topics = append(r.Topics, rt)
		resp, err := r.RequestWith(ctx, cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("OffsetFetch: %v %+v", err, resp)
		}
		p := resp.Topics[0].Partitions[0]
		return p.ErrorCode, p.Offset
	}

	if code := txnCommit(100); code != 0 {
		t.Fatalf("TxnOffsetCommit: %v", kerr.ErrorForCode(code))
	}
	if c, off := fetch(true); c != kerr.UnstableOffsetCommit.Code || off != -1 {
		t.Fatalf("require_stable before the marker: %d/%d", c, off)
	}
	if c, off := fetch(false); c != 0 || off != -1 {
		t.Fatalf("without require_stable before the marker: %d/%d, want nothing committed", c, off)
	}

	offsetsPartition := coordinator.PartitionFor("g", 3)
	marker := func(commit bool) {
		t.Helper()
		writeMarker(t, ctx, cl, offsetsPartition, pid, epoch, commit)
	}
	marker(true)
	if c, off := fetch(true); c != 0 || off != 101 {
		t.Fatalf("after the commit marker: %d/%d, want 0/101", c, off)
	}
	if code := txnCommit(200); code != 0 {
		t.Fatalf("second TxnOffsetCommit: %d", code)
	}
	marker(false)
	if c, off := fetch(true); c != 0 || off != 101 {
		t.Fatalf("after the abort marker: %d/%d, want 0/101", c, off)
	}
	// An open transaction, then a restart: it is rebuilt from the log.
	if code := txnCommit(300); code != 0 {
		t.Fatalf("third TxnOffsetCommit: %d", code)
	}
	cl.Close()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	cfg, port = configOnFreePort(t, props())
	b, err = Start(cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	addr = "127.0.0.1:" + strconv.Itoa(port)
	cl, err = kgo.NewClient(kgo.SeedBrokers(addr), kgo.RetryTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if c, off := fetch(false); c != 0 || off != 101 {
		t.Fatalf("after restart: %d/%d, want the committed 101", c, off)
	}
	if c, _ := fetch(true); c != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("after restart, open transaction: %d, want UNSTABLE_OFFSET_COMMIT", c)
	}
	marker(true)
	if c, off := fetch(true); c != 0 || off != 301 {
		t.Fatalf("after restart and the commit marker: %d/%d, want 0/301", c, off)
	}
}

// writeMarker sends the broker a WriteTxnMarkers request with producer's
// COMMIT or ABORT marker for __consumer_offsets partition p, as the
// transaction coordinator does; the handler appends it and completes the
// group's transactional offsets.
func writeMarker(t *testing.T, ctx context.Context, cl *kgo.Client, p int32, pid int64, epoch int16, commit bool) {
	t.Helper()
	r := kmsg.NewPtrWriteTxnMarkersRequest()
	r.Version = 1
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = pid, epoch, commit, 0
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = coordinator.OffsetsTopicName, []int32{p}
	m.Topics = append(m.Topics, mt)
	r.Markers = append(r.Markers, m)
	resp, err := r.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("WriteTxnMarkers: %v", err)
	}
	if code := resp.Markers[0].Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("WriteTxnMarkers: %v", kerr.ErrorForCode(code))
	}
}

package handlers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/storage"
	"gregor/storage/record"
	"gregor/storage/segment"
)

// txnBatch builds a transactional batch of n records for producer pid.
func txnBatch(t testing.TB, pid int64, epoch int16, seq int32, n int) []byte {
	t.Helper()
	recs := make([]record.BatchRecord, n)
	for i := range recs {
		recs[i] = record.BatchRecord{Value: []byte{byte(pid), byte(i)}, TimestampDelta: int64(i)}
	}
	b, err := record.BuildBatch(record.BatchOptions{BaseTimestamp: time.Now().UnixMilli(), PartitionLeaderEpoch: -1, Transactional: true,
		Producer: &record.Producer{ID: pid, Epoch: epoch, BaseSequence: seq}}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// txnProduce produces records with transactional id tid (nil: none) at v9, acks=-1.
func (e *dataEnv) txnProduce(tid *string, tp storage.TopicPartition, records []byte) kmsg.ProduceResponseTopicPartition {
	e.t.Helper()
	req := produceReq(-1, tp, records)
	req.TransactionID = tid
	return e.call(0, 9, req).Msg.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
}

// marker sends WriteTxnMarkers (v1) for one producer and partition and
// returns the partition's error code.
func (e *dataEnv) marker(pid int64, epoch int16, commit bool, coordEpoch int32, tp storage.TopicPartition) int16 {
	e.t.Helper()
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = pid, epoch, commit, coordEpoch
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = tp.Topic, []int32{tp.Partition}
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)
	resp := e.call(27, 1, req).Msg.(*kmsg.WriteTxnMarkersResponse)
	resp.SetVersion(1)
	resp.AppendTo(nil) // encodes at v1
	if len(resp.Markers) != 1 || resp.Markers[0].ProducerID != pid || len(resp.Markers[0].Topics) != 1 || resp.Markers[0].Topics[0].Topic != tp.Topic {
		e.t.Fatalf("WriteTxnMarkers response %+v", resp)
	}
	return resp.Markers[0].Topics[0].Partitions[0].ErrorCode
}

// fetchIso fetches tp from offset at isolation level iso (v12).
func (e *dataEnv) fetchIso(tp storage.TopicPartition, offset int64, iso int8) kmsg.FetchResponseTopicPartition {
	e.t.Helper()
	req := fetchReq(tp, offset, 0, 0)
	req.IsolationLevel = iso
	t := e.t.(*testing.T)
	return decodeFetch(t, 12, e.call(1, 12, req)).Topics[0].Partitions[0]
}

// listLatest answers ListOffsets latest (v7) at isolation level iso.
func (e *dataEnv) listLatest(tp storage.TopicPartition, iso int8) int64 {
	e.t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID, req.IsolationLevel = -1, iso
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = tp.Topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = tp.Partition, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	p := e.call(2, 7, req).Msg.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		e.t.Fatalf("list offsets: error %d", p.ErrorCode)
	}
	return p.Offset
}

// headers splits a fetched records field into batch headers (control
// batches included, which record.Validate refuses as client input).
func headers(t *testing.T, b []byte) []record.Header {
	t.Helper()
	var out []record.Header
	for len(b) > 0 {
		h, bb, err := record.ValidateIntegrity(b)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
		b = b[len(bb):]
	}
	return out
}

func aborted(p kmsg.FetchResponseTopicPartition) [][2]int64 {
	var out [][2]int64
	for _, a := range p.AbortedTransactions {
		out = append(out, [2]int64{a.ProducerID, a.FirstOffset})
	}
	return out
}

// fakeCompleter records CompleteTxnOffsets calls (a GroupSource whose
// other methods are never called here).
type fakeCompleter struct {
	GroupSource
	mu    sync.Mutex
	calls []string
}

func (f *fakeCompleter) CompleteTxnOffsets(p int32, pid int64, epoch int16, commit bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	verdict := "abort"
	if commit {
		verdict = "commit"
	}
	f.calls = append(f.calls, fmt.Sprintf("%d/%d/%d/%s", p, pid, epoch, verdict))
}

func TestTransactionsProduceMarkersReadCommitted(t *testing.T) {
	tpO := storage.TopicPartition{Topic: offsetsTopicName, Partition: 0}
	e := newDataEnv(t, storage.DefaultLogConfig(), tpA, tpO)
	gc := &fakeCompleter{}
	e.b.Groups = gc
	tid := "tx"

	// Refusals before any state: a transactional batch without the
	// request's transactional id, a coordinator-shaped batch (no sequence)
	// from a client.
	if p := e.txnProduce(nil, tpA, txnBatch(t, 1, 0, 0, 1)); p.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("transactional batch without transactional id: %d", p.ErrorCode)
	}
	if p := e.txnProduce(&tid, tpA, txnBatch(t, 1, 0, -1, 1)); p.ErrorCode != kerr.InvalidRecord.Code {
		t.Fatalf("client batch with base sequence -1: %d", p.ErrorCode)
	}

	// Producer 1 writes 0..2, producer 2 writes 3..4, a plain record at 5.
	if p := e.txnProduce(&tid, tpA, txnBatch(t, 1, 0, 0, 3)); p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("transactional produce: %+v", p)
	}
	if p := e.txnProduce(&tid, tpA, txnBatch(t, 2, 0, 0, 2)); p.ErrorCode != 0 || p.BaseOffset != 3 {
		t.Fatalf("transactional produce: %+v", p)
	}
	if p := e.produce(9, -1, tpA, mkBatch(t, 1, time.Now().UnixMilli(), nil, false)); p.ErrorCode != 0 || p.BaseOffset != 5 {
		t.Fatalf("plain produce: %+v", p)
	}
	// Producer 1 writing outside its open transaction.
	idem := mkBatch(t, 1, time.Now().UnixMilli(), &record.Producer{ID: 1, Epoch: 0, BaseSequence: 3}, false)
	if p := e.produce(9, -1, tpA, idem); p.ErrorCode != kerr.InvalidTxnState.Code {
		t.Fatalf("non-transactional write mid-transaction: %d, want INVALID_TXN_STATE", p.ErrorCode)
	}

	// The LSO is the first open transaction's first offset: read_committed
	// sees nothing, read_uncommitted everything.
	rc := e.fetchIso(tpA, 0, 1)
	if rc.HighWatermark != 6 || rc.LastStableOffset != 0 || len(rc.RecordBatches) != 0 || rc.AbortedTransactions != nil {
		t.Fatalf("read_committed with open transactions: hw %d lso %d %d bytes aborted %v", rc.HighWatermark, rc.LastStableOffset, len(rc.RecordBatches), rc.AbortedTransactions)
	}
	ru := e.fetchIso(tpA, 0, 0)
	if hs := headers(t, ru.RecordBatches); len(hs) != 3 || ru.LastStableOffset != 0 || ru.AbortedTransactions != nil {
		t.Fatalf("read_uncommitted: %d batches lso %d aborted %v", len(hs), ru.LastStableOffset, ru.AbortedTransactions)
	}
	if rcl, rul := e.listLatest(tpA, 1), e.listLatest(tpA, 0); rcl != 0 || rul != 6 {
		t.Fatalf("ListOffsets latest: read_committed %d (want 0), read_uncommitted %d (want 6)", rcl, rul)
	}

	// Markers: an unknown partition, an older producer epoch.
	if code := e.marker(1, 0, false, 1, storage.TopicPartition{Topic: "nope"}); code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("marker for an unknown partition: %d", code)
	}
	if p := e.txnProduce(&tid, tpA, txnBatch(t, 3, 5, 0, 1)); p.ErrorCode != 0 || p.BaseOffset != 6 {
		t.Fatalf("producer 3: %+v", p)
	}
	if code := e.marker(3, 4, false, 1, tpA); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("marker with an older epoch: %d, want INVALID_PRODUCER_EPOCH", code)
	}

	// Producer 1 aborts (marker at 7): the LSO moves to producer 2's 3;
	// read_committed gets 0..2 with producer 1's transaction listed.
	if code := e.marker(1, 0, false, 1, tpA); code != 0 {
		t.Fatalf("abort marker: %d", code)
	}
	if code := e.marker(1, 0, false, 0, tpA); code != kerr.TransactionCoordinatorFenced.Code {
		t.Fatalf("marker from an older coordinator epoch: %d, want TRANSACTION_COORDINATOR_FENCED", code)
	}
	rc = e.fetchIso(tpA, 0, 1)
	if hs := headers(t, rc.RecordBatches); rc.LastStableOffset != 3 || len(hs) != 1 || hs[0].LastOffset() != 2 ||
		!slices.Equal(aborted(rc), [][2]int64{{1, 0}}) {
		t.Fatalf("read_committed after the abort: lso %d batches %+v aborted %v", rc.LastStableOffset, hs, aborted(rc))
	}
	if got := e.listLatest(tpA, 1); got != 3 {
		t.Fatalf("ListOffsets read_committed latest %d, want 3", got)
	}

	// Producer 2 and 3 commit: everything is stable; only producer 1's
	// transaction is aborted.
	if code := e.marker(2, 0, true, 1, tpA); code != 0 {
		t.Fatalf("commit marker: %d", code)
	}
	if code := e.marker(3, 5, true, 1, tpA); code != 0 {
		t.Fatalf("commit marker: %d", code)
	}
	rc = e.fetchIso(tpA, 0, 1)
	hs := headers(t, rc.RecordBatches)
	if rc.LastStableOffset != 10 || rc.HighWatermark != 10 || len(hs) != 7 || !hs[4].IsControl() || hs[4].BaseOffset != 7 || !slices.Equal(aborted(rc), [][2]int64{{1, 0}}) {
		t.Fatalf("read_committed after the commits: lso %d hw %d %d batches aborted %v", rc.LastStableOffset, rc.HighWatermark, len(hs), aborted(rc))
	}
	// A fetch past the aborted transaction does not list it.
	if rc = e.fetchIso(tpA, 8, 1); len(rc.AbortedTransactions) != 0 || rc.AbortedTransactions == nil {
		t.Fatalf("read_committed from 8: aborted %v (want an empty list)", rc.AbortedTransactions)
	}

	// Producer 2 opens another transaction (LSO 10) and the partition's
	// actor restarts (it reopens and recovers its log, rebuilding the
	// producer state): the LSO and the aborted list survive; a
	// .txnindex lost with the crash is rebuilt from the markers.
	if p := e.txnProduce(&tid, tpA, txnBatch(t, 2, 0, 2, 2)); p.ErrorCode != 0 || p.BaseOffset != 10 {
		t.Fatalf("second transaction: %+v", p)
	}
	h, _ := e.m.Get(tpA)
	dir := h.View().Log.(partition.StorageLog).Dir()
	for round := 0; round < 2; round++ {
		if round == 1 {
			if err := os.Remove(segment.Path(dir, 0, segment.TxnIndexSuffix)); err != nil {
				t.Fatal(err)
			}
		}
		restartPartition(t, h)
		rc = e.fetchIso(tpA, 0, 1)
		if rc.LastStableOffset != 10 || rc.HighWatermark != 12 || !slices.Equal(aborted(rc), [][2]int64{{1, 0}}) {
			t.Fatalf("round %d after restart: lso %d hw %d aborted %v", round, rc.LastStableOffset, rc.HighWatermark, aborted(rc))
		}
		if got := e.listLatest(tpA, 1); got != 10 {
			t.Fatalf("round %d: ListOffsets read_committed %d, want 10", round, got)
		}
	}

	// DescribeProducers (after the restart: rebuilt state).
	dreq := kmsg.NewPtrDescribeProducersRequest()
	dt := kmsg.NewDescribeProducersRequestTopic()
	dt.Topic, dt.Partitions = tpA.Topic, []int32{0, 7}
	dreq.Topics = append(dreq.Topics, dt)
	dresp := e.call(61, 0, dreq).Msg.(*kmsg.DescribeProducersResponse)
	dps := dresp.Topics[0].Partitions
	if len(dps) != 2 || dps[0].ErrorCode != 0 || dps[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("DescribeProducers: %+v", dps)
	}
	var got []string
	for _, ap := range dps[0].ActiveProducers {
		got = append(got, fmt.Sprintf("%d e%d s%d c%d t%d", ap.ProducerID, ap.ProducerEpoch, ap.LastSequence, ap.CoordinatorEpoch, ap.CurrentTxnStartOffset))
		if ap.LastTimestamp <= 0 {
			t.Fatalf("producer %d: last timestamp %d", ap.ProducerID, ap.LastTimestamp)
		}
	}
	if want := []string{"1 e0 s2 c1 t-1", "2 e0 s3 c1 t10", "3 e5 s0 c1 t-1"}; !slices.Equal(got, want) {
		t.Fatalf("active producers %q, want %q", got, want)
	}

	// __consumer_offsets: a coordinator-origin transactional batch (no
	// sequence) is accepted from the group coordinator's path and holds
	// the LSO; its marker is reported to the group coordinator.
	ho, _ := e.m.Get(tpO)
	cb, err := record.BuildBatch(record.BatchOptions{BaseTimestamp: time.Now().UnixMilli(), PartitionLeaderEpoch: -1, Transactional: true,
		Producer: &record.Producer{ID: 4, Epoch: 2, BaseSequence: -1}}, []record.BatchRecord{{Key: []byte("k"), Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	hdr, _ := record.ParseHeader(cb)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if r := partition.ProduceWait(ctx, ho, &partition.Produce{Batch: cb, Header: hdr, Acks: -1}); r.Err != nil || r.BaseOffset != 0 {
		t.Fatalf("coordinator batch: %+v", r)
	}
	if v := ho.View(); v.LastStableOffset != 0 || v.HighWatermark != 1 {
		t.Fatalf("__consumer_offsets lso %d hw %d", v.LastStableOffset, v.HighWatermark)
	}
	if code := e.marker(4, 2, true, 1, tpO); code != 0 {
		t.Fatalf("offsets marker: %d", code)
	}
	if code := e.marker(4, 1, false, 1, tpO); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("stale offsets marker: %d", code)
	}
	if v := ho.View(); v.LastStableOffset != 2 {
		t.Fatalf("__consumer_offsets lso %d after commit, want 2", v.LastStableOffset)
	}
	gc.mu.Lock()
	calls := slices.Clone(gc.calls)
	gc.mu.Unlock()
	if !slices.Equal(calls, []string{"0/4/2/commit"}) {
		t.Fatalf("group coordinator told %v, want one commit for producer 4", calls)
	}
}

// restartPartition crashes the partition actor and returns once its next
// incarnation has started: a follower fetch from a replica that is not
// assigned is queued behind the crash and answered (NOT_LEADER_OR_FOLLOWER)
// by the restarted actor, after its Started rebuilt the state.
func restartPartition(t *testing.T, h *partition.Handle) {
	t.Helper()
	h.Crash("test restart")
	if err := h.FollowerFetch(99, 0); err != kerr.NotLeaderForPartition {
		t.Fatalf("probe after the restart: %v", err)
	}
	if !h.View().IsLeader() {
		t.Fatalf("not leading after the restart: %+v", h.View())
	}
}

// TestProducerSnapshotLoadedOnRestart: a roll writes <offset>.snapshot in
// Kafka's ProducerSnapshot v1 format, and a restart starts from it rather
// than from the log: producer 7's only batch is deleted (DeleteRecords)
// after the snapshot was taken, yet after the restart its retry is still
// recognised as a duplicate (a scan of what is left would not know
// producer 7 and append the retry again) and its open transaction still
// holds the last stable offset.
func TestProducerSnapshotLoadedOnRestart(t *testing.T) {
	cfg := storage.DefaultLogConfig()
	cfg.SegmentBytes = 300
	e := newDataEnv(t, cfg, tpA)
	tid := "tx"
	first := txnBatch(t, 7, 0, 0, 1)
	retry := append([]byte(nil), first...)
	if p := e.txnProduce(&tid, tpA, first); p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("transactional produce: %+v", p)
	}
	for i := 0; i < 8; i++ {
		if p := e.produce(9, -1, tpA, mkBatch(t, 1, time.Now().UnixMilli(), nil, false)); p.ErrorCode != 0 {
			t.Fatalf("plain produce %d: %d", i, p.ErrorCode)
		}
	}
	h, _ := e.m.Get(tpA)
	lg := h.View().Log.(partition.StorageLog)
	if lg.NumSegments() < 3 {
		t.Fatalf("%d segments: no roll", lg.NumSegments())
	}
	ents, err := os.ReadDir(lg.Dir())
	if err != nil {
		t.Fatal(err)
	}
	var snaps []string
	for _, en := range ents {
		if filepath.Ext(en.Name()) == storage.ProducerSnapshotSuffix {
			snaps = append(snaps, en.Name())
		}
	}
	if len(snaps) == 0 || len(snaps) > 2 {
		t.Fatalf("snapshot files %v, want one or two", snaps)
	}
	data, err := os.ReadFile(filepath.Join(lg.Dir(), snaps[len(snaps)-1]))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 10+46 || data[0] != 0 || data[1] != 1 {
		t.Fatalf("snapshot of %d bytes, version %d: want Kafka's v1 with one 46-byte entry", len(data), int(data[0])<<8|int(data[1]))
	}
	ps, err := partition.DecodeProducerSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	if en := ps.Entry(7); en == nil || en.LastSeq() != 0 || en.TxnFirstOffset != 0 {
		t.Fatalf("snapshot entry for producer 7: %+v", en)
	}

	// Producer 7's batch goes with the first segment; then a restart.
	del := kmsg.NewPtrDeleteRecordsRequest()
	del.TimeoutMillis = 5000
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = tpA.Topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Offset = 5
	rt.Partitions = append(rt.Partitions, rp)
	del.Topics = append(del.Topics, rt)
	if p := e.call(21, 2, del).Msg.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]; p.ErrorCode != 0 || p.LowWatermark != 5 {
		t.Fatalf("delete records: %+v", p)
	}
	restartPartition(t, h)
	if v := h.View(); v.LastStableOffset != 5 || v.HighWatermark != 9 {
		t.Fatalf("after restart: lso %d hw %d, want the log start 5 and 9 (producer 7's transaction still open)", v.LastStableOffset, v.HighWatermark)
	}
	if p := e.txnProduce(&tid, tpA, retry); p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("retry after restart: %+v, want the duplicate answered with offset 0", p)
	}
}

// leaderBatch builds a batch as a leader stored it: base offset and leader
// epoch set (what a follower's fetch carries).
func leaderBatch(t *testing.T, base int64, opts record.BatchOptions, recs ...record.BatchRecord) []byte {
	t.Helper()
	opts.BaseOffset, opts.PartitionLeaderEpoch, opts.BaseTimestamp = base, 1, time.Now().UnixMilli()
	b, err := record.BuildBatch(opts, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFollowerRebuildsTransactionsAndTruncates: a follower applies the
// leader's transactional batches and markers as the leader did (same LSO,
// same .txnindex entry), and a truncation below a marker reopens its
// transaction and drops the index entry.
func TestFollowerRebuildsTransactionsAndTruncates(t *testing.T) {
	e := newDataEnv(t, storage.DefaultLogConfig())
	tpF := storage.TopicPartition{Topic: "followed", Partition: 0}
	if errs := e.m.ApplyLeaderAndIsr([]partition.LeaderAndIsr{{TopicPartition: tpF, Leader: 1, LeaderEpoch: 1, ISR: []int32{1, 0},
		Replicas: []int32{1, 0}, Config: storage.DefaultLogConfig()}}); len(errs) != 0 {
		t.Fatal(errs)
	}
	h, _ := e.m.Get(tpF)
	txn := func(pid int64, base int64, n int) []byte {
		recs := make([]record.BatchRecord, n)
		for i := range recs {
			recs[i] = record.BatchRecord{Value: []byte{byte(i)}, TimestampDelta: int64(i)}
		}
		return leaderBatch(t, base, record.BatchOptions{Transactional: true, Producer: &record.Producer{ID: pid, BaseSequence: 0}}, recs...)
	}
	marker := func(pid, base int64, commit bool) []byte {
		return leaderBatch(t, base, record.BatchOptions{Transactional: true, Control: true, Producer: &record.Producer{ID: pid, BaseSequence: -1}},
			record.EndTxnMarker(commit, 0))
	}
	follow := func(what string, done func(reply func(partition.FollowerResult))) int64 {
		t.Helper()
		ch := make(chan partition.FollowerResult, 1)
		done(func(r partition.FollowerResult) { ch <- r })
		select {
		case r := <-ch:
			if r.Err != nil {
				t.Fatalf("%s: %v", what, r.Err)
			}
			return r.LogEndOffset
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no answer", what)
		}
		return -1
	}
	abortedOf := func() []storage.AbortedTxn {
		return h.View().Log.(partition.TxnLog).CollectAbortedTxns(0, h.View().LogEndOffset+1)
	}

	// Leader's log: producer 1 at 0-1, its abort at 2, producer 2 at 3 (open).
	batches := slices.Concat(txn(1, 0, 2), marker(1, 2, false), txn(2, 3, 1))
	if leo := follow("append", func(r func(partition.FollowerResult)) { h.AppendAsFollower(1, batches, 4, 0, r) }); leo != 4 {
		t.Fatalf("follower log end %d", leo)
	}
	if v := h.View(); v.HighWatermark != 4 || v.LastStableOffset != 3 {
		t.Fatalf("follower hw %d lso %d, want 4 and 3", v.HighWatermark, v.LastStableOffset)
	}
	if got := abortedOf(); !slices.Equal(got, []storage.AbortedTxn{{ProducerID: 1, FirstOffset: 0, LastOffset: 2, LastStableOffset: 3}}) {
		t.Fatalf("follower .txnindex %+v", got)
	}
	// The leader's log diverged at 2: the follower truncates the marker away.
	if leo := follow("truncate", func(r func(partition.FollowerResult)) { h.TruncateTo(1, 2, false, r) }); leo != 2 {
		t.Fatalf("log end after truncation %d", leo)
	}
	if v := h.View(); v.LastStableOffset != 0 {
		t.Fatalf("lso after truncating the marker %d, want 0 (producer 1's transaction open again)", v.LastStableOffset)
	}
	if got := abortedOf(); len(got) != 0 {
		t.Fatalf(".txnindex after truncation %+v", got)
	}
	// The new leader commits it instead.
	if leo := follow("append", func(r func(partition.FollowerResult)) { h.AppendAsFollower(1, marker(1, 2, true), 3, 0, r) }); leo != 3 {
		t.Fatalf("log end %d", leo)
	}
	if v := h.View(); v.LastStableOffset != 3 || len(abortedOf()) != 0 {
		t.Fatalf("after the commit: lso %d aborted %+v", v.LastStableOffset, abortedOf())
	}
}

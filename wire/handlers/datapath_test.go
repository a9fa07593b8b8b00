package handlers

import (
	"context"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/partition"
	"gregor/storage"
	"gregor/storage/record"
	"gregor/wire"
)

// dataEnv is a broker with a real replica manager (real actors) over a
// real storage.LogManager in a temp dir.
type dataEnv struct {
	t testing.TB
	b *Broker
	m *partition.Manager
	// in is the actor system's instruments (per-actor received counts).
	in *actors.Instruments
	// sys is the actor system the partition actors run in.
	sys *actor.ActorSystem
}

func newDataEnv(t testing.TB, cfg storage.LogConfig, tps ...storage.TopicPartition) *dataEnv {
	t.Helper()
	sys := actors.NewSystem(nil)
	dir := t.TempDir()
	lm, err := storage.NewLogManager(storage.LogManagerConfig{Dirs: []string{dir}, Defaults: storage.DefaultLogConfig()})
	if err != nil {
		t.Fatal(err)
	}
	store := partition.StorageStore{M: lm}
	ids, err := partition.OpenProducerIDs(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := partition.NewManager(partition.ManagerConfig{System: sys, Store: store, BrokerID: 0, ProducerIDs: ids,
		Backoff: actors.BackoffStrategy{Initial: time.Millisecond, Max: 5 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Close()
		sys.Shutdown()
		if err := lm.Close(); err != nil {
			t.Error(err)
		}
	})
	var states []partition.LeaderAndIsr
	for _, tp := range tps {
		states = append(states, partition.LeaderAndIsr{TopicPartition: tp, Leader: 0, LeaderEpoch: 2, ISR: []int32{0}, Replicas: []int32{0}, Config: cfg})
	}
	if errs := m.ApplyLeaderAndIsr(states); len(errs) != 0 {
		t.Fatal(errs)
	}
	return &dataEnv{t: t, b: &Broker{Log: zap.NewNop(), Replicas: m}, m: m, in: actors.InstrumentsOf(sys), sys: sys}
}

func (e *dataEnv) call(key, version int16, req kmsg.Request) wire.Response {
	e.t.Helper()
	req.SetVersion(version)
	rc := &wire.RequestContext{Ctx: context.Background(), Key: key, Version: version}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, ok := e.b.Handle(rc, req).Resolve(ctx)
	if !ok {
		e.t.Fatalf("key %d v%d: no response", key, version)
	}
	return resp
}

func mkBatch(t testing.TB, n int, ts int64, prod *record.Producer, key bool) []byte {
	t.Helper()
	recs := make([]record.BatchRecord, n)
	for i := range recs {
		recs[i] = record.BatchRecord{Value: []byte{byte(i), 'v'}, TimestampDelta: int64(i)}
		if key {
			recs[i].Key = []byte{'k', byte(i)}
		}
	}
	b, err := record.BuildBatch(record.BatchOptions{BaseTimestamp: ts, PartitionLeaderEpoch: -1, Producer: prod}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func produceReq(acks int16, tp storage.TopicPartition, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = acks, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = tp.Topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = tp.Partition, records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func (e *dataEnv) produce(version, acks int16, tp storage.TopicPartition, records []byte) kmsg.ProduceResponseTopicPartition {
	e.t.Helper()
	resp := e.call(0, version, produceReq(acks, tp, records))
	if resp.None {
		return kmsg.ProduceResponseTopicPartition{}
	}
	pr := resp.Msg.(*kmsg.ProduceResponse)
	// Encodes at the version asked.
	pr.SetVersion(version)
	pr.AppendTo(nil)
	return pr.Topics[0].Partitions[0]
}

// produceCopies produces n copies of the batch proto to tp (v9, acks 1),
// a fresh copy each time (the partition actor rewrites the header in
// place), failing on any error.
func (e *dataEnv) produceCopies(tp storage.TopicPartition, proto []byte, n int) {
	e.t.Helper()
	for i := 0; i < n; i++ {
		if p := e.produce(9, 1, tp, append([]byte(nil), proto...)); p.ErrorCode != 0 {
			e.t.Fatalf("produce %d of %d: error %d", i+1, n, p.ErrorCode)
		}
	}
}

func fetchReq(tp storage.TopicPartition, offset int64, maxWait, minBytes int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, maxWait, minBytes, 50<<20
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = tp.Topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = tp.Partition, offset, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// decodeFetch materialises a zero-copy fetch body and decodes it with kmsg.
func decodeFetch(t *testing.T, version int16, resp wire.Response) *kmsg.FetchResponse {
	t.Helper()
	if resp.Body == nil {
		if resp.Msg != nil {
			return resp.Msg.(*kmsg.FetchResponse)
		}
		t.Fatal("fetch answered neither a body nor a message")
	}
	var buf []byte
	for _, c := range resp.Body.Chunks {
		if c.Bytes != nil {
			buf = append(buf, c.Bytes...)
			continue
		}
		if c.Stream != nil {
			n := len(buf)
			if err := c.Stream.Emit(func(p []byte) error { buf = append(buf, p...); return nil }); err != nil {
				t.Fatal(err)
			}
			if int64(len(buf)-n) != c.Stream.Len() {
				t.Fatalf("stream emitted %d of its %d bytes", len(buf)-n, c.Stream.Len())
			}
			continue
		}
		p := make([]byte, c.Region.Len)
		if _, err := c.Region.File.ReadAt(p, c.Region.Pos); err != nil {
			t.Fatal(err)
		}
		buf = append(buf, p...)
	}
	if int64(len(buf)) != resp.Body.Size {
		t.Fatalf("body size %d, chunks hold %d", resp.Body.Size, len(buf))
	}
	if resp.Body.Release != nil {
		resp.Body.Release()
	}
	fr := kmsg.NewPtrFetchResponse()
	fr.Version = version
	if err := fr.ReadFrom(buf); err != nil {
		t.Fatalf("decode fetch v%d: %v", version, err)
	}
	return fr
}

// batches splits a records field into validated batch headers.
func batches(t *testing.T, b []byte) []record.Header {
	t.Helper()
	var out []record.Header
	for len(b) > 0 {
		h, bb, err := record.Validate(b)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
		b = b[len(bb):]
	}
	return out
}

var tpA = storage.TopicPartition{Topic: "orders", Partition: 0}

func TestProduceThenFetchEveryVersion(t *testing.T) {
	e := newDataEnv(t, storage.DefaultLogConfig(), tpA)
	if p := e.produce(9, -1, tpA, mkBatch(t, 3, 1000, nil, false)); p.ErrorCode != 0 || p.BaseOffset != 0 || p.LogStartOffset != 0 || p.LogAppendTime != -1 {
		t.Fatalf("first produce %+v", p)
	}
	if p := e.produce(3, 1, tpA, mkBatch(t, 2, 2000, nil, false)); p.ErrorCode != 0 || p.BaseOffset != 3 {
		t.Fatalf("second produce %+v", p)
	}
	for v := int16(4); v <= 12; v++ {
		fr := decodeFetch(t, v, e.call(1, v, fetchReq(tpA, 1, 0, 0)))
		fp := fr.Topics[0].Partitions[0]
		if fp.ErrorCode != 0 || fp.HighWatermark != 5 || fp.LastStableOffset != 5 || (v >= 5 && fp.LogStartOffset != 0) {
			t.Fatalf("v%d: %+v", v, fp)
		}
		hs := batches(t, fp.RecordBatches)
		// Offset 1 lies inside the first batch: both batches come back whole.
		if len(hs) != 2 || hs[0].BaseOffset != 0 || hs[0].RecordCount != 3 || hs[1].BaseOffset != 3 || hs[1].PartitionLeaderEpoch != 2 {
			t.Fatalf("v%d: batches %+v", v, hs)
		}
	}
	// At the high watermark: empty, no error.
	fr := decodeFetch(t, 11, e.call(1, 11, fetchReq(tpA, 5, 0, 0)))
	if fp := fr.Topics[0].Partitions[0]; fp.ErrorCode != 0 || len(fp.RecordBatches) != 0 {
		t.Fatalf("fetch at hw: %+v", fp)
	}
	// acks=0: nothing is sent back, the batch is still appended.
	if resp := e.call(0, 9, produceReq(0, tpA, mkBatch(t, 1, 3000, nil, false))); !resp.None {
		t.Fatalf("acks=0 answered %+v", resp)
	}
	if h, _ := e.m.Get(tpA); h.View().LogEndOffset != 6 {
		t.Fatalf("acks=0 batch not appended: leo %d", h.View().LogEndOffset)
	}
}

// decodeProduce encodes a produce response at version and decodes it back,
// as a client of that version sees it (fields the version lacks keep
// kmsg's defaults: LogAppendTime and LogStartOffset -1).
func decodeProduce(t *testing.T, version int16, resp wire.Response) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	pr := resp.Msg.(*kmsg.ProduceResponse)
	pr.SetVersion(version)
	got := kmsg.NewPtrProduceResponse()
	got.Version = version
	if err := got.ReadFrom(pr.AppendTo(nil)); err != nil {
		t.Fatalf("v%d: decode: %v", version, err)
	}
	return got.Topics[0].Partitions[0]
}

// Every registered Produce version (v0-v11) appends a v2 batch and answers
// with the fields of its version: LogAppendTime from v2, LogStartOffset
// from v5, ErrorRecords and ErrorMessage (KIP-467) from v8.
func TestProduceEveryVersion(t *testing.T) {
	lat := storage.DefaultLogConfig()
	lat.LogAppendTime = true
	e := newDataEnv(t, lat, tpA)
	compacted := storage.DefaultLogConfig()
	compacted.Compact = true
	tpC := storage.TopicPartition{Topic: "compacted", Partition: 0}
	if errs := e.m.ApplyLeaderAndIsr([]partition.LeaderAndIsr{{TopicPartition: tpC, Leader: 0, ISR: []int32{0}, Config: compacted}}); len(errs) != 0 {
		t.Fatal(errs)
	}
	reg, ok := registry[0]
	lo, hi := reg.r.MinVersion, reg.r.MaxVersion
	if !ok || lo != 0 || hi != 11 {
		t.Fatalf("Produce registered v%d-v%d (%v), want v0-v11", lo, hi, ok)
	}
	before := time.Now().UnixMilli()
	for v := lo; v <= hi; v++ {
		p := decodeProduce(t, v, e.call(0, v, produceReq(1, tpA, mkBatch(t, 2, 1000, nil, false))))
		wantLST, latOK := int64(-1), p.LogAppendTime == -1
		if v >= 5 {
			wantLST = 0
		}
		if v >= 2 {
			latOK = p.LogAppendTime >= before
		}
		if p.ErrorCode != 0 || p.BaseOffset != 2*int64(v) || p.LogStartOffset != wantLST || !latOK {
			t.Errorf("v%d: %+v (want base offset %d, log start offset %d, LogAppendTime from v2)", v, p, 2*v, wantLST)
		}
		// No key on a compacted topic: INVALID_RECORD, with the record at
		// fault and a message from v8.
		p = decodeProduce(t, v, e.call(0, v, produceReq(1, tpC, mkBatch(t, 1, 1, nil, false))))
		detail := v >= 8
		if p.ErrorCode != kerr.InvalidRecord.Code || (len(p.ErrorRecords) == 1) != detail || (p.ErrorMessage != nil) != detail ||
			(detail && p.ErrorRecords[0].RelativeOffset != 0) {
			t.Errorf("v%d keyless on compacted: %+v", v, p)
		}
	}
	h, _ := e.m.Get(tpA)
	if leo := h.View().LogEndOffset; leo != 2*int64(hi+1) {
		t.Fatalf("log end offset %d, want %d", leo, 2*(hi+1))
	}
	// Every batch reads back, stamped with the broker's time.
	fr := decodeFetch(t, 12, e.call(1, 12, fetchReq(tpA, 0, 0, 0)))
	if hs := batches(t, fr.Topics[0].Partitions[0].RecordBatches); len(hs) != int(hi+1) {
		t.Fatalf("%d batches read back, want %d", len(hs), hi+1)
	}
}

func TestProduceIdempotence(t *testing.T) {
	e := newDataEnv(t, storage.DefaultLogConfig(), tpA)
	ip := kmsg.NewPtrInitProducerIDRequest()
	ipr := e.call(22, 4, ip).Msg.(*kmsg.InitProducerIDResponse)
	if ipr.ErrorCode != 0 || ipr.ProducerID < 0 || ipr.ProducerEpoch != 0 {
		t.Fatalf("InitProducerId %+v", ipr)
	}
	pr := func(seq int32) *record.Producer {
		return &record.Producer{ID: ipr.ProducerID, Epoch: ipr.ProducerEpoch, BaseSequence: seq}
	}
	if p := e.produce(9, -1, tpA, mkBatch(t, 2, 1, pr(0), false)); p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("seq 0: %+v", p)
	}
	if p := e.produce(9, -1, tpA, mkBatch(t, 2, 1, pr(2), false)); p.ErrorCode != 0 || p.BaseOffset != 2 {
		t.Fatalf("seq 2: %+v", p)
	}
	if p := e.produce(9, -1, tpA, mkBatch(t, 2, 1, pr(0), false)); p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("retry of seq 0: %+v, want its original offset 0", p)
	}
	if p := e.produce(9, -1, tpA, mkBatch(t, 1, 1, pr(9), false)); p.ErrorCode != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("gap: %+v", p)
	}
	if h, _ := e.m.Get(tpA); h.View().LogEndOffset != 4 {
		t.Fatalf("leo %d, want 4", h.View().LogEndOffset)
	}
	// Epoch bump (KIP-360) then an old-epoch write is fenced.
	bump := kmsg.NewPtrInitProducerIDRequest()
	bump.ProducerID, bump.ProducerEpoch = ipr.ProducerID, 0
	br := e.call(22, 3, bump).Msg.(*kmsg.InitProducerIDResponse)
	if br.ProducerID != ipr.ProducerID || br.ProducerEpoch != 1 {
		t.Fatalf("bump %+v", br)
	}
	if p := e.produce(9, -1, tpA, mkBatch(t, 1, 1, &record.Producer{ID: br.ProducerID, Epoch: 1, BaseSequence: 0}, false)); p.ErrorCode != 0 || p.BaseOffset != 4 {
		t.Fatalf("new epoch: %+v", p)
	}
	if p := e.produce(9, -1, tpA, mkBatch(t, 1, 1, pr(4), false)); p.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("old epoch: %+v", p)
	}
	// Distinct ids; transactional ids refused.
	ipr2 := e.call(22, 2, kmsg.NewPtrInitProducerIDRequest()).Msg.(*kmsg.InitProducerIDResponse)
	if ipr2.ProducerID == ipr.ProducerID {
		t.Fatalf("producer id %d handed out twice", ipr.ProducerID)
	}
	txn := kmsg.NewPtrInitProducerIDRequest()
	s := "txn-1"
	txn.TransactionalID = &s
	if r := e.call(22, 4, txn).Msg.(*kmsg.InitProducerIDResponse); r.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("transactional: %+v", r)
	}
}

func TestProduceRejections(t *testing.T) {
	cfg := storage.DefaultLogConfig()
	cfg.MaxMessageBytes = 400
	compacted := cfg
	compacted.Compact = true
	e := newDataEnv(t, cfg, tpA)
	tpC := storage.TopicPartition{Topic: "compacted", Partition: 0}
	if errs := e.m.ApplyLeaderAndIsr([]partition.LeaderAndIsr{{TopicPartition: tpC, Leader: 0, ISR: []int32{0}, Config: compacted}}); len(errs) != 0 {
		t.Fatal(errs)
	}
	good := mkBatch(t, 1, 1, nil, false)
	corrupt := append([]byte(nil), good...)
	corrupt[len(corrupt)-1] ^= 0xff
	big := mkBatch(t, 60, 1, nil, false)
	txn, err := record.BuildBatch(record.BatchOptions{Transactional: true, Producer: &record.Producer{ID: 1, BaseSequence: 0}}, []record.BatchRecord{{Value: []byte("x")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		tp      storage.TopicPartition
		acks    int16
		records []byte
		want    *kerr.Error
	}{
		{"unknown partition", storage.TopicPartition{Topic: "nope"}, 1, good, kerr.UnknownTopicOrPartition},
		{"bad acks", tpA, 2, good, kerr.InvalidRequiredAcks},
		{"crc", tpA, 1, corrupt, kerr.CorruptMessage},
		{"two batches", tpA, 1, append(append([]byte(nil), good...), good...), kerr.InvalidRecord},
		{"empty", tpA, 1, nil, kerr.InvalidRecord},
		{"too large", tpA, 1, big, kerr.MessageTooLarge},
		{"transactional", tpA, 1, txn, kerr.TransactionalIDAuthorizationFailed},
		{"no key on compacted", tpC, -1, good, kerr.InvalidRecord},
	} {
		p := e.produce(9, tc.acks, tc.tp, tc.records)
		if p.ErrorCode != tc.want.Code || p.BaseOffset != -1 {
			t.Errorf("%s: code %d offset %d, want %s", tc.name, p.ErrorCode, p.BaseOffset, tc.want.Message)
		}
		if tc.name == "no key on compacted" && (len(p.ErrorRecords) != 1 || p.ErrorRecords[0].RelativeOffset != 0 || p.ErrorMessage == nil) {
			t.Errorf("compacted: error records %+v message %v", p.ErrorRecords, p.ErrorMessage)
		}
	}
	if h, _ := e.m.Get(tpA); h.View().LogEndOffset != 0 {
		t.Fatalf("a rejected batch was appended: leo %d", h.View().LogEndOffset)
	}
	if p := e.produce(9, 1, tpC, mkBatch(t, 1, 1, nil, true)); p.ErrorCode != 0 {
		t.Fatalf("keyed batch on compacted topic: %+v", p)
	}
}

func TestFetchErrorsAndLimits(t *testing.T) {
	e := newDataEnv(t, storage.DefaultLogConfig(), tpA)
	for i := 0; i < 3; i++ {
		e.produce(9, 1, tpA, mkBatch(t, 10, 1, nil, false))
	}
	part := func(v int16, req *kmsg.FetchRequest) kmsg.FetchResponseTopicPartition {
		return decodeFetch(t, v, e.call(1, v, req)).Topics[0].Partitions[0]
	}
	if p := part(12, fetchReq(tpA, 31, 0, 0)); p.ErrorCode != kerr.OffsetOutOfRange.Code || p.HighWatermark != -1 {
		t.Fatalf("past end: %+v", p)
	}
	if p := part(12, fetchReq(storage.TopicPartition{Topic: "nope"}, 0, 0, 0)); p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown: %+v", p)
	}
	fenced := fetchReq(tpA, 0, 0, 0)
	fenced.Topics[0].Partitions[0].CurrentLeaderEpoch = 1
	if p := part(9, fenced); p.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("fenced epoch: %+v", p)
	}
	// KIP-227 as Kafka's FetchManager: epochs 0 and -1 are full fetches
	// (closing any session named: none exists), answered with SessionID 0
	// (no session created); any other epoch is an incremental fetch in a
	// session, and there is none.
	for _, c := range []struct {
		id, epoch int32
		want      *kerr.Error
	}{
		{0, -1, nil},  // sessionless full fetch
		{0, 0, nil},   // asks for a session: refused, SessionID 0
		{77, -1, nil}, // closes session 77 (unknown) and fetches in full
		{77, 0, nil},  // closes 77 and asks for a new session
		{77, 1, kerr.FetchSessionIDNotFound},
		{77, 9, kerr.FetchSessionIDNotFound},
		{0, 1, kerr.FetchSessionIDNotFound}, // Kafka looks id 0 up and finds no session
		{0, 5, kerr.FetchSessionIDNotFound},
	} {
		for _, v := range []int16{7, 12} {
			req := fetchReq(tpA, 0, 0, 0)
			req.SessionID, req.SessionEpoch = c.id, c.epoch
			fr := decodeFetch(t, v, e.call(1, v, req))
			if c.want != nil {
				if fr.ErrorCode != c.want.Code || len(fr.Topics) != 0 || fr.SessionID != 0 {
					t.Errorf("v%d session %d epoch %d: code %d, %d topics, session %d; want %s", v, c.id, c.epoch, fr.ErrorCode, len(fr.Topics), fr.SessionID, c.want.Message)
				}
				continue
			}
			if fr.ErrorCode != 0 || fr.SessionID != 0 || len(fr.Topics) != 1 || len(batches(t, fr.Topics[0].Partitions[0].RecordBatches)) != 3 {
				t.Errorf("v%d session %d epoch %d: want a full sessionless response, got code %d session %d %+v", v, c.id, c.epoch, fr.ErrorCode, fr.SessionID, fr.Topics)
			}
		}
	}
	// KIP-74: a 1-byte limit still returns the first whole batch.
	small := fetchReq(tpA, 0, 0, 0)
	small.MaxBytes = 1
	if hs := batches(t, part(12, small).RecordBatches); len(hs) != 1 || hs[0].BaseOffset != 0 {
		t.Fatalf("KIP-74: %+v", hs)
	}
	// A second partition may not exceed the request's MaxBytes.
	two := fetchReq(tpA, 0, 0, 0)
	two.MaxBytes = 1
	two.Topics[0].Partitions = append(two.Topics[0].Partitions, two.Topics[0].Partitions[0])
	two.Topics[0].Partitions[1].FetchOffset = 10
	fr := decodeFetch(t, 12, e.call(1, 12, two))
	if a, b := batches(t, fr.Topics[0].Partitions[0].RecordBatches), batches(t, fr.Topics[0].Partitions[1].RecordBatches); len(a) != 1 || len(b) != 0 {
		t.Fatalf("over MaxBytes: %d and %d batches, want 1 and 0", len(a), len(b))
	}
}

func TestFetchLongPollWokenByProduce(t *testing.T) {
	e := newDataEnv(t, storage.DefaultLogConfig(), tpA)
	e.produce(9, 1, tpA, mkBatch(t, 2, 1, nil, false))
	req := fetchReq(tpA, 2, 30_000, 1)
	req.SetVersion(12)
	rc := &wire.RequestContext{Ctx: context.Background(), Key: 1, Version: 12}
	reply := e.b.Handle(rc, req)
	if _, ok := reply.TryResolve(); ok {
		t.Fatal("fetch at the high watermark answered before any new data")
	}
	h, _ := e.m.Get(tpA)
	deadline := time.Now().Add(5 * time.Second)
	for h.Waiters() == 0 { // the long poll registers from its goroutine
		if time.Now().After(deadline) {
			t.Fatal("long poll never registered a waiter")
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	e.produce(9, 1, tpA, mkBatch(t, 3, 1, nil, false))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, ok := reply.Resolve(ctx)
	if !ok {
		t.Fatal("long poll not woken")
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("woken after %v", el)
	}
	hs := batches(t, decodeFetch(t, 12, resp).Topics[0].Partitions[0].RecordBatches)
	if len(hs) != 1 || hs[0].BaseOffset != 2 || hs[0].RecordCount != 3 {
		t.Fatalf("long poll returned %+v", hs)
	}
	// MaxWait expires with nothing new: an empty answer.
	fr := decodeFetch(t, 12, e.call(1, 12, fetchReq(tpA, 5, 20, 1)))
	if p := fr.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) != 0 || p.HighWatermark != 5 {
		t.Fatalf("expired poll: %+v", p)
	}
}

func TestListOffsets(t *testing.T) {
	e := newDataEnv(t, storage.DefaultLogConfig(), tpA)
	// Single-record batches, so batch and record timestamps agree.
	e.produce(9, 1, tpA, mkBatch(t, 1, 1000, nil, false)) // offset 0
	e.produce(9, 1, tpA, mkBatch(t, 1, 5000, nil, false)) // offset 1
	e.produce(9, 1, tpA, mkBatch(t, 1, 3000, nil, false)) // offset 2
	list := func(v int16, ts int64, cur int32) kmsg.ListOffsetsResponseTopicPartition {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = -1
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = tpA.Topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp, rp.CurrentLeaderEpoch = ts, cur
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		r := e.call(2, v, req).Msg.(*kmsg.ListOffsetsResponse)
		r.SetVersion(v)
		r.AppendTo(nil)
		return r.Topics[0].Partitions[0]
	}
	for _, tc := range []struct {
		v       int16
		ts      int64
		wantOff int64
		wantTs  int64
	}{
		{1, -2, 0, -1},
		{1, -1, 3, -1},
		{7, -3, 1, 5000},
		{5, 0, 0, 1000},
		{5, 4000, 1, 5000},
		{6, 9999, -1, -1},
	} {
		p := list(tc.v, tc.ts, -1)
		if p.ErrorCode != 0 || p.Offset != tc.wantOff || p.Timestamp != tc.wantTs {
			t.Errorf("v%d ts %d: offset %d ts %d err %d; want offset %d ts %d", tc.v, tc.ts, p.Offset, p.Timestamp, p.ErrorCode, tc.wantOff, tc.wantTs)
		}
		if tc.v >= 4 && p.LeaderEpoch != 2 {
			t.Errorf("v%d: leader epoch %d, want 2", tc.v, p.LeaderEpoch)
		}
	}
	if p := list(4, -1, 3); p.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Errorf("newer current epoch: %d", p.ErrorCode)
	}
	if p := list(4, -1, 1); p.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Errorf("older current epoch: %d", p.ErrorCode)
	}
}

func TestCrashedPartitionServesAgain(t *testing.T) {
	e := newDataEnv(t, storage.DefaultLogConfig(), tpA)
	e.produce(9, -1, tpA, mkBatch(t, 2, 1, nil, false))
	h, _ := e.m.Get(tpA)
	h.Crash("fault injection")
	// Queued behind the crash: served by the restarted actor.
	if p := e.produce(9, -1, tpA, mkBatch(t, 1, 1, nil, false)); p.ErrorCode != 0 || p.BaseOffset != 2 {
		t.Fatalf("produce after crash: %+v", p)
	}
	fr := decodeFetch(t, 12, e.call(1, 12, fetchReq(tpA, 0, 0, 0)))
	hs := batches(t, fr.Topics[0].Partitions[0].RecordBatches)
	if len(hs) != 2 || hs[1].BaseOffset != 2 || fr.Topics[0].Partitions[0].HighWatermark != 3 {
		t.Fatalf("fetch after crash: %+v", hs)
	}
}

func TestDeleteRecords(t *testing.T) {
	e := newDataEnv(t, storage.DefaultLogConfig(), tpA)
	for i := 0; i < 3; i++ {
		e.produce(9, 1, tpA, mkBatch(t, 2, 1, nil, false))
	}
	del := func(off int64) kmsg.DeleteRecordsResponseTopicPartition {
		req := kmsg.NewPtrDeleteRecordsRequest()
		req.TimeoutMillis = 5000
		rt := kmsg.NewDeleteRecordsRequestTopic()
		rt.Topic = tpA.Topic
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Offset = off
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return e.call(21, 2, req).Msg.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]
	}
	if p := del(3); p.ErrorCode != 0 || p.LowWatermark != 3 {
		t.Fatalf("delete before 3: %+v", p)
	}
	if p := del(7); p.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("beyond hw: %+v", p)
	}
	fr := decodeFetch(t, 12, e.call(1, 12, fetchReq(tpA, 0, 0, 0)))
	if p := fr.Topics[0].Partitions[0]; p.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("fetch below the new log start: %+v", p)
	}
	if p := del(-1); p.ErrorCode != 0 || p.LowWatermark != 6 {
		t.Fatalf("delete to hw: %+v", p)
	}
}

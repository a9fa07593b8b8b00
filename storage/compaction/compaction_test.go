package compaction

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"gregor/storage/record"
	"gregor/storage/segment"
)

func TestOffsetMapPutGet(t *testing.T) {
	m := NewOffsetMap(1<<12, 0.5) // 170 slots → 128, 64 keys
	if m.Slots() != 128 || m.MaxEntries() != 64 {
		t.Fatalf("slots %d max %d", m.Slots(), m.MaxEntries())
	}
	for i := 0; i < 64; i++ {
		if err := m.Put([]byte(fmt.Sprintf("key-%d", i)), int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	// Re-putting an existing key is fine when full and keeps the larger offset.
	if err := m.Put([]byte("key-3"), 100); err != nil {
		t.Fatal(err)
	}
	if err := m.Put([]byte("key-3"), 50); err != nil {
		t.Fatal(err)
	}
	if err := m.Put([]byte("new"), 101); !errors.Is(err, ErrMapFull) {
		t.Fatalf("put into full map: %v", err)
	}
	if off, ok := m.Get([]byte("key-3")); !ok || off != 100 {
		t.Fatalf("key-3 = %d %v, want 100", off, ok)
	}
	if off, ok := m.Get([]byte("key-63")); !ok || off != 63 {
		t.Fatalf("key-63 = %d %v", off, ok)
	}
	if _, ok := m.Get([]byte("absent")); ok {
		t.Fatal("absent key found")
	}
	if m.Len() != 64 || m.LatestOffset() != 100 {
		t.Fatalf("len %d latest %d", m.Len(), m.LatestOffset())
	}
	// The empty key is a key like any other.
	m.Clear()
	if m.Len() != 0 || m.LatestOffset() != -1 {
		t.Fatal("clear")
	}
	if err := m.Put([]byte{}, 0); err != nil {
		t.Fatal(err)
	}
	if off, ok := m.Get(nil); !ok || off != 0 {
		t.Fatalf("empty key = %d %v", off, ok)
	}
}

func TestSizeForBounded(t *testing.T) {
	if got := SizeFor(10, 0.9, 128<<20); got != 16*slotBytes {
		t.Fatalf("10 keys: %d bytes", got)
	}
	if got := SizeFor(1000, 0.9, 128<<20); got != 2048*slotBytes {
		t.Fatalf("1000 keys: %d bytes, want %d", got, 2048*slotBytes)
	}
	if got := SizeFor(1<<40, 0.9, 1<<20); got > 1<<20 {
		t.Fatalf("budget exceeded: %d", got)
	}
}

type kv struct {
	key, value []byte
}

func build(t *testing.T, base int64, ts int64, pid int64, codec record.Codec, recs ...kv) ([]byte, record.Header) {
	t.Helper()
	opts := record.BatchOptions{BaseOffset: base, BaseTimestamp: ts, PartitionLeaderEpoch: 3, Codec: codec}
	if pid >= 0 {
		opts.Producer = &record.Producer{ID: pid, Epoch: 2, BaseSequence: 10}
	}
	brs := make([]record.BatchRecord, len(recs))
	for i, r := range recs {
		brs[i] = record.BatchRecord{Key: r.key, Value: r.value, TimestampDelta: int64(i)}
	}
	b, err := record.BuildBatch(opts, brs)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := record.ValidateIntegrity(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, h
}

type got struct {
	off   int64
	ts    int64
	key   string
	value []byte
}

func decode(t *testing.T, b []byte) (record.Header, []got) {
	t.Helper()
	h, batch, err := record.ValidateIntegrity(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(batch) != len(b) {
		t.Fatalf("trailing bytes: %d of %d", len(batch), len(b))
	}
	var out []got
	if err := record.Records(h, batch, 1<<20, func(r *record.Record) error {
		g := got{off: r.Offset(&h), ts: r.Timestamp(&h), key: string(r.Key)}
		if r.Value != nil {
			g.value = append([]byte{}, r.Value...)
		}
		out = append(out, g)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return h, out
}

func TestFilterBatchDropsSupersededKeepsOffsets(t *testing.T) {
	for _, codec := range []record.Codec{record.CodecNone, record.CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			m := NewOffsetMap(1<<16, 0.9)
			_ = m.Put([]byte("a"), 102) // a's latest is later in the log
			_ = m.Put([]byte("b"), 101)
			batch, h := build(t, 100, 5000, 9, codec, kv{[]byte("a"), []byte("a1")}, kv{[]byte("b"), []byte("b1")}, kv{[]byte("a"), []byte("a2")}, kv{[]byte("c"), []byte("c1")})
			out, st, err := FilterBatch(nil, batch, h, FilterOptions{Map: m, NowMs: 1e6, DeleteRetentionMs: 100, MaxUncompressed: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if !st.Rewritten || st.RecordsRead != 4 || st.RecordsKept != 3 {
				t.Fatalf("stats %+v", st)
			}
			nh, recs := decode(t, out)
			want := []got{{101, 5001, "b", []byte("b1")}, {102, 5002, "a", []byte("a2")}, {103, 5003, "c", []byte("c1")}}
			if fmt.Sprint(recs) != fmt.Sprint(want) {
				t.Fatalf("records %v, want %v", recs, want)
			}
			if nh.BaseOffset != 100 || nh.LastOffsetDelta != 3 || nh.ProducerID != 9 || nh.ProducerEpoch != 2 || nh.BaseSequence != 10 ||
				nh.PartitionLeaderEpoch != 3 || nh.Codec() != codec || nh.MaxTimestamp != 5003 || nh.RecordCount != 3 {
				t.Fatalf("header %+v", nh)
			}
			if _, ok := nh.DeleteHorizonMs(); ok {
				t.Fatal("horizon set without tombstones")
			}
		})
	}
}

func TestFilterBatchUnchangedIsCopied(t *testing.T) {
	m := NewOffsetMap(1<<16, 0.9)
	_ = m.Put([]byte("a"), 0)
	batch, h := build(t, 0, 1, -1, record.CodecNone, kv{[]byte("a"), []byte("x")}, kv{[]byte("z"), []byte("y")})
	out, st, err := FilterBatch([]byte("prefix"), batch, h, FilterOptions{Map: m, MaxUncompressed: 1 << 20})
	if err != nil || st.Rewritten || !bytes.Equal(out, append([]byte("prefix"), batch...)) {
		t.Fatalf("err %v stats %+v", err, st)
	}
}

func TestFilterBatchTombstoneHorizon(t *testing.T) {
	m := NewOffsetMap(1<<16, 0.9)
	_ = m.Put([]byte("gone"), 11)
	batch, h := build(t, 10, 7000, -1, record.CodecNone, kv{[]byte("live"), []byte("v")}, kv{[]byte("gone"), nil})
	fo := FilterOptions{Map: m, NowMs: 50_000, DeleteRetentionMs: 1000, MaxUncompressed: 1 << 20}
	out, st, err := FilterBatch(nil, batch, h, fo)
	if err != nil || !st.Rewritten || st.RecordsKept != 2 {
		t.Fatalf("first clean: err %v stats %+v", err, st)
	}
	nh, recs := decode(t, out)
	if hz, ok := nh.DeleteHorizonMs(); !ok || hz != 51_000 {
		t.Fatalf("horizon %d %v, want 51000", hz, ok)
	}
	if recs[0].ts != 7000 || recs[1].ts != 7001 || recs[1].value != nil || recs[1].off != 11 {
		t.Fatalf("records after horizon stamp %v", recs)
	}
	// Before the horizon the tombstone stays (and the batch is untouched).
	fo.NowMs = 50_999
	again, st, err := FilterBatch(nil, out, nh, fo)
	if err != nil || st.Rewritten || !bytes.Equal(again, out) {
		t.Fatalf("before horizon: err %v stats %+v", err, st)
	}
	// From it on the tombstone goes (Kafka retains it while now <
	// horizon); the live record keeps offset and time.
	fo.NowMs = 51_000
	last, st, err := FilterBatch(nil, out, nh, fo)
	if err != nil || st.TombstonesDropped != 1 || st.RecordsKept != 1 {
		t.Fatalf("after horizon: err %v stats %+v", err, st)
	}
	lh, recs := decode(t, last)
	if len(recs) != 1 || recs[0].off != 10 || recs[0].ts != 7000 || lh.LastOffsetDelta != 1 {
		t.Fatalf("after horizon: %+v %v", lh, recs)
	}
	if _, ok := lh.DeleteHorizonMs(); ok {
		t.Fatal("horizon kept on a batch without tombstones")
	}
}

func TestFilterBatchEmptyBatchForProducerState(t *testing.T) {
	m := NewOffsetMap(1<<16, 0.9)
	_ = m.Put([]byte("a"), 500)
	batch, h := build(t, 40, 100, 77, record.CodecNone, kv{[]byte("a"), []byte("1")}, kv{[]byte("a"), []byte("2")}, kv{nil, []byte("keyless")})
	fo := FilterOptions{Map: m, MaxUncompressed: 1 << 20}
	out, st, err := FilterBatch(nil, batch, h, fo)
	if err != nil || !st.Dropped || len(out) != 0 {
		t.Fatalf("no RetainEmpty: err %v stats %+v len %d", err, st, len(out))
	}
	fo.RetainEmpty = func(hh *record.Header) bool { return hh.ProducerID == 77 }
	out, st, err = FilterBatch(nil, batch, h, fo)
	if err != nil || st.Dropped || len(out) == 0 {
		t.Fatalf("RetainEmpty: err %v stats %+v", err, st)
	}
	nh, recs := decode(t, out)
	if len(recs) != 0 || nh.BaseOffset != 40 || nh.LastOffsetDelta != 2 || nh.ProducerID != 77 || nh.BaseSequence != 10 ||
		nh.LastSequence() != 12 || nh.MaxTimestamp != h.MaxTimestamp {
		t.Fatalf("empty batch %+v (last seq %d)", nh, nh.LastSequence())
	}
}

func TestFilterBatchControlKept(t *testing.T) {
	b, err := record.BuildBatch(record.BatchOptions{BaseOffset: 5, Control: true, Transactional: true, Producer: &record.Producer{ID: 1}},
		[]record.BatchRecord{record.EndTxnMarker(true, 0)})
	if err != nil {
		t.Fatal(err)
	}
	h, _, _ := record.ValidateIntegrity(b)
	out, _, err := FilterBatch(nil, b, h, FilterOptions{Map: NewOffsetMap(1<<12, 0.9)})
	if err != nil || !bytes.Equal(out, b) {
		t.Fatalf("control batch changed: %v", err)
	}
}

// txnHeader is the header of a data (or control) batch at [base, last]
// of producer pid.
func txnHeader(base, last, pid int64, transactional, control bool) record.Header {
	h := record.Header{BaseOffset: base, LastOffsetDelta: int32(last - base), ProducerID: pid, RecordCount: 1}
	if transactional {
		h.Attributes |= record.AttrTransactional
	}
	if control {
		h.Attributes |= record.AttrControl
	}
	return h
}

func TestTxnTrackerFollowsAbortedAndCommitted(t *testing.T) {
	// Producer 1 aborts [0..3] (marker 3) and producer 2 [5..8] (marker 8);
	// producer 2's entry is listed twice, as two segments' collections give it.
	e1 := segment.AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: 3, LastStableOffset: 1}
	e2 := segment.AbortedTxn{ProducerID: 2, FirstOffset: 5, LastOffset: 8, LastStableOffset: 9}
	tr := NewTxnTracker([]segment.AbortedTxn{e2, e1, e2})
	abort, commit := record.EndTxn{Type: record.ControlAbort}, record.EndTxn{Type: record.ControlCommit}
	steps := []struct {
		h       record.Header
		m       *record.EndTxn
		aborted bool // data: aborted; control: discardable
	}{
		{h: txnHeader(0, 0, 1, true, false), aborted: true},
		{h: txnHeader(1, 1, 4, true, false)}, // producer 4's committed transaction
		{h: txnHeader(2, 2, -1, false, false)},
		{h: txnHeader(3, 3, 1, true, true), m: &abort},                 // producer 1's data was read: kept
		{h: txnHeader(4, 4, 4, true, true), m: &commit},                // producer 4's data was read: kept
		{h: txnHeader(5, 5, 4, true, true), m: &commit, aborted: true}, // a second commit with nothing read: discardable
		{h: txnHeader(6, 6, 1, true, false)},                           // producer 1's next transaction is not aborted
		{h: txnHeader(7, 7, 1, true, true), m: &commit},
		{h: txnHeader(8, 8, 2, true, true), m: &abort, aborted: true}, // nothing of producer 2 read: discardable
	}
	for i, s := range steps {
		var got bool
		if s.m != nil {
			got = tr.OnControlBatch(&s.h, *s.m, true)
		} else {
			got = tr.OnDataBatch(&s.h)
		}
		if got != s.aborted {
			t.Fatalf("step %d (offset %d): %v, want %v", i, s.h.BaseOffset, got, s.aborted)
		}
	}
	if got := tr.TakeRetained(); len(got) != 1 || got[0] != e1 {
		t.Fatalf("retained %+v, want only %+v", got, e1)
	}
	if got := tr.TakeRetained(); len(got) != 0 {
		t.Fatalf("retained twice: %+v", got)
	}
	// An emptied control batch is always discardable.
	h := txnHeader(9, 9, 1, true, true)
	if !tr.OnControlBatch(&h, record.EndTxn{}, false) {
		t.Fatal("emptied control batch kept")
	}
}

func TestFilterBatchMarkerHorizonThenRemoval(t *testing.T) {
	b, err := record.BuildBatch(record.BatchOptions{BaseOffset: 5, BaseTimestamp: 1234, Control: true, Transactional: true, PartitionLeaderEpoch: 4,
		Producer: &record.Producer{ID: 9, Epoch: 3, BaseSequence: -1}}, []record.BatchRecord{record.EndTxnMarker(false, 7)})
	if err != nil {
		t.Fatal(err)
	}
	h, _, _ := record.ValidateIntegrity(b)
	fo := func(now int64, retainEmpty bool) FilterOptions {
		o := FilterOptions{Map: NewOffsetMap(1<<12, 0.9), NowMs: now, DeleteRetentionMs: 1000, MaxUncompressed: 1 << 20,
			Txns: NewTxnTracker(nil)}
		if retainEmpty {
			o.RetainEmpty = func(*record.Header) bool { return true }
		}
		return o
	}
	// No data of its transaction read: stamped with the horizon, kept whole.
	out, st, err := FilterBatch(nil, b, h, fo(50_000, false))
	if err != nil || !st.Rewritten || st.MarkerDropped {
		t.Fatalf("first pass: err %v stats %+v", err, st)
	}
	nh, _, err := record.ValidateIntegrity(out)
	if err != nil {
		t.Fatal(err)
	}
	if hz, ok := nh.DeleteHorizonMs(); !ok || hz != 51_000 || !nh.IsControl() || !nh.IsTransactional() || nh.ProducerID != 9 ||
		nh.ProducerEpoch != 3 || nh.BaseSequence != -1 || nh.BaseOffset != 5 || nh.PartitionLeaderEpoch != 4 || nh.MaxTimestamp != 1234 {
		t.Fatalf("stamped marker %+v (horizon %d %v)", nh, hz, ok)
	}
	if m, ok, err := record.ReadEndTxn(nh, out, 1<<20); err != nil || !ok || m.Commit() || m.CoordinatorEpoch != 7 {
		t.Fatalf("stamped marker record %+v %v %v", m, ok, err)
	}
	// Before the horizon: unchanged.
	if again, st, err := FilterBatch(nil, out, nh, fo(50_999, false)); err != nil || st.Rewritten || !bytes.Equal(again, out) {
		t.Fatalf("before horizon: err %v stats %+v", err, st)
	}
	// At it: gone, or emptied for a producer's last batch.
	if gone, st, err := FilterBatch(nil, out, nh, fo(51_000, false)); err != nil || !st.Dropped || !st.MarkerDropped || len(gone) != 0 {
		t.Fatalf("at horizon: err %v stats %+v", err, st)
	}
	empty, st, err := FilterBatch(nil, out, nh, fo(51_000, true))
	if err != nil || !st.MarkerDropped || st.Dropped {
		t.Fatalf("at horizon, last of producer: err %v stats %+v", err, st)
	}
	eh, _, err := record.ValidateIntegrity(empty)
	if err != nil || eh.RecordCount != 0 || !eh.IsControl() || eh.ProducerID != 9 || eh.ProducerEpoch != 3 || eh.BaseOffset != 5 {
		t.Fatalf("emptied marker %+v %v", eh, err)
	}
	// A marker whose (aborted) transaction still has data is copied unchanged.
	tr := NewTxnTracker([]segment.AbortedTxn{{ProducerID: 9, FirstOffset: 1, LastOffset: 5, LastStableOffset: 6}})
	dh := txnHeader(1, 1, 9, true, false)
	tr.OnDataBatch(&dh)
	o := fo(50_000, false)
	o.Txns = tr
	if same, st, err := FilterBatch(nil, b, h, o); err != nil || st.Rewritten || !bytes.Equal(same, b) {
		t.Fatalf("marker with data: err %v stats %+v", err, st)
	}
}

func TestFilterBatchAbortedDataGoes(t *testing.T) {
	m := NewOffsetMap(1<<12, 0.9)
	batch, h := build(t, 20, 100, 9, record.CodecNone, kv{[]byte("a"), []byte("1")}, kv{[]byte("b"), []byte("2")})
	binaryAttrs := h.Attributes | record.AttrTransactional
	batch[record.OffAttributes], batch[record.OffAttributes+1] = byte(binaryAttrs>>8), byte(binaryAttrs)
	h.Attributes = binaryAttrs
	tr := NewTxnTracker([]segment.AbortedTxn{{ProducerID: 9, FirstOffset: 20, LastOffset: 30, LastStableOffset: 31}})
	out, st, err := FilterBatch(nil, batch, h, FilterOptions{Map: m, MaxUncompressed: 1 << 20, Txns: tr})
	if err != nil || !st.Dropped || st.AbortedDropped != 2 || st.RecordsKept != 0 || len(out) != 0 {
		t.Fatalf("aborted batch: err %v stats %+v", err, st)
	}
}

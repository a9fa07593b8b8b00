package compaction

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"gregor/storage/record"
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
	fo.NowMs = 51_000
	again, st, err := FilterBatch(nil, out, nh, fo)
	if err != nil || st.Rewritten || !bytes.Equal(again, out) {
		t.Fatalf("at horizon: err %v stats %+v", err, st)
	}
	// After it the tombstone goes; the live record keeps offset and time.
	fo.NowMs = 51_001
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

package storage

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"gregor/storage/record"
)

// txnWriter appends to a log as the partition actor does for
// transactions: transactional data batches, markers, and the .txnindex
// entry of every aborted transaction (first offset, marker offset, the
// last stable offset once it is written).
type txnWriter struct {
	t    testing.TB
	l    *Log
	seq  map[int64]int32
	open map[int64]int64 // producer → first offset of its open transaction
}

func newTxnWriter(t testing.TB, l *Log) *txnWriter {
	return &txnWriter{t: t, l: l, seq: map[int64]int32{}, open: map[int64]int64{}}
}

// data appends one batch of recs (values as given), transactional from
// producer pid, or plain for pid -1, and returns its base offset.
func (w *txnWriter) data(pid int64, recs ...kvRec) int64 {
	w.t.Helper()
	opts := record.BatchOptions{BaseTimestamp: time.Now().UnixMilli(), PartitionLeaderEpoch: -1}
	if pid >= 0 {
		opts.Transactional = true
		opts.Producer = &record.Producer{ID: pid, Epoch: 0, BaseSequence: w.seq[pid]}
		w.seq[pid] += int32(len(recs))
	}
	brs := make([]record.BatchRecord, len(recs))
	for i, r := range recs {
		brs[i] = record.BatchRecord{Key: []byte(r.key), Value: r.value, TimestampDelta: int64(i)}
	}
	b, err := record.BuildBatch(opts, brs)
	if err != nil {
		w.t.Fatal(err)
	}
	info, err := w.l.Append(b, AppendOptions{LeaderEpoch: 0, LogAppendTime: -1, PreValidated: true})
	if err != nil {
		w.t.Fatal(err)
	}
	if _, ok := w.open[pid]; pid >= 0 && !ok {
		w.open[pid] = info.FirstOffset
	}
	return info.FirstOffset
}

// end writes producer pid's COMMIT or ABORT marker and, for an abort, its
// .txnindex entry; it returns the marker's offset.
func (w *txnWriter) end(pid int64, commit bool) int64 {
	w.t.Helper()
	first, ok := w.open[pid]
	if !ok {
		w.t.Fatalf("no open transaction for producer %d", pid)
	}
	delete(w.open, pid)
	off := appendMarker(w.t, w.l, pid, commit)
	if !commit {
		lso := off + 1
		for _, f := range w.open {
			lso = min(lso, f)
		}
		if err := w.l.AppendAbortedTxn(AbortedTxn{ProducerID: pid, FirstOffset: first, LastOffset: off, LastStableOffset: lso}); err != nil {
			w.t.Fatal(err)
		}
	}
	return off
}

// txnCleanConfig gives every batch its own segment (each one cleanable
// once another follows; each its own cleaning group, so transactions span
// segments and groups).
func txnCleanConfig() LogConfig {
	c := compactConfig()
	c.SegmentBytes = 1
	c.DeleteRetentionMs = 60_000
	return c
}

// logShape is what a log holds after cleaning: the offsets of its data
// records, the base offsets of its markers (control batches with their
// record) and of its empty batches, and its aborted transaction index
// as read_committed fetches see it.
type logShape struct {
	records, markers, empty []int64
	aborted                 []AbortedTxn
}

func (s logShape) String() string {
	return fmt.Sprintf("records %v markers %v empty %v aborted %+v", s.records, s.markers, s.empty, s.aborted)
}

func shapeOf(t *testing.T, l *Log) logShape {
	t.Helper()
	recs, hs := readLog(t, l)
	var s logShape
	for _, h := range hs {
		switch {
		case h.RecordCount == 0:
			s.empty = append(s.empty, h.BaseOffset)
		case h.IsControl():
			s.markers = append(s.markers, h.BaseOffset)
		}
	}
	for _, r := range recs {
		if !slices.Contains(s.markers, r.off) {
			s.records = append(s.records, r.off)
		}
	}
	s.aborted = l.CollectAbortedTxns(l.LogStartOffset(), l.LogEndOffset())
	return s
}

func checkShape(t *testing.T, what string, l *Log, want logShape) {
	t.Helper()
	if got := shapeOf(t, l); got.String() != want.String() {
		t.Fatalf("%s:\n got %v\nwant %v", what, got, want)
	}
}

// cleanAt runs one pass over the whole log (all of it dirty, so a pass
// runs even without new writes: delete horizons are reached by passes
// that new writes trigger in a running broker) at now.
func cleanAt(t *testing.T, l *Log, now time.Time) {
	t.Helper()
	l.SetHighWatermark(l.LogEndOffset())
	if _, err := l.Clean(0, now, DefaultCleanerConfig()); err != nil {
		t.Fatal(err)
	}
}

// markerHorizon returns the delete horizon of the control batch at off.
func markerHorizon(t *testing.T, l *Log, off int64) (int64, bool) {
	t.Helper()
	_, hs := readLog(t, l)
	for _, h := range hs {
		if h.BaseOffset == off {
			return h.DeleteHorizonMs()
		}
	}
	t.Fatalf("no batch at %d", off)
	return 0, false
}

// TestCleanAbortedTransactionThenItsMarker: the first pass removes the
// aborted records and keeps the ABORT marker and its index entry (its
// batches were still there); the second finds no data of it, drops the
// index entry and stamps the marker's delete horizon; a pass at the
// horizon removes the marker. The committed transaction of the same
// producer keeps its record and marker throughout.
func TestCleanAbortedTransactionThenItsMarker(t *testing.T) {
	cfg := txnCleanConfig()
	l := newTestLog(t, cfg)
	w := newTxnWriter(t, l)
	w.data(1, kvRec{"k1", []byte("a")})                           // 0
	w.data(1, kvRec{"k2", []byte("a")}, kvRec{"k3", []byte("a")}) // 1, 2
	abort := w.end(1, false)                                      // 3
	w.data(1, kvRec{"k3", []byte("c")})                           // 4
	w.end(1, true)                                                // 5
	w.data(-1, kvRec{"f", []byte("x")})                           // 6, active segment
	checkShape(t, "before cleaning", l, logShape{records: []int64{0, 1, 2, 4, 6}, markers: []int64{3, 5},
		aborted: []AbortedTxn{{ProducerID: 1, FirstOffset: 0, LastOffset: 3, LastStableOffset: 4}}})

	now := time.Now()
	cleanAt(t, l, now)
	checkShape(t, "first pass", l, logShape{records: []int64{4, 6}, markers: []int64{3, 5},
		aborted: []AbortedTxn{{ProducerID: 1, FirstOffset: 0, LastOffset: 3, LastStableOffset: 4}}})
	if _, ok := markerHorizon(t, l, abort); ok {
		t.Fatal("the abort marker got a delete horizon while its transaction still had data")
	}

	cleanAt(t, l, now)
	checkShape(t, "second pass", l, logShape{records: []int64{4, 6}, markers: []int64{3, 5}})
	if hz, ok := markerHorizon(t, l, abort); !ok || hz != now.UnixMilli()+cfg.DeleteRetentionMs {
		t.Fatalf("abort marker horizon %d %v, want %d", hz, ok, now.UnixMilli()+cfg.DeleteRetentionMs)
	}
	// Just before the horizon the marker stays.
	cleanAt(t, l, now.Add(time.Duration(cfg.DeleteRetentionMs-1)*time.Millisecond))
	checkShape(t, "before the horizon", l, logShape{records: []int64{4, 6}, markers: []int64{3, 5}})

	st, err := l.Clean(0, now.Add(time.Duration(cfg.DeleteRetentionMs)*time.Millisecond), DefaultCleanerConfig())
	if err != nil {
		t.Fatal(err)
	}
	if st.MarkersDropped != 1 {
		t.Fatalf("stats %+v, want one marker dropped", st)
	}
	checkShape(t, "at the horizon", l, logShape{records: []int64{4, 6}, markers: []int64{5}})

	// The cleaned files hold the same log.
	dir := l.Dir()
	want := shapeOf(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openTestLog(t, dir, cfg, OpenOptions{})
	defer l2.Close()
	checkShape(t, "after reopen", l2, want)
}

// TestCleanAbortedWriteNeverSupersedesCommitted: the offset map ignores
// aborted records, so an aborted write of a key leaves its committed
// value in place; a committed transactional write still supersedes.
func TestCleanAbortedWriteNeverSupersedesCommitted(t *testing.T) {
	cfg := txnCleanConfig()
	l := newTestLog(t, cfg)
	w := newTxnWriter(t, l)
	w.data(-1, kvRec{"k", []byte("committed")})                                 // 0
	w.data(1, kvRec{"k", []byte("aborted-1")}, kvRec{"j", []byte("aborted-1")}) // 1, 2
	w.data(2, kvRec{"j", []byte("committed")})                                  // 3
	a1 := w.end(1, false)                                                       // 4
	w.end(2, true)                                                              // 5
	w.data(1, kvRec{"k", []byte("aborted-2")})                                  // 6
	a2 := w.end(1, false)                                                       // 7
	w.data(-1, kvRec{"f", []byte("x")})                                         // 8, active
	e1 := AbortedTxn{ProducerID: 1, FirstOffset: 1, LastOffset: a1, LastStableOffset: 3}
	e2 := AbortedTxn{ProducerID: 1, FirstOffset: 6, LastOffset: a2, LastStableOffset: a2 + 1}
	checkShape(t, "before cleaning", l, logShape{records: []int64{0, 1, 2, 3, 6, 8}, markers: []int64{4, 5, 7},
		aborted: []AbortedTxn{e1, e2}})

	now := time.Now()
	cleanAt(t, l, now)
	// Batch 1 goes whole; batch 6, producer 1's last data batch, stays as
	// an empty batch (its sequence survives), so its abort marker and
	// index entry stay too.
	checkShape(t, "first pass", l, logShape{records: []int64{0, 3, 8}, markers: []int64{4, 5, 7}, empty: []int64{6},
		aborted: []AbortedTxn{e1, e2}})
	values := map[string]string{}
	recs, _ := readLog(t, l)
	for _, r := range recs {
		if r.key != "" && r.key[0] != 0 { // marker keys start with version 0
			values[r.key] = r.value
		}
	}
	if values["k"] != "committed" || values["j"] != "committed" {
		t.Fatalf("values after cleaning %v", values)
	}

	cleanAt(t, l, now)
	checkShape(t, "second pass", l, logShape{records: []int64{0, 3, 8}, markers: []int64{4, 5, 7}, empty: []int64{6},
		aborted: []AbortedTxn{e2}})
	cleanAt(t, l, now.Add(time.Duration(cfg.DeleteRetentionMs)*time.Millisecond))
	checkShape(t, "after the horizon", l, logShape{records: []int64{0, 3, 8}, markers: []int64{5, 7}, empty: []int64{6},
		aborted: []AbortedTxn{e2}})
}

// TestCleanCommitMarkerKeptWhileItsDataIs: a COMMIT marker stays while a
// batch of its transaction is in the log, even one whose records were all
// superseded in the same pass; once none is left it goes after its
// delete horizon.
func TestCleanCommitMarkerKeptWhileItsDataIs(t *testing.T) {
	cfg := txnCleanConfig()
	l := newTestLog(t, cfg)
	w := newTxnWriter(t, l)
	w.data(1, kvRec{"k1", []byte("a")})                           // 0
	w.data(1, kvRec{"k2", []byte("a")}, kvRec{"k3", []byte("a")}) // 1, 2
	c1 := w.end(1, true)                                          // 3
	w.data(1, kvRec{"k2", []byte("b")})                           // 4
	w.end(1, true)                                                // 5
	w.data(-1, kvRec{"f0", []byte("x")})                          // 6
	now := time.Now()
	cleanAt(t, l, now)
	checkShape(t, "first pass", l, logShape{records: []int64{0, 2, 4, 6}, markers: []int64{3, 5}})

	w.data(1, kvRec{"k1", []byte("c")}, kvRec{"k3", []byte("c")}) // 7, 8
	w.end(1, true)                                                // 9
	w.data(-1, kvRec{"f1", []byte("x")})                          // 10, active
	cleanAt(t, l, now)
	// Batches 0 and 1 went in this pass: the marker at 3 was read after
	// them, so it stays, without a horizon.
	checkShape(t, "second pass", l, logShape{records: []int64{4, 6, 7, 8, 10}, markers: []int64{3, 5, 9}})
	if _, ok := markerHorizon(t, l, c1); ok {
		t.Fatal("commit marker stamped in the pass that removed its data")
	}
	cleanAt(t, l, now)
	if hz, ok := markerHorizon(t, l, c1); !ok || hz != now.UnixMilli()+cfg.DeleteRetentionMs {
		t.Fatalf("commit marker horizon %d %v", hz, ok)
	}
	cleanAt(t, l, now.Add(time.Duration(cfg.DeleteRetentionMs)*time.Millisecond))
	checkShape(t, "after the horizon", l, logShape{records: []int64{4, 6, 7, 8, 10}, markers: []int64{5, 9}})
}

// TestCleanAbortMarkerKeptForAnEmptyBatch: an aborted transaction's last
// batch is the producer's last, kept empty for its sequence; its marker
// and index entry stay as long as it does. Once the producer writes again
// the empty batch goes, then the marker after its horizon, and the index
// entry with the data.
func TestCleanAbortMarkerKeptForAnEmptyBatch(t *testing.T) {
	cfg := txnCleanConfig()
	l := newTestLog(t, cfg)
	w := newTxnWriter(t, l)
	w.data(1, kvRec{"k2", []byte("a")}, kvRec{"k3", []byte("a")}) // 0, 1
	abort := w.end(1, false)                                      // 2
	w.data(-1, kvRec{"f0", []byte("x")})                          // 3
	entry := AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: abort, LastStableOffset: abort + 1}
	now := time.Now()
	later := now.Add(time.Duration(cfg.DeleteRetentionMs) * time.Millisecond)
	cleanAt(t, l, now)
	cleanAt(t, l, now)
	cleanAt(t, l, later)
	checkShape(t, "three passes", l, logShape{records: []int64{3}, markers: []int64{2}, empty: []int64{0}, aborted: []AbortedTxn{entry}})
	_, hs := readLog(t, l)
	if h := hs[0]; !h.IsTransactional() || h.ProducerID != 1 || h.BaseSequence != 0 || h.LastSequence() != 1 || h.LastOffset() != 1 {
		t.Fatalf("empty batch %+v", h)
	}

	w.data(1, kvRec{"k1", []byte("c")}) // 4
	w.end(1, true)                      // 5
	w.data(-1, kvRec{"f1", []byte("x")})
	cleanAt(t, l, later)
	// The empty batch was read in this pass: the marker and entry stay once more.
	checkShape(t, "producer wrote again", l, logShape{records: []int64{3, 4, 6}, markers: []int64{2, 5}, aborted: []AbortedTxn{entry}})
	cleanAt(t, l, later)
	checkShape(t, "no data left", l, logShape{records: []int64{3, 4, 6}, markers: []int64{2, 5}})
	cleanAt(t, l, later.Add(time.Duration(cfg.DeleteRetentionMs)*time.Millisecond))
	checkShape(t, "after the horizon", l, logShape{records: []int64{3, 4, 6}, markers: []int64{5}})
}

// TestCleanAbortedDataBelowAnUncleanedMarker: a pass whose end falls
// between an aborted transaction's data and its marker removes the data
// (known from the entry in the marker's segment) and leaves the marker's
// segment, entry included, as it was.
func TestCleanAbortedDataBelowAnUncleanedMarker(t *testing.T) {
	cfg := txnCleanConfig()
	l := newTestLog(t, cfg)
	w := newTxnWriter(t, l)
	w.data(1, kvRec{"k", []byte("a")})  // 0
	w.data(1, kvRec{"k", []byte("b")})  // 1
	w.data(-1, kvRec{"p", []byte("x")}) // 2
	abort := w.end(1, false)            // 3
	w.data(-1, kvRec{"f", []byte("x")}) // 4
	l.SetHighWatermark(abort)           // the marker's segment is not cleanable
	st, err := l.Clean(0, time.Now(), DefaultCleanerConfig())
	if err != nil {
		t.Fatal(err)
	}
	if st.Range.End != abort || st.AbortedDropped != 2 {
		t.Fatalf("stats %+v", st)
	}
	// Batch 1 is producer 1's last data batch: kept empty.
	checkShape(t, "cleaned below the marker", l, logShape{records: []int64{2, 4}, markers: []int64{3}, empty: []int64{1},
		aborted: []AbortedTxn{{ProducerID: 1, FirstOffset: 0, LastOffset: abort, LastStableOffset: abort + 1}}})
}

// TestLogManagerCleanerWaitsForTheLastStableOffset: a log found on disk
// at start is not cleaned, even below its checkpointed high watermark,
// until its last stable offset is told (the partition actor publishes it
// once its producer state is rebuilt): undecided transactions may lie
// anywhere in it until then.
func TestLogManagerCleanerWaitsForTheLastStableOffset(t *testing.T) {
	dir := t.TempDir()
	cfg := LogManagerConfig{Dirs: []string{dir}, Defaults: testConfig()}
	m, err := NewLogManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tp := TopicPartition{Topic: "c", Partition: 0}
	l, err := m.GetOrCreate(tp, compactConfig())
	if err != nil {
		t.Fatal(err)
	}
	fillKeys(t, l, 20, 5, time.Now().UnixMilli())
	leo := l.LogEndOffset()
	if err := m.CheckpointHighWatermarks(map[TopicPartition]int64{tp: leo}); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	m, err = NewLogManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	l, ok := m.Get(tp)
	if !ok {
		t.Fatal("log not loaded")
	}
	l.SetConfig(compactConfig())
	if sts, err := m.CleanerPass(time.Now(), DefaultCleanerConfig()); err != nil || len(sts) != 0 {
		t.Fatalf("pass before the last stable offset is known: %v %+v", err, sts)
	}
	l.SetLastStableOffset(leo)
	if sts, err := m.CleanerPass(time.Now(), DefaultCleanerConfig()); err != nil || len(sts) != 1 || sts[0].Range.End == 0 {
		t.Fatalf("pass after: %v %+v", err, sts)
	}
}

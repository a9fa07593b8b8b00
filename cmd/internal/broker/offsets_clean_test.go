package broker

import (
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"gregor/actors/coordinator"
	"gregor/storage"
	"gregor/storage/record"
)

// offsetsLog writes __consumer_offsets records as the group coordinator
// and WriteTxnMarkers do: plain commits, TxnOffsetCommit batches
// (transactional, coordinator origin: base sequence -1), markers, and the
// .txnindex entry of every abort.
type offsetsLog struct {
	t    *testing.T
	l    *storage.Log
	open map[int64]int64
}

func (w *offsetsLog) append(opts record.BatchOptions, recs ...record.BatchRecord) int64 {
	w.t.Helper()
	opts.BaseTimestamp, opts.PartitionLeaderEpoch = time.Now().UnixMilli(), -1
	b, err := record.BuildBatch(opts, recs)
	if err != nil {
		w.t.Fatal(err)
	}
	info, err := w.l.Append(b, storage.AppendOptions{LeaderEpoch: 0, LogAppendTime: -1, PreValidated: true})
	if err != nil {
		w.t.Fatal(err)
	}
	return info.FirstOffset
}

func (w *offsetsLog) commit(pid int64, group string, tp coordinator.TopicPartition, off int64) {
	w.t.Helper()
	var opts record.BatchOptions
	if pid >= 0 {
		opts.Transactional, opts.Producer = true, &record.Producer{ID: pid, Epoch: 0, BaseSequence: -1}
	}
	at := w.append(opts, record.BatchRecord{Key: coordinator.OffsetKey(group, tp),
		Value: coordinator.OffsetValue(coordinator.OffsetAndMetadata{Offset: off, LeaderEpoch: -1, CommitTime: time.UnixMilli(1000)})})
	if _, ok := w.open[pid]; pid >= 0 && !ok {
		w.open[pid] = at
	}
}

func (w *offsetsLog) end(pid int64, commit bool) {
	w.t.Helper()
	first := w.open[pid]
	delete(w.open, pid)
	at := w.append(record.BatchOptions{Control: true, Transactional: true, Producer: &record.Producer{ID: pid, Epoch: 0, BaseSequence: -1}},
		record.EndTxnMarker(commit, 0))
	if !commit {
		lso := at + 1
		for _, f := range w.open {
			lso = min(lso, f)
		}
		if err := w.l.AppendAbortedTxn(storage.AbortedTxn{ProducerID: pid, FirstOffset: first, LastOffset: at, LastStableOffset: lso}); err != nil {
			w.t.Fatal(err)
		}
	}
}

// loadGroups loads the log as the coordinator loads a __consumer_offsets
// partition (offsetsTopic.Load's decoding into a coordinator.Loader) and
// describes every group's committed and pending offsets.
func loadGroups(t *testing.T, l *storage.Log) string {
	t.Helper()
	ld := coordinator.NewLoader()
	for off, end := l.LogStartOffset(), l.LogEndOffset(); off < end; {
		fd, err := l.Read(off, 1<<20, end)
		if err != nil {
			t.Fatal(err)
		}
		next, err := eachLogRecord(fd, off, func(r *coordinator.LogRecord) error { return ld.ApplyRecord(r) })
		fd.Release()
		if err != nil {
			t.Fatal(err)
		}
		if next <= off {
			break
		}
		off = next
	}
	var lines []string
	for g, x := range ld.Groups {
		for tp, o := range x.Offsets {
			lines = append(lines, fmt.Sprintf("%s %s-%d = %d", g, tp.Topic, tp.Partition, o.Offset))
		}
		for pid, staged := range x.PendingTxn {
			for tp, p := range staged {
				lines = append(lines, fmt.Sprintf("%s %s-%d pending from producer %d = %d", g, tp.Topic, tp.Partition, pid, p.Offset))
			}
		}
	}
	sort.Strings(lines)
	return fmt.Sprint(lines)
}

// TestOffsetsLoadAfterCleaning: __consumer_offsets with plain and
// transactional offset commits, committed, aborted and still open, loads
// the same committed offsets (and the same pending ones) after the
// cleaner removed the aborted commits, superseded records and, past the
// delete horizon, markers. An aborted commit of a partition must not
// make the cleaner drop the plain commit it did not replace.
func TestOffsetsLoadAfterCleaning(t *testing.T) {
	cfg := storage.DefaultLogConfig()
	cfg.Compact, cfg.DeleteDisabled = true, true
	cfg.SegmentBytes = 1 // every batch its own segment
	cfg.DeleteRetentionMs = 60_000
	cfg.FileDeleteDelayMs = 0
	cfg.SkipRollFsync = true
	l, err := storage.OpenLog(filepath.Join(t.TempDir(), coordinator.OffsetsTopicName+"-0"), cfg, storage.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	w := &offsetsLog{t: t, l: l, open: map[int64]int64{}}
	a, b := coordinator.TopicPartition{Topic: "in", Partition: 0}, coordinator.TopicPartition{Topic: "in", Partition: 1}
	w.commit(-1, "g", a, 1)
	w.commit(7, "g", a, 2) // committed below
	w.commit(8, "g", b, 3) // aborted below
	w.commit(-1, "g", b, 4)
	w.commit(9, "g", b, 5) // aborted below: b stays 4
	w.end(7, true)
	w.end(8, false)
	w.end(9, false)
	w.commit(8, "g2", a, 6) // producer 8 again: committed
	w.end(8, true)
	w.commit(10, "g", a, 9) // still open
	w.commit(-1, "g3", a, 1)
	const want = "[g in-0 = 2 g in-0 pending from producer 10 = 9 g in-1 = 4 g2 in-0 = 6 g3 in-0 = 1]"
	if got := loadGroups(t, l); got != want {
		t.Fatalf("before cleaning: %s\nwant %s", got, want)
	}

	hw := l.LogEndOffset()
	now := time.Now()
	for i, at := range []time.Time{now, now, now.Add(time.Minute)} {
		l.SetHighWatermark(hw)
		l.SetLastStableOffset(w.open[10]) // the open transaction bounds the cleaner
		st, err := l.Clean(0, at, storage.DefaultCleanerConfig())
		if err != nil {
			t.Fatal(err)
		}
		if st.Range.End != w.open[10] {
			t.Fatalf("pass %d: cleaned to %d, want %d", i, st.Range.End, w.open[10])
		}
		if got := loadGroups(t, l); got != want {
			t.Fatalf("after pass %d: %s\nwant %s", i, got, want)
		}
	}
	// Only the live records and the markers the open and surviving
	// transactions need are left: no aborted commit, no removed marker.
	var markers, data []int64
	if err := l.ScanTxnBatches(0, func(h record.Header, _ record.EndTxn, ok bool) bool {
		switch {
		case ok:
			markers = append(markers, h.BaseOffset)
		case !h.IsControl() && h.RecordCount > 0:
			data = append(data, h.BaseOffset)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	// Offsets: 0 g/a plain, 1 p7 g/a, 2 p8 g/b, 3 g/b plain, 4 p9 g/b,
	// 5 COMMIT p7, 6 ABORT p8, 7 ABORT p9, 8 p8 g2/a, 9 COMMIT p8, 10 p10, 11 g3.
	// p9's aborted batch is its last: kept empty, so its marker (7) stays.
	if fmt.Sprint(data) != "[1 3 8 10 11]" || fmt.Sprint(markers) != "[5 7 9]" {
		t.Fatalf("after cleaning: data batches %v, markers %v", data, markers)
	}
	if got := l.CollectAbortedTxns(0, hw); len(got) != 1 || got[0].ProducerID != 9 {
		t.Fatalf("aborted transactions after cleaning %+v", got)
	}
}

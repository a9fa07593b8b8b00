package partition

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"gregor/storage"
	"gregor/storage/record"
)

// txnAppender appends batches to a storage log and keeps the producer
// state the partition actor would (Update, ApplyMarker, the .txnindex
// entry of each abort).
type txnAppender struct {
	t    *testing.T
	l    *storage.Log
	live *Producers
	seq  map[int64]int32
}

func (a *txnAppender) add(opts record.BatchOptions, recs ...record.BatchRecord) {
	a.t.Helper()
	opts.BaseTimestamp, opts.PartitionLeaderEpoch = time.Now().UnixMilli(), -1
	b, err := record.BuildBatch(opts, recs)
	if err != nil {
		a.t.Fatal(err)
	}
	info, err := a.l.Append(b, storage.AppendOptions{LeaderEpoch: 0, LogAppendTime: -1, PreValidated: true})
	if err != nil {
		a.t.Fatal(err)
	}
	h, err := record.ParseHeader(b)
	if err != nil {
		a.t.Fatal(err)
	}
	h.BaseOffset = info.FirstOffset
	if !h.IsControl() {
		a.live.Update(&h, h.MaxTimestamp)
		return
	}
	m, _, err := record.ReadEndTxn(h, b, 1<<20)
	if err != nil {
		a.t.Fatal(err)
	}
	if done, lso := a.live.ApplyMarker(&h, m); done != nil && done.Aborted {
		if err := a.l.AppendAbortedTxn(storage.AbortedTxn{ProducerID: done.ProducerID, FirstOffset: done.FirstOffset, LastOffset: done.LastOffset, LastStableOffset: lso}); err != nil {
			a.t.Fatal(err)
		}
	}
}

// data appends key=value pairs as one batch of producer pid (transactional),
// or plain for pid -1.
func (a *txnAppender) data(pid int64, kvs ...string) {
	a.t.Helper()
	var opts record.BatchOptions
	if pid >= 0 {
		opts.Transactional, opts.Producer = true, &record.Producer{ID: pid, Epoch: 0, BaseSequence: a.seq[pid]}
		a.seq[pid] += int32(len(kvs) / 2)
	}
	var recs []record.BatchRecord
	for i := 0; i+1 < len(kvs); i += 2 {
		recs = append(recs, record.BatchRecord{Key: []byte(kvs[i]), Value: []byte(kvs[i+1]), TimestampDelta: int64(i)})
	}
	a.add(opts, recs...)
}

func (a *txnAppender) marker(pid int64, epoch int16, commit bool) {
	a.t.Helper()
	a.add(record.BatchOptions{Control: true, Transactional: true, Producer: &record.Producer{ID: pid, Epoch: epoch, BaseSequence: -1}},
		record.EndTxnMarker(commit, 5))
}

// producerView is what a rebuild must agree on per producer.
func producerView(p *Producers, hw int64) string {
	var ids []int64
	p.Each(func(id int64, _ *ProducerEntry) { ids = append(ids, id) })
	slices.Sort(ids)
	s := fmt.Sprintf("lso %d ongoing %v;", p.LastStableOffset(hw), p.OngoingTxns())
	for _, id := range ids {
		e := p.Entry(id)
		s += fmt.Sprintf(" %d: epoch %d lastSeq %d txnFirst %d;", id, e.Epoch, e.LastSeq(), e.TxnFirstOffset)
	}
	return s
}

// TestRebuildProducersAfterCleaning: after the cleaner removed aborted
// data, emptied batches and, past the delete horizon, markers, the
// producer state rebuilt from the log (the partition actor's start) has
// the same epochs, last sequences, open transaction and last stable
// offset as the state built while appending.
func TestRebuildProducersAfterCleaning(t *testing.T) {
	cfg := storage.DefaultLogConfig()
	cfg.Compact, cfg.DeleteDisabled = true, true
	cfg.SegmentBytes = 1 // every batch its own segment
	cfg.DeleteRetentionMs = 60_000
	cfg.FileDeleteDelayMs = 0
	cfg.SkipRollFsync = true
	l, err := storage.OpenLog(filepath.Join(t.TempDir(), "t-0"), cfg, storage.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a := &txnAppender{t: t, l: l, live: NewProducers(), seq: map[int64]int32{}}
	a.data(1, "k", "a")
	a.data(1, "k", "b")
	a.marker(1, 0, false)
	a.data(2, "j", "x")
	a.marker(2, 1, false) // aborted by the coordinator with a bumped epoch
	a.data(1, "k", "c")
	a.marker(1, 0, true)
	a.data(-1, "k", "d")
	a.data(3, "m", "open") // still open: the cleaner stays below it
	a.data(-1, "f", "x")
	hw := l.LogEndOffset()
	want := producerView(a.live, hw)
	if !slices.Equal(a.live.OngoingTxns(), []CompletedTxn{{ProducerID: 3, FirstOffset: 8, LastOffset: -1}}) {
		t.Fatalf("live state %s", want)
	}

	now := time.Now()
	for i, at := range []time.Time{now, now, now.Add(time.Minute)} {
		l.SetHighWatermark(hw)
		l.SetLastStableOffset(a.live.LastStableOffset(hw))
		st, err := l.Clean(0, at, storage.DefaultCleanerConfig())
		if err != nil {
			t.Fatal(err)
		}
		if st.Range.End != 8 {
			t.Fatalf("pass %d cleaned to %d, want the open transaction's offset 8", i, st.Range.End)
		}
		got, err := rebuildProducers(StorageLog{l}, hw)
		if err != nil {
			t.Fatal(err)
		}
		if v := producerView(got, hw); v != want {
			t.Fatalf("pass %d: rebuilt\n %s\nwant\n %s", i, v, want)
		}
	}
	// The aborted data and the first abort marker are gone; producer 2's
	// aborted batch stays empty (its last), with its marker.
	var markers []int64
	var values []string
	if err := l.ScanTxnBatches(0, func(h record.Header, _ record.EndTxn, ok bool) bool {
		if ok {
			markers = append(markers, h.BaseOffset)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off < hw; {
		fd, err := l.Read(off, 1<<20, hw)
		if err != nil {
			t.Fatal(err)
		}
		var b []byte
		for _, r := range fd.Regions {
			buf := make([]byte, r.Len)
			if _, err := r.File.ReadAt(buf, r.Pos); err != nil {
				t.Fatal(err)
			}
			b = append(b, buf...)
		}
		fd.Release()
		if len(b) == 0 {
			t.Fatalf("nothing read at %d", off)
		}
		for len(b) > 0 {
			h, batch, err := record.ValidateIntegrity(b)
			if err != nil {
				t.Fatal(err)
			}
			if !h.IsControl() {
				_ = record.Records(h, batch, 1<<20, func(r *record.Record) error {
					values = append(values, fmt.Sprintf("%d:%s=%s", r.Offset(&h), r.Key, r.Value))
					return nil
				})
			}
			off = h.NextOffset()
			b = b[len(batch):]
		}
	}
	if !slices.Equal(markers, []int64{4, 6}) || !slices.Equal(values, []string{"7:k=d", "8:m=open", "9:f=x"}) {
		t.Fatalf("after cleaning: markers %v values %v", markers, values)
	}
}

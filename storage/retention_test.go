package storage

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"gregor/storage/segment"
)

func countSuffix(t *testing.T, dir, suffix string) int {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), suffix) {
			n++
		}
	}
	return n
}

func TestRetentionByTime(t *testing.T) {
	cfg := testConfig()
	cfg.RetentionMs = 10_000
	l := newTestLog(t, cfg)
	appendN(t, l, 40, 4, 60, 1_000_000) // batch i has max ts 1_000_003 + 1000i
	segs := l.segs.Load().segs
	now := time.UnixMilli(1_040_000) // cutoff 1_030_000: batches 0..29 expired (max ts 1_029_003)
	n, err := l.retain(now)
	if err != nil {
		t.Fatal(err)
	}
	// Expected: the prefix of segments whose max timestamp is < cutoff.
	want := 0
	for _, s := range segs[:len(segs)-1] {
		if ts, _ := s.MaxTimestamp(); ts < 1_030_000 {
			want++
		} else {
			break
		}
	}
	if n != want || want == 0 {
		t.Fatalf("deleted %d segments, want %d", n, want)
	}
	if l.LogStartOffset() != segs[want].BaseOffset() {
		t.Fatalf("log start %d, want %d", l.LogStartOffset(), segs[want].BaseOffset())
	}
	if _, err := l.Read(0, 100, 1000); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below start: %v", err)
	}
	if c := countSuffix(t, l.Dir(), segment.LogSuffix); c != len(segs)-want {
		t.Fatalf("%d .log files left, want %d", c, len(segs)-want)
	}
	// Once every segment, the active one included, is past retention.ms,
	// all go as in Kafka: the log rolls an empty segment at its end first.
	// Not while the high watermark is unknown (-1 until the partition
	// sets it): the active segment's records may not be committed.
	end := l.LogEndOffset()
	if n, _ = l.retain(time.UnixMilli(9_000_000_000)); n != len(segs)-want-1 || l.NumSegments() != 1 || l.Size() == 0 {
		t.Fatalf("high watermark unknown: deleted %d, %d segments, size %d", n, l.NumSegments(), l.Size())
	}
	l.SetHighWatermark(end)
	n, _ = l.retain(time.UnixMilli(9_000_000_000))
	if l.NumSegments() != 1 || n != 1 || l.Size() != 0 || l.LogStartOffset() != end || l.LogEndOffset() != end {
		t.Fatalf("after all expired: deleted %d, %d segments, size %d, start %d end %d; want 1, 1, 0, %d %d", n, l.NumSegments(), l.Size(), l.LogStartOffset(), l.LogEndOffset(), end, end)
	}
	// An empty active segment is never deleted.
	if n, _ = l.retain(time.UnixMilli(9_000_000_000)); n != 0 || l.NumSegments() != 1 {
		t.Fatalf("empty log: deleted %d, %d segments", n, l.NumSegments())
	}
}

func TestRetentionBySizeWithDeleteDelay(t *testing.T) {
	cfg := testConfig()
	cfg.RetentionMs = -1
	cfg.RetentionBytes = 10_000
	cfg.FileDeleteDelayMs = 60_000
	l := newTestLog(t, cfg)
	appendN(t, l, 60, 4, 60, 0)
	total := l.Size()
	now := time.Now()
	n, err := l.retain(now)
	if err != nil || n == 0 {
		t.Fatalf("deleted %d, %v", n, err)
	}
	// Kafka's rule: delete oldest segments while what remains stays >= retention.bytes.
	if l.Size() < 10_000 || l.Size()-l.segs.Load().segs[0].Size() >= 10_000 || l.Size() >= total {
		t.Fatalf("size %d after retention of %d to 10000", l.Size(), total)
	}
	// Files renamed to .deleted and kept until file.delete.delay.ms passes.
	if c := countSuffix(t, l.Dir(), segment.LogSuffix+segment.DeletedSuffix); c != n {
		t.Fatalf("%d .log.deleted files, want %d", c, n)
	}
	l.retain(now.Add(59 * time.Second))
	if c := countSuffix(t, l.Dir(), segment.DeletedSuffix); c != 3*n {
		t.Fatalf("deleted too early: %d files", c)
	}
	l.retain(now.Add(61 * time.Second))
	if c := countSuffix(t, l.Dir(), segment.DeletedSuffix); c != 0 {
		t.Fatalf("%d .deleted files after the delay", c)
	}
}

func TestRetentionStopsAtHighWatermark(t *testing.T) {
	cfg := testConfig()
	cfg.RetentionMs = 0
	l := newTestLog(t, cfg)
	appendN(t, l, 40, 4, 60, 0)
	segs := l.segs.Load().segs
	l.SetHighWatermark(segs[2].BaseOffset())
	n, _ := l.retain(time.Now())
	if n != 2 || l.LogStartOffset() != segs[2].BaseOffset() {
		t.Fatalf("deleted %d (start %d), want 2 segments below the high watermark", n, l.LogStartOffset())
	}
}

func TestDeleteRecordsBefore(t *testing.T) {
	cfg := testConfig()
	cfg.RetentionMs = -1 // the records' timestamp 0 would be past any retention.ms
	l := newTestLog(t, cfg)
	appendN(t, l, 40, 4, 60, 0)
	segs := l.segs.Load().segs
	mid := segs[2].BaseOffset() + 1
	if err := l.DeleteRecordsBefore(mid); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != mid || l.NumSegments() != len(segs)-2 {
		t.Fatalf("start %d segments %d", l.LogStartOffset(), l.NumSegments())
	}
	if err := l.DeleteRecordsBefore(1000); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("beyond LEO: %v", err)
	}
	// Up to the log end: every segment a later one follows goes; the
	// active one stays with its bytes (Kafka deletes a segment for the
	// log start offset only when the next segment starts at or below it),
	// so DescribeLogDirs still counts them.
	active := l.segs.Load().active()
	if err := l.DeleteRecordsBefore(160); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 160 || l.NumSegments() != 1 || l.Size() != active.Size() || l.Size() == 0 {
		t.Fatalf("start %d segments %d size %d, want 160 1 %d", l.LogStartOffset(), l.NumSegments(), l.Size(), active.Size())
	}
	if n, _ := l.retain(time.Now()); n != 0 || l.Size() != active.Size() {
		t.Fatalf("a retention pass deleted %d segments below the log start offset with no next one", n)
	}
	fd, err := l.Read(160, 100, 160)
	if err != nil || fd.Bytes != 0 {
		t.Fatalf("read at end: %v", err)
	}
	// Once a segment follows it, the next pass deletes it.
	l.mu.Lock()
	_, err = l.rollLocked(l.cfg.Load(), 160)
	l.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := l.retain(time.Now()); n != 1 || l.Size() != 0 || l.LogStartOffset() != 160 {
		t.Fatalf("after a roll: deleted %d, size %d, start %d", n, l.Size(), l.LogStartOffset())
	}
	// The start survives a restart through the checkpoint option.
	dir := l.Dir()
	l.Close()
	l2 := openTestLog(t, dir, cfg, OpenOptions{CleanShutdown: true, LogStartOffset: 160})
	defer l2.Close()
	if l2.LogStartOffset() != 160 || l2.LogEndOffset() != 160 {
		t.Fatalf("reopened start %d end %d", l2.LogStartOffset(), l2.LogEndOffset())
	}
}

func TestFlushPolicy(t *testing.T) {
	cfg := testConfig()
	cfg.FlushMessages = 10
	l := newTestLog(t, cfg)
	appendN(t, l, 2, 4, 10, 0)
	if l.RecoveryPoint() != 0 {
		t.Fatalf("recovery point %d before flush.messages", l.RecoveryPoint())
	}
	appendN(t, l, 1, 4, 10, 0)
	if l.RecoveryPoint() != 12 {
		t.Fatalf("recovery point %d, want 12 after flush.messages", l.RecoveryPoint())
	}
	cfg.FlushMessages = 1 << 40
	cfg.FlushMs = 1000
	l.SetConfig(cfg)
	appendN(t, l, 1, 4, 10, 0)
	l.flushIfDue(time.Now())
	if l.RecoveryPoint() != 12 {
		t.Fatal("flushed before flush.ms")
	}
	l.flushIfDue(time.Now().Add(2 * time.Second))
	if l.RecoveryPoint() != 16 {
		t.Fatalf("recovery point %d after flush.ms", l.RecoveryPoint())
	}
}

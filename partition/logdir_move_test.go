package partition

import (
	"bytes"
	"math"
	"path/filepath"
	"testing"

	"gregor/storage"
	"gregor/storage/record"
)

func TestDecideAlter(t *testing.T) {
	for _, c := range []struct {
		current, future string
		moving          bool
		dest            string
		want            alterAction
	}{
		{"/d1", "", false, "/d1", alterNothing},
		{"/d1", "", false, "/d2", alterStart},
		{"/d1", "/d2", true, "/d2", alterKeep},
		{"/d1", "/d2", true, "/d1", alterCancel},
		{"/d1", "/d2", true, "/d3", alterRedirect},
	} {
		if got := decideAlter(c.current, c.future, c.moving, c.dest); got != c.want {
			t.Errorf("decideAlter(%q, %q, %v, %q) = %v, want %v", c.current, c.future, c.moving, c.dest, got, c.want)
		}
	}
}

func TestShouldSwap(t *testing.T) {
	for _, c := range []struct {
		fleo, leo int64
		reports   int
		want      bool
	}{
		{100, 100, 1, true}, // caught up: Kafka's condition
		{90, 100, 1, false}, // behind: copy on
		{90, 100, swapAfterReports - 1, false},
		{90, 100, swapAfterReports, true}, // kept catching up under load: finish with writers held
		{0, 0, 1, true},                   // empty log
	} {
		if got := shouldSwap(c.fleo, c.leo, c.reports); got != c.want {
			t.Errorf("shouldSwap(%d, %d, %d) = %v, want %v", c.fleo, c.leo, c.reports, got, c.want)
		}
	}
}

func TestChunkFor(t *testing.T) {
	for rate, want := range map[int64]int64{math.MaxInt64: copyChunk, 0: copyChunk, 1000: 4 << 10, 2_000_000: 100_000, 1 << 30: copyChunk} {
		if got := chunkFor(rate); got != want {
			t.Errorf("chunkFor(%d) = %d, want %d", rate, got, want)
		}
	}
}

// moveLogs opens a current and a future storage log for the copier's
// own steps (no actor).
func moveLogs(t *testing.T) (cur, fut *storage.Log, r *moveRun) {
	t.Helper()
	cfg := storage.DefaultLogConfig()
	cfg.SegmentBytes = 2048
	cfg.FileDeleteDelayMs = 0
	open := func(name string) *storage.Log {
		l, err := storage.OpenLog(filepath.Join(t.TempDir(), name), cfg, storage.OpenOptions{CleanShutdown: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	cur, fut = open("t-0"), open("t-0.0123456789abcdef0123456789abcdef-future")
	r = &moveRun{cur: cur, fut: fut, nudge: make(chan struct{}, 1)}
	r.truncated.Store(math.MaxInt64)
	return cur, fut, r
}

func appendLeader(t *testing.T, l *storage.Log, epoch int32, batches, n int, tag string) {
	t.Helper()
	for i := 0; i < batches; i++ {
		recs := make([]record.BatchRecord, n)
		for j := range recs {
			recs[j] = record.BatchRecord{Value: []byte(tag + "-value-padding-padding"), TimestampDelta: int64(j)}
		}
		b, err := record.BuildBatch(record.BatchOptions{BaseTimestamp: 1_700_000_000_000, PartitionLeaderEpoch: -1}, recs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b, storage.AppendOptions{LeaderEpoch: epoch, LogAppendTime: -1}); err != nil {
			t.Fatal(err)
		}
	}
}

// catchUp runs the copier's sync and copy steps until the future log
// reaches the current log's end.
func catchUp(t *testing.T, r *moveRun) {
	t.Helper()
	for i := 0; ; i++ {
		if err := r.sync(); err != nil {
			t.Fatal(err)
		}
		if r.fut.LogEndOffset() >= r.cur.LogEndOffset() {
			return
		}
		if i > 1000 {
			t.Fatal("copier does not converge")
		}
		if _, err := r.copyOnce(r.cur.LogEndOffset(), true); err != nil {
			t.Fatal(err)
		}
	}
}

// sameLog checks the two logs hold the same bytes, offsets and epochs.
func sameLog(t *testing.T, cur, fut *storage.Log) {
	t.Helper()
	if cur.LogStartOffset() != fut.LogStartOffset() || cur.LogEndOffset() != fut.LogEndOffset() {
		t.Fatalf("current [%d, %d), future [%d, %d)", cur.LogStartOffset(), cur.LogEndOffset(), fut.LogStartOffset(), fut.LogEndOffset())
	}
	read := func(l *storage.Log) []byte {
		fd, err := l.Read(l.LogStartOffset(), 1<<30, l.LogEndOffset())
		if err != nil {
			t.Fatal(err)
		}
		b, err := readRegions(fd)
		fd.Release()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if !bytes.Equal(read(cur), read(fut)) {
		t.Fatal("future log bytes differ from the current log's")
	}
	ce, fe := cur.LeaderEpochs().Entries(), fut.LeaderEpochs().Entries()
	if len(ce) != len(fe) {
		t.Fatalf("epochs: current %v future %v", ce, fe)
	}
	for i := range ce {
		if ce[i] != fe[i] {
			t.Fatalf("epochs: current %v future %v", ce, fe)
		}
	}
}

func TestMoveRunMirrorsTruncationAndLogStart(t *testing.T) {
	cur, fut, r := moveLogs(t)
	appendLeader(t, cur, 1, 10, 3, "a")
	appendLeader(t, cur, 2, 10, 3, "b")
	catchUp(t, r)
	sameLog(t, cur, fut)

	// Follower truncation (KIP-279) then different batches: the future
	// log, told of the truncation, drops its copy of the old ones.
	if err := cur.TruncateTo(45); err != nil {
		t.Fatal(err)
	}
	r.noteTruncated(cur.LogEndOffset())
	appendLeader(t, cur, 3, 5, 4, "c")
	catchUp(t, r)
	sameLog(t, cur, fut)

	// DeleteRecords / retention move the log start offset.
	if err := cur.DeleteRecordsBefore(20); err != nil {
		t.Fatal(err)
	}
	catchUp(t, r)
	sameLog(t, cur, fut)

	// A full truncation to a higher offset (a follower far behind its leader).
	if err := cur.TruncateFullyAndStartAt(500); err != nil {
		t.Fatal(err)
	}
	r.noteTruncated(500)
	appendLeader(t, cur, 4, 3, 2, "d")
	catchUp(t, r)
	sameLog(t, cur, fut)
	if fut.LogStartOffset() != 500 {
		t.Fatalf("future log start %d", fut.LogStartOffset())
	}
}

// A log start offset inside a batch: the copy starts with that whole
// batch and then takes the log start offset.
func TestMoveRunLogStartInsideBatch(t *testing.T) {
	cur, fut, r := moveLogs(t)
	appendLeader(t, cur, 0, 6, 5, "x")
	if err := cur.DeleteRecordsBefore(12); err != nil {
		t.Fatal(err)
	}
	catchUp(t, r)
	sameLog(t, cur, fut)
}

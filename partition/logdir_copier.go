package partition

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"gregor/storage"
	"gregor/storage/record"
)

// copyChunk bounds one read of the current log (Kafka's
// ReplicaAlterLogDirsThread fetches replica.fetch.max.bytes, 1 MiB, at a
// time); a larger first batch is still read whole.
const copyChunk = 1 << 20

// chunkFor is the read size under a throttle of rate bytes/s: about a
// twentieth of a second's worth (4 KiB to copyChunk), so the copy rate
// stays close to the bound over a short window.
func chunkFor(rate int64) int64 {
	if rate <= 0 || rate >= math.MaxInt64/2 {
		return copyChunk
	}
	return min(max(rate/20, 4<<10), copyChunk)
}

// idleRecheck bounds a caught-up copier's wait for more data: it looks
// at the log start offset and the partition's state again after it.
const idleRecheck = 500 * time.Millisecond

// moveRun is one move of a partition's log to dest: its goroutine creates
// (or finds) the future log, copies the current log into it and, asked to
// by the actor (swap), completes it and swaps it in. The actor owns the
// run: it stops it (stopCopy, cancel) and ignores results of runs that
// are no longer its current one. Fields below "goroutine" are the
// goroutine's alone, except where atomic.
type moveRun struct {
	tp    TopicPartition
	dest  string // configured log.dirs entry
	lm    *storage.LogManager
	cur   *storage.Log // the current log: read, never written, here
	h     *Handle      // for the log end offset long poll
	quota CopyThrottle
	// slots, when set, is the broker's num.replica.alter.log.dirs.threads
	// tokens: the copy holds one while it runs.
	slots chan struct{}
	log   *zap.Logger
	self  *actor.PID
	root  *actor.RootContext
	prev  <-chan struct{}  // a cancelled run to wait for first (nil none)
	reply chan *kerr.Error // AlterReplicaLogDirs answer (nil: a resume)

	stop     chan struct{} // closed by stopCopy / cancel
	stopOnce sync.Once
	drop     atomic.Bool   // cancel: remove the future log on exit
	done     chan struct{} // closed when the copier goroutine has exited
	nudge    chan struct{} // cap 1: wake an idle copier (truncation)
	// truncated is the lowest offset the actor truncated the current log
	// to since the copier last looked (MaxInt64: none).
	truncated atomic.Int64
	reports   int // actor-only: caught-up reports (shouldSwap)

	fut *storage.Log
}

// stopCopy ends the copy, keeping the future log (actor stop or restart,
// or before a swap).
func (r *moveRun) stopCopy() { r.stopOnce.Do(func() { close(r.stop) }) }

// cancel ends the copy and removes the future log.
func (r *moveRun) cancel() {
	r.drop.Store(true)
	r.stopCopy()
}

// noteTruncated records a truncation of the current log (actor side).
func (r *moveRun) noteTruncated(offset int64) {
	for {
		old := r.truncated.Load()
		if offset >= old || r.truncated.CompareAndSwap(old, offset) {
			break
		}
	}
	select {
	case r.nudge <- struct{}{}:
	default:
	}
}

func (r *moveRun) stopped() bool {
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

// run is the copier goroutine.
func (r *moveRun) run() {
	defer close(r.done)
	if r.prev != nil {
		<-r.prev // the cancelled move has removed its future log
	}
	fut, err := r.open()
	if r.reply != nil {
		r.reply <- storageKerr(err)
	}
	if err != nil {
		r.log.Warn("future log not created", zap.Stringer("partition", r.tp), zap.String("dir", r.dest), zap.Error(err))
		return
	}
	r.fut = fut
	err = r.copyWithSlot()
	if r.drop.Load() {
		if derr := r.lm.DropFuture(r.tp); derr != nil {
			r.log.Warn("removing future log", zap.Stringer("partition", r.tp), zap.Error(derr))
		}
		return
	}
	if err != nil && !errors.Is(err, storage.ErrLogClosed) {
		r.root.Send(r.self, &futureFailed{run: r, err: err})
	}
}

// copyWithSlot runs copyLoop holding one of the broker's copy slots
// (num.replica.alter.log.dirs.threads), waiting for one first; a move
// stopped while it waits copies nothing. Kafka's alter-log-dirs threads
// each interleave the partitions hashed to them; here a copy beyond the
// bound waits until a running one ends (swapped in, cancelled or failed).
func (r *moveRun) copyWithSlot() error {
	if r.slots != nil {
		select {
		case r.slots <- struct{}{}:
		default:
			r.log.Info("log dir copy waiting: num.replica.alter.log.dirs.threads copies already run", zap.Stringer("partition", r.tp),
				zap.Int("threads", cap(r.slots)))
			select {
			case r.slots <- struct{}{}:
			case <-r.stop:
				return fmt.Errorf("%w: move of %s stopped before its copy began", storage.ErrLogClosed, r.tp)
			}
		}
		defer func() { <-r.slots }()
	}
	return r.copyLoop()
}

// open finds the future log in dest or creates it there.
func (r *moveRun) open() (*storage.Log, error) {
	if r.stopped() {
		return nil, fmt.Errorf("%w: move of %s stopped before it began", storage.ErrLogClosed, r.tp)
	}
	if l, dir, ok := r.lm.Future(r.tp); ok && dir == r.dest {
		return l, nil
	}
	return r.lm.CreateFuture(r.tp, r.dest)
}

// storageKerr maps a future-log creation error to AlterReplicaLogDirs'.
func storageKerr(err error) *kerr.Error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, storage.ErrLogClosed), errors.Is(err, storage.ErrNoFutureLog):
		return kerr.ReplicaNotAvailable
	}
	return kerr.KafkaStorageError
}

// copyLoop copies until stopped; it reports each time it reaches the
// current log's end and then waits for more.
func (r *moveRun) copyLoop() error {
	reportedAt := int64(-1)
	for !r.stopped() {
		if err := r.sync(); err != nil {
			return err
		}
		leo, fleo := r.cur.LogEndOffset(), r.fut.LogEndOffset()
		if fleo >= leo {
			if fleo != reportedAt {
				reportedAt = fleo
				r.root.Send(r.self, &futureCaughtUp{run: r, futureLEO: fleo})
			}
			r.idle(fleo)
			continue
		}
		reportedAt = -1
		if wait := r.throttleWait(); wait > 0 {
			select {
			case <-r.stop:
			case <-time.After(wait):
			}
			continue
		}
		if _, err := r.copyOnce(leo, true); err != nil {
			if errors.Is(err, storage.ErrOffsetOutOfRange) || errors.Is(err, storage.ErrUnexpectedAppendOffset) {
				continue // the current log moved under the read: sync again
			}
			return err
		}
	}
	return nil
}

// idle waits for the current log to grow past fleo, a truncation, a stop,
// or idleRecheck.
func (r *moveRun) idle(fleo int64) {
	wake := make(chan struct{}, 1)
	cancel := r.h.WaitForLogEnd(fleo, wake)
	defer cancel()
	t := time.NewTimer(idleRecheck)
	defer t.Stop()
	if v := r.h.View(); v != nil && v.Err != nil {
		// Unavailable (restarting, stopping): the waiter wakes at once;
		// wait out the recheck rather than spin.
		wake = nil
	}
	select {
	case <-r.stop:
	case <-r.nudge:
	case <-wake:
	case <-t.C:
	}
}

func (r *moveRun) throttleWait() time.Duration {
	if r.quota == nil {
		return 0
	}
	now := time.Now()
	if !r.quota.IsQuotaExceeded(now) {
		return 0
	}
	return max(r.quota.ThrottleTime(now), 10*time.Millisecond)
}

// sync mirrors the current log's truncations and log start offset onto
// the future log (Kafka's alter-log-dirs thread truncates the future
// replica to the current one).
func (r *moveRun) sync() error {
	if t := r.truncated.Swap(math.MaxInt64); t < r.fut.LogEndOffset() {
		if err := r.fut.TruncateTo(t); err != nil {
			return err
		}
	}
	cs := r.cur.LogStartOffset()
	switch fs, fleo := r.fut.LogStartOffset(), r.fut.LogEndOffset(); {
	case fleo < cs || (fleo == cs && fs != cs):
		return r.fut.TruncateFullyAndStartAt(cs)
	case fs < cs:
		return r.fut.DeleteRecordsBefore(cs)
	}
	return nil
}

// copyOnce copies one chunk of batches from the future log's end up to
// upper and returns the bytes copied.
func (r *moveRun) copyOnce(upper int64, throttled bool) (int, error) {
	fleo := r.fut.LogEndOffset()
	chunk := int64(copyChunk)
	if throttled && r.quota != nil {
		chunk = chunkFor(r.quota.Rate())
	}
	fd, err := r.cur.Read(fleo, chunk, upper)
	if err != nil {
		return 0, err
	}
	buf, err := readRegions(fd)
	fd.Release()
	if err != nil {
		return 0, err
	}
	// Skip batches wholly below the future log's end (the read starts at
	// the batch holding fleo); one straddling it means the logs diverged
	// at that batch: truncate to its start and copy it whole.
	for len(buf) >= record.HeaderSize {
		h, err := record.ParseHeader(buf)
		if err != nil {
			return 0, err
		}
		if h.NextOffset() > fleo {
			if h.BaseOffset < fleo {
				if err := r.fut.TruncateTo(h.BaseOffset); err != nil {
					return 0, err
				}
			}
			break
		}
		buf = buf[h.Size():]
	}
	if len(buf) == 0 {
		return 0, nil
	}
	if _, err := r.fut.AppendAsFollower(buf); err != nil {
		return 0, err
	}
	if r.quota != nil { // every copied byte counts, held or not (Kafka records all)
		r.quota.Record(int64(len(buf)), time.Now())
	}
	return len(buf), nil
}

// readRegions reads a FetchData's batches into memory.
func readRegions(fd storage.FetchData) ([]byte, error) {
	buf := make([]byte, fd.Bytes)
	off := 0
	for _, rg := range fd.Regions {
		if _, err := rg.File.ReadAt(buf[off:off+int(rg.Len)], rg.Pos); err != nil {
			return nil, err
		}
		off += int(rg.Len)
	}
	return buf, nil
}

// swap completes the move on a goroutine counted in wg: the copier is
// stopped and awaited, the rest of the current log copied (its writers
// are held by the actor), the aborted transactions copied, and the
// future log swapped in; the outcome goes to the actor as *futureSwapped.
func (r *moveRun) swap(wg *sync.WaitGroup) {
	r.stopCopy()
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-r.done
		l, replaced, err := r.complete()
		r.root.Send(r.self, &futureSwapped{run: r, log: l, replaced: replaced, err: err})
	}()
}

func (r *moveRun) complete() (*storage.Log, bool, error) {
	if r.fut == nil || r.drop.Load() {
		return nil, false, fmt.Errorf("%w: move of %s has no future log", storage.ErrNoFutureLog, r.tp)
	}
	for n := 0; ; n++ {
		if err := r.sync(); err != nil {
			return nil, false, err
		}
		leo := r.cur.LogEndOffset()
		if r.fut.LogEndOffset() >= leo {
			break
		}
		if n > 1<<20 {
			return nil, false, fmt.Errorf("partition %s: future log does not converge", r.tp)
		}
		if _, err := r.copyOnce(leo, false); err != nil {
			return nil, false, err
		}
	}
	if fs, cs := r.fut.LogStartOffset(), r.cur.LogStartOffset(); fs != cs || r.fut.LogEndOffset() != r.cur.LogEndOffset() {
		return nil, false, fmt.Errorf("partition %s: future log [%d, %d) does not match the current log [%d, %d)",
			r.tp, fs, r.fut.LogEndOffset(), cs, r.cur.LogEndOffset())
	}
	// The .txnindex entries: the actor writes them after it appends an
	// ABORT marker, so the copier may have copied a marker before its
	// entry existed; copy them all now (entries already there are kept).
	for _, e := range r.cur.CollectAbortedTxns(r.fut.LogStartOffset(), r.cur.LogEndOffset()) {
		if e.LastOffset < r.fut.LogStartOffset() {
			continue
		}
		if err := r.fut.AppendAbortedTxn(e); err != nil {
			return nil, false, err
		}
	}
	l, err := r.lm.ReplaceCurrentWithFuture(r.tp)
	if err != nil {
		return nil, isClosed(r.cur), err
	}
	return l, true, nil
}

// isClosed reports whether a read of l fails as closed.
func isClosed(l *storage.Log) bool {
	_, err := l.Read(l.LogEndOffset(), 0, l.LogEndOffset())
	return errors.Is(err, storage.ErrLogClosed)
}

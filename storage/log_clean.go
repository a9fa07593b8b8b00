package storage

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"go.uber.org/zap"

	"gregor/storage/compaction"
	"gregor/storage/record"
	"gregor/storage/segment"
)

// CleanerConfig is the broker-wide log cleaner configuration. Plain value.
type CleanerConfig struct {
	// DedupeBufferSize: log.cleaner.dedupe.buffer.size (default 128 MiB),
	// the most memory one pass's key → offset map may use (24 bytes per
	// key slot). A dirty section with more keys is cleaned in several
	// passes.
	DedupeBufferSize int64
	// LoadFactor: log.cleaner.io.buffer.load.factor (default 0.9).
	LoadFactor float64
	// Threads: log.cleaner.threads (default 1): how many logs
	// LogManager.CleanerPass cleans at once; 0 or less is 1 here (the
	// broker runs no pass at all for log.cleaner.threads=0, as Kafka starts
	// no cleaner thread). Log.Clean itself is one cleaning.
	Threads int
	// IOBufferSize: log.cleaner.io.buffer.size (default 512 KiB, bytes).
	// As Kafka, one cleaning's read buffer (each segment pass reads through
	// it) and its write buffer are IOBufferSize/Threads/2 each; a batch
	// larger than the read buffer is read whole anyway (Kafka grows it).
	IOBufferSize int64
	// MaxIOBytesPerSecond: log.cleaner.io.max.bytes.per.second (default
	// math.MaxFloat64, unthrottled), bytes read plus written per second by
	// all of LogManager.CleanerPass's cleanings together. Log.Clean called
	// directly is not throttled.
	MaxIOBytesPerSecond float64

	throttle *cleanerThrottle // set by CleanerPass; nil: none
}

// DefaultCleanerConfig returns Kafka's defaults.
func DefaultCleanerConfig() CleanerConfig {
	return CleanerConfig{DedupeBufferSize: compaction.DefaultDedupeBufferSize, LoadFactor: compaction.DefaultLoadFactor,
		Threads: 1, IOBufferSize: defaultCleanerIOBuffer, MaxIOBytesPerSecond: math.MaxFloat64}
}

// defaultCleanerIOBuffer is log.cleaner.io.buffer.size's default.
const defaultCleanerIOBuffer = 512 << 10

// bufferSize is one cleaning's read (and write) buffer: Kafka's
// ioBufferSize / numThreads / 2, at least bufio's 16 bytes.
func (cc CleanerConfig) bufferSize() int {
	n := cc.IOBufferSize
	if n < 0 {
		n = defaultCleanerIOBuffer
	}
	n /= int64(max(cc.Threads, 1)) * 2
	return int(min(max(n, 16), math.MaxInt32))
}

// CleanableRange describes the part of a log a cleaning pass may touch.
// Offsets; byte counts are .log sizes. Plain value.
type CleanableRange struct {
	// FirstDirty is the base offset of the first segment not yet cleaned
	// (from the cleaner-offset-checkpoint, clamped to the log).
	FirstDirty int64
	// End is the first uncleanable offset, a segment base: never inside or
	// beyond the active segment, the segment holding the high watermark,
	// or a segment younger than min.compaction.lag.ms.
	End int64
	// CleanBytes / DirtyBytes: sizes of the segments below FirstDirty and
	// of those in [FirstDirty, End).
	CleanBytes, DirtyBytes int64
	// Forced: the first dirty segment is older than max.compaction.lag.ms,
	// so it must be cleaned whatever min.cleanable.dirty.ratio says.
	Forced bool
}

// DirtyRatio is DirtyBytes / (CleanBytes + DirtyBytes), 0 when empty.
func (r CleanableRange) DirtyRatio() float64 {
	if r.CleanBytes+r.DirtyBytes == 0 {
		return 0
	}
	return float64(r.DirtyBytes) / float64(r.CleanBytes+r.DirtyBytes)
}

// NeedsCleaning reports whether the range has dirty segments and either
// reaches min.cleanable.dirty.ratio or is Forced.
func (r CleanableRange) NeedsCleaning(minRatio float64) bool {
	return r.End > r.FirstDirty && r.DirtyBytes > 0 && (r.Forced || r.DirtyRatio() >= minRatio)
}

// CleanStats reports one Clean. Plain value.
type CleanStats struct {
	Range                    CleanableRange
	BytesRead, BytesWritten  int64 // .log bytes of the rewritten segments, before and after
	RecordsRead, RecordsKept int64
	TombstonesDropped        int64
	// AbortedDropped counts records of aborted transactions removed;
	// MarkersDropped transaction markers removed (or emptied) after
	// their delete horizon.
	AbortedDropped, MarkersDropped int64
	SegmentsIn, SegmentsOut        int // segments replaced and produced
	MapEntries                     int // distinct keys of the dirty section
	Duration                       time.Duration
}

// ErrCleaningAborted: the log changed under a cleaning pass (truncation,
// retention, close); nothing was swapped for the group concerned. The next
// pass starts again from the same checkpoint.
var ErrCleaningAborted = errors.New("log cleaning aborted: the log changed")

// CleanableRange computes the cleanable section of the log from the
// cleaner checkpoint firstDirty at time now (Kafka's
// LogCleanerManager.cleanableOffsets): the first uncleanable offset is the
// smallest of the active segment's base, the high watermark's segment
// (nothing is cleaned when the high watermark is unknown), the last stable
// offset's segment (SetLastStableOffset) and the first
// segment whose newest record is younger than min.compaction.lag.ms.
func (l *Log) CleanableRange(firstDirty int64, now time.Time) CleanableRange {
	cfg := l.cfg.Load()
	sl := l.segs.Load()
	start, leo := l.start.Load(), l.leo.Load()
	if firstDirty < start || firstDirty > leo {
		firstDirty = start
	}
	bound := sl.active().BaseOffset()
	if hw := l.hw.Load(); hw < bound {
		bound = max(hw, 0)
	}
	if lso := l.lso.Load(); lso >= 0 && lso < bound {
		bound = lso
	}
	dirtyIdx := max(sl.find(firstDirty), 0)
	if cfg.MinCompactionLagMs > 0 {
		cutoff := now.UnixMilli() - cfg.MinCompactionLagMs
		for _, s := range sl.segs[dirtyIdx:] {
			if ts, _ := s.MaxTimestamp(); ts > cutoff {
				bound = min(bound, s.BaseOffset())
				break
			}
		}
	}
	r := CleanableRange{FirstDirty: sl.segs[dirtyIdx].BaseOffset()}
	// End: the base of the segment holding bound (whole segments only).
	endIdx := sl.find(bound)
	if endIdx < 0 || endIdx <= dirtyIdx {
		r.End = r.FirstDirty
		return r
	}
	r.End = sl.segs[endIdx].BaseOffset()
	for i, s := range sl.segs[:endIdx] {
		if i < dirtyIdx {
			r.CleanBytes += s.Size()
		} else {
			r.DirtyBytes += s.Size()
		}
	}
	if cfg.MaxCompactionLagMs > 0 && cfg.MaxCompactionLagMs < math.MaxInt64 {
		if ts, _ := sl.segs[dirtyIdx].MaxTimestamp(); ts >= 0 && ts < now.UnixMilli()-cfg.MaxCompactionLagMs {
			r.Forced = true
		}
	}
	return r
}

// Clean runs one compaction pass (Kafka's Cleaner.clean) over the log with
// cleaner checkpoint firstDirty: it builds the key → latest offset map over
// the dirty section, then rewrites every segment from the start of the log
// up to the dirty section's end in groups (each group at most
// segment.bytes and 2^31 offsets), keeping the latest record per key,
// tombstones until their delete horizon (delete.retention.ms after they
// were first cleaned) and producer state. Transactions are cleaned as
// Kafka's LogCleaner does: records of aborted transactions (known from the
// .txnindex) are removed and never count as a key's latest value; a
// transaction marker stays while any batch of its transaction does, then
// gets a delete horizon and goes once it has passed; each cleaned
// segment's .txnindex keeps the aborted transactions whose marker and some
// data remain. Each group is written to
// <base>.log.cleaned, fsynced, renamed to .swap, then swapped into the
// segment list under the writer mutex: the old segments are renamed
// .deleted and unlinked after file.delete.delay.ms (readers holding them
// keep reading the old bytes until they Release), and the .swap files lose
// their suffix. A crash anywhere leaves .cleaned files (discarded at open)
// or .swap files (the swap is completed at open).
//
// The returned stats' Range.End is the new checkpoint when err is nil.
// Nothing happens when the range has no dirty segment. Errors:
// ErrCleaningAborted when the log was truncated, had segments deleted or
// closed meanwhile; compaction.ErrMapFull when one dirty segment holds
// more keys than DedupeBufferSize allows; *record.CorruptError for a
// damaged batch; I/O errors. Safe to run concurrently with appends and
// reads; at most one Clean per log at a time (the caller's job).
func (l *Log) Clean(firstDirty int64, now time.Time, cc CleanerConfig) (CleanStats, error) {
	began := time.Now()
	st := CleanStats{Range: l.CleanableRange(firstDirty, now)}
	r := st.Range
	if r.End <= r.FirstDirty {
		return st, nil
	}
	cfg := l.cfg.Load()
	sl := l.segs.Load()
	// Hold every segment of the snapshot until done.
	held := make([]*segment.Segment, 0, len(sl.segs))
	defer func() {
		for _, s := range held {
			s.Release()
		}
	}()
	for _, s := range sl.segs {
		if !s.Acquire() {
			return st, ErrCleaningAborted
		}
		held = append(held, s)
	}
	endIdx := sl.find(r.End)
	dirtyIdx := sl.find(r.FirstDirty)
	if dirtyIdx < 0 || endIdx <= dirtyIdx || sl.segs[endIdx].BaseOffset() != r.End {
		return st, ErrCleaningAborted
	}
	mu := maxUncompressed(cfg)

	// The key map over the dirty section, sized to its offset count.
	if cc.DedupeBufferSize <= 0 {
		d := DefaultCleanerConfig()
		cc.DedupeBufferSize, cc.LoadFactor = d.DedupeBufferSize, d.LoadFactor
	}
	cio := cleanerIO{buf: cc.bufferSize(), throttle: cc.throttle}
	m := compaction.NewOffsetMap(compaction.SizeFor(r.End-r.FirstDirty, cc.LoadFactor, cc.DedupeBufferSize), cc.LoadFactor)
	// Records of aborted transactions never enter the map: an aborted
	// write of a key must not make the cleaner drop its committed value
	// (Kafka's buildOffsetMap skips the batches CleanedTransactionMetadata
	// calls aborted).
	mapTxns := compaction.NewTxnTracker(collectAbortedTxns(sl.segs[dirtyIdx:], r.FirstDirty, r.End))
	for i := dirtyIdx; i < endIdx; i++ {
		s := sl.segs[i]
		err := cio.forEachBatch(s, func(batch []byte, h record.Header) error {
			if h.IsControl() {
				mk, ok, err := record.ReadEndTxn(h, batch, mu)
				if err != nil {
					return err
				}
				mapTxns.OnControlBatch(&h, mk, ok)
				return nil
			}
			if mapTxns.OnDataBatch(&h) {
				return nil
			}
			return record.Records(h, batch, mu, func(rec *record.Record) error {
				if rec.Key == nil {
					return nil
				}
				return m.Put(rec.Key, rec.Offset(&h))
			})
		})
		if errors.Is(err, compaction.ErrMapFull) && i > dirtyIdx {
			// Clean what the map fully describes; the rest next pass.
			// (Keys of segment i already in the map are newer than any
			// record below it, so using them is still correct.)
			endIdx = i
			r.End = s.BaseOffset()
			st.Range.End = r.End
			break
		}
		if err != nil {
			return st, fmt.Errorf("clean %s: building offset map at segment %d: %w", l.tp, s.BaseOffset(), err)
		}
	}
	st.MapEntries = m.Len()

	// The last data batch of each producer below End, and its last control
	// batch: an empty header is kept for the last data batch if all its
	// records go, or for the last marker of a producer with no data batch,
	// so producer state (sequence, epoch) survives (Kafka's
	// lastRecordsOfActiveProducers). A later batch above End only makes
	// this conservative.
	type lastBatches struct{ data, control int64 }
	lastOfProducer := map[int64]*lastBatches{}
	for _, s := range sl.segs[:endIdx] {
		if err := s.WalkFrom(s.BaseOffset(), func(_ int64, h record.Header) bool {
			if h.HasProducerID() {
				lb := lastOfProducer[h.ProducerID]
				if lb == nil {
					lb = &lastBatches{data: -1, control: -1}
					lastOfProducer[h.ProducerID] = lb
				}
				if h.IsControl() {
					lb.control = h.BaseOffset
				} else {
					lb.data = h.BaseOffset
				}
			}
			return true
		}); err != nil {
			return st, fmt.Errorf("clean %s: %w", l.tp, err)
		}
	}
	// The filter follows transactions over everything it rewrites, from
	// the log's first segment (Kafka's cleanSegments collects each
	// segment's aborted transactions into one CleanedTransactionMetadata).
	fo := compaction.FilterOptions{
		Map: m, NowMs: now.UnixMilli(), DeleteRetentionMs: cfg.DeleteRetentionMs, MaxUncompressed: mu,
		Txns: compaction.NewTxnTracker(collectAbortedTxns(sl.segs, sl.segs[0].BaseOffset(), r.End)),
		RetainEmpty: func(h *record.Header) bool {
			lb := lastOfProducer[h.ProducerID]
			if lb == nil {
				return false
			}
			if h.IsControl() {
				return lb.data < 0 && lb.control == h.BaseOffset
			}
			return lb.data == h.BaseOffset
		},
	}
	next := 0
	for _, g := range groupSegments(sl.segs[:endIdx], cfg.SegmentBytes) {
		next += len(g)
		if err := l.cleanGroup(g, sl.segs[next], fo, cio, &st); err != nil {
			return st, err
		}
	}
	st.Duration = time.Since(began)
	l.logger.Info("cleaned log", zap.Int64("first_dirty", r.FirstDirty), zap.Int64("end", r.End),
		zap.Int64("bytes_read", st.BytesRead), zap.Int64("bytes_written", st.BytesWritten),
		zap.Int64("records_read", st.RecordsRead), zap.Int64("records_kept", st.RecordsKept),
		zap.Int64("aborted_dropped", st.AbortedDropped), zap.Int64("markers_dropped", st.MarkersDropped),
		zap.Int("segments_in", st.SegmentsIn), zap.Int("segments_out", st.SegmentsOut), zap.Duration("took", st.Duration))
	return st, nil
}

// groupSegments splits segs into runs whose total size fits maxBytes
// (segment.bytes, and 2 GiB for 32-bit positions) and whose offsets fit a
// 32-bit relative offset from the run's base (Kafka's groupSegmentsBySize).
func groupSegments(segs []*segment.Segment, maxBytes int64) [][]*segment.Segment {
	maxBytes = min(max(maxBytes, 1), math.MaxInt32)
	var out [][]*segment.Segment
	for i := 0; i < len(segs); {
		j, size := i+1, segs[i].Size()
		for j < len(segs) && size+segs[j].Size() <= maxBytes && segs[j].NextOffset()-1-segs[i].BaseOffset() <= math.MaxInt32 {
			size += segs[j].Size()
			j++
		}
		out = append(out, segs[i:j])
		i = j
	}
	return out
}

// cleanGroup rewrites one group of segments into a cleaned segment and
// swaps it in. next is the segment following the group in the snapshot:
// it must still follow it at swap time (else the log was truncated).
func (l *Log) cleanGroup(group []*segment.Segment, next *segment.Segment, fo compaction.FilterOptions, cio cleanerIO, st *CleanStats) (err error) {
	base := group[0].BaseOffset()
	cfg := l.cfg.Load()
	cleaned, err := segment.CreateWithSuffix(l.dir, base, l.segConfig(cfg), segment.CleanedSuffix)
	if err != nil {
		return fmt.Errorf("clean %s: %w", l.tp, err)
	}
	swapped := false
	defer func() {
		if !swapped {
			_ = cleaned.DeleteFiles()
			cleaned.Release()
		}
	}()
	out := make([]byte, 0, cio.buf)
	var lastMod time.Time
	var gs CleanStats
	var written int // bytes appended since the last throttle wait
	for _, s := range group {
		if t := s.LastModified(); t.After(lastMod) {
			lastMod = t
		}
		gs.BytesRead += s.Size()
		err := cio.forEachBatch(s, func(batch []byte, h record.Header) error {
			var bs compaction.BatchStats
			var ferr error
			out, bs, ferr = compaction.FilterBatch(out[:0], batch, h, fo)
			if ferr != nil {
				return ferr
			}
			gs.RecordsRead += int64(bs.RecordsRead)
			gs.RecordsKept += int64(bs.RecordsKept)
			gs.TombstonesDropped += int64(bs.TombstonesDropped)
			gs.AbortedDropped += int64(bs.AbortedDropped)
			if bs.MarkerDropped {
				gs.MarkersDropped++
			}
			if len(out) == 0 {
				return nil
			}
			nh := h
			if bs.Rewritten {
				if nh, ferr = record.ParseHeader(out); ferr != nil {
					return ferr
				}
			}
			if err := cleaned.Append(out, nh); err != nil {
				return err
			}
			// Writes count against the throttle a write buffer at a
			// time, as Kafka's cleanInto throttles each buffer it writes.
			if written += len(out); written >= cio.buf {
				w := written
				written = 0
				return cio.throttle.wait(w)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("clean %s: segment %d: %w", l.tp, s.BaseOffset(), err)
		}
	}
	if err := cio.throttle.wait(written); err != nil {
		return err
	}
	// The cleaned segment's .txnindex lists the aborted transactions whose
	// ABORT marker it keeps because some batch of the transaction is still
	// in the log (Kafka's cleaner writes them as it reads the markers); an
	// aborted transaction with no data left needs no entry: read_committed
	// readers have nothing of it to skip.
	for _, e := range fo.Txns.TakeRetained() {
		if err := cleaned.AppendAbortedTxn(e); err != nil {
			return err
		}
	}
	if err := cleaned.OnBecomeInactive(); err != nil {
		return err
	}
	if err := cleaned.Sync(); err != nil {
		return err
	}
	// Keep the newest modification time of the group (retention of
	// segments without timestamps judges by it, as Kafka preserves it).
	_ = os.Chtimes(cleaned.Files()[0], lastMod, lastMod)
	if err := cleaned.ReplaceSuffix(segment.CleanedSuffix, segment.SwapSuffix); err != nil {
		return err
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.segs.Load()
	i := cur.find(base)
	if l.closed.Load() || i < 0 || i+len(group) >= len(cur.segs) || cur.segs[i+len(group)] != next {
		return ErrCleaningAborted
	}
	for k, s := range group {
		if cur.segs[i+k] != s {
			return ErrCleaningAborted
		}
	}
	// From here the swap is committed on disk: old files go .deleted
	// (a crash now completes the swap at open), then .swap loses its suffix.
	now := time.Now()
	for _, s := range group {
		if err := s.RenameWithSuffix(segment.DeletedSuffix); err != nil {
			l.logger.Warn("renaming cleaned-away segment for deletion", zap.Error(err))
		}
	}
	if err := cleaned.ReplaceSuffix(segment.SwapSuffix, ""); err != nil {
		// The .swap stays; the next open completes the swap. Serve the
		// cleaned data now anyway: it is the same log.
		l.logger.Warn("completing cleaner swap", zap.Error(err))
	}
	segs := make([]*segment.Segment, 0, len(cur.segs)-len(group)+1)
	segs = append(segs, cur.segs[:i]...)
	segs = append(segs, cleaned)
	segs = append(segs, cur.segs[i+len(group):]...)
	l.publish(segs)
	swapped = true
	for _, s := range group {
		// The log's own reference goes after file.delete.delay.ms; the
		// cleaner's snapshot reference is released by Clean.
		l.pending = append(l.pending, pendingDelete{seg: s, due: now.Add(time.Duration(cfg.FileDeleteDelayMs) * time.Millisecond)})
	}
	gs.BytesWritten = cleaned.Size()
	st.BytesRead += gs.BytesRead
	st.BytesWritten += gs.BytesWritten
	st.RecordsRead += gs.RecordsRead
	st.RecordsKept += gs.RecordsKept
	st.TombstonesDropped += gs.TombstonesDropped
	st.AbortedDropped += gs.AbortedDropped
	st.MarkersDropped += gs.MarkersDropped
	st.SegmentsIn += len(group)
	st.SegmentsOut++
	return nil
}

// cleanerIO is one cleaning's I/O settings: its read/write buffer size
// (CleanerConfig.bufferSize) and the broker's cleaner throttle (nil: none).
type cleanerIO struct {
	buf      int
	throttle *cleanerThrottle
}

// forEachBatch reads the segment's committed bytes sequentially through a
// read buffer of c.buf bytes and calls fn with each batch
// (integrity-checked: CRC, magic) and its header. The batch slice is
// reused after fn returns. Reads count against the throttle a read buffer
// at a time (Kafka throttles each buffer it reads). Errors: fn's,
// *record.CorruptError, ErrCleaningAborted when the throttle is stopped.
func (c cleanerIO) forEachBatch(s *segment.Segment, fn func(batch []byte, h record.Header) error) error {
	f, err := s.Pin()
	if err != nil {
		return err
	}
	defer s.Unpin()
	size := s.Size()
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), c.buf)
	var buf []byte
	read := 0 // bytes read since the last throttle wait
	for pos := int64(0); pos < size; {
		if cap(buf) < record.LogOverhead {
			buf = make([]byte, 64<<10)
		}
		buf = buf[:record.LogOverhead]
		if _, err := io.ReadFull(r, buf); err != nil {
			return &record.CorruptError{Reason: fmt.Sprintf("segment %d: torn batch prefix at position %d", s.BaseOffset(), pos), Err: err}
		}
		length := int64(int32(uint32(buf[8])<<24 | uint32(buf[9])<<16 | uint32(buf[10])<<8 | uint32(buf[11])))
		if length < record.HeaderSize-record.LogOverhead || pos+record.LogOverhead+length > size {
			return &record.CorruptError{Reason: fmt.Sprintf("segment %d: batch length %d at position %d", s.BaseOffset(), length, pos), Field: "batchLength", Value: length}
		}
		total := int(length) + record.LogOverhead
		if cap(buf) < total {
			nb := make([]byte, total)
			copy(nb, buf)
			buf = nb
		}
		buf = buf[:total]
		if _, err := io.ReadFull(r, buf[record.LogOverhead:]); err != nil {
			return &record.CorruptError{Reason: fmt.Sprintf("segment %d: torn batch at position %d", s.BaseOffset(), pos), Err: err}
		}
		h, batch, err := record.ValidateIntegrity(buf)
		if err != nil {
			return err
		}
		if read += total; read >= c.buf {
			if err := c.throttle.wait(read); err != nil {
				return err
			}
			read = 0
		}
		if err := fn(batch, h); err != nil {
			return err
		}
		pos += int64(total)
	}
	return c.throttle.wait(read)
}

// collectAbortedTxns lists the aborted transactions of segs (a snapshot
// the caller holds, in offset order) that overlap [from, upper), as
// Log.CollectAbortedTxns does over the live segment list: from the
// segment holding from, until an entry's last stable offset reaches upper.
func collectAbortedTxns(segs []*segment.Segment, from, upper int64) []AbortedTxn {
	var out []AbortedTxn
	for _, s := range segs {
		if s.NextOffset() <= from {
			continue
		}
		var done bool
		if out, done = s.CollectAbortedTxns(out, from, upper); done {
			break
		}
	}
	return out
}

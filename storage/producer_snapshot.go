package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.uber.org/zap"
)

// ProducerSnapshotSuffix names a producer-state snapshot file,
// <offset, 20 digits>.snapshot in the partition directory (Kafka's
// LogFileUtils.PRODUCER_SNAPSHOT_FILE_SUFFIX): the producer state of every
// batch below offset. The partition layer encodes its content
// (partition.EncodeProducerSnapshot, Kafka's ProducerSnapshot version 1).
const ProducerSnapshotSuffix = ".snapshot"

// producerSnapshotsKept is how many snapshot files stay after a write:
// the newest is what a start loads, the one before it a fallback when the
// newest is corrupt.
const producerSnapshotsKept = 2

// snapshotOffsets lists the offsets of the partition's snapshot files,
// ascending.
func (l *Log) snapshotOffsets() ([]int64, error) {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, e := range ents {
		name := e.Name()
		if len(name) != 20+len(ProducerSnapshotSuffix) || !strings.HasSuffix(name, ProducerSnapshotSuffix) {
			continue
		}
		off, err := strconv.ParseInt(name[:20], 10, 64)
		if err != nil || off < 0 {
			continue
		}
		out = append(out, off)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func (l *Log) snapshotPath(offset int64) string {
	return filepath.Join(l.dir, fmt.Sprintf("%020d%s", offset, ProducerSnapshotSuffix))
}

// WriteProducerSnapshot stores data as the producer-state snapshot at
// offset (normally the log end offset: the state of every batch below it),
// written to a temporary file and renamed; older snapshots beyond the
// newest producerSnapshotsKept are deleted. It is not fsynced (a
// partition's stop or roll must not wait on the disk for it): a snapshot
// a power loss left torn fails its CRC at the next start, is deleted and
// the previous one (or a scan of the whole log) is used instead. Errors: ErrLogClosed, I/O errors
// (the caller keeps running: a missing snapshot only costs a longer scan).
func (l *Log) WriteProducerSnapshot(offset int64, data []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return ErrLogClosed
	}
	if offset > l.leo.Load() {
		return fmt.Errorf("producer snapshot at %d beyond the log end offset %d: %w", offset, l.leo.Load(), ErrOffsetOutOfRange)
	}
	return l.writeSnapshotLocked(offset, data)
}

func (l *Log) writeSnapshotLocked(offset int64, data []byte) error {
	p := l.snapshotPath(offset)
	tmp := p + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write producer snapshot %s: %w", p, err)
	}
	offs, err := l.snapshotOffsets()
	if err != nil {
		return nil // written; pruning waits for the next one
	}
	for i := 0; i < len(offs)-producerSnapshotsKept; i++ {
		_ = os.Remove(l.snapshotPath(offs[i]))
	}
	return nil
}

// LatestProducerSnapshot returns the newest producer-state snapshot at or
// below the log end offset (offset and content; ok false when none).
// Snapshots above the log end offset describe batches the log no longer
// has (a tail cut by recovery) and are deleted. read is called with each
// candidate, newest first, and decides whether it is usable (a corrupt
// one is deleted and the next older one tried), as Kafka's
// loadFromSnapshot does. Safe while the partition actor is the only
// writer; errors are I/O errors listing the directory.
func (l *Log) LatestProducerSnapshot(read func(offset int64, data []byte) error) (offset int64, ok bool, err error) {
	offs, err := l.snapshotOffsets()
	if err != nil {
		return -1, false, err
	}
	leo := l.leo.Load()
	for i := len(offs) - 1; i >= 0; i-- {
		p := l.snapshotPath(offs[i])
		if offs[i] > leo {
			_ = os.Remove(p)
			continue
		}
		data, rerr := os.ReadFile(p)
		if errors.Is(rerr, fs.ErrNotExist) {
			continue
		}
		if rerr == nil {
			rerr = read(offs[i], data)
		}
		if rerr != nil {
			l.logger.Warn("ignoring unusable producer snapshot", zap.String("file", p), zap.Error(rerr))
			_ = os.Remove(p)
			continue
		}
		return offs[i], true, nil
	}
	return -1, false, nil
}

// deleteSnapshotsAboveLocked removes the snapshots above offset (log
// truncation: they describe batches that are gone).
func (l *Log) deleteSnapshotsAboveLocked(offset int64) {
	offs, err := l.snapshotOffsets()
	if err != nil {
		return
	}
	for _, o := range offs {
		if o > offset {
			if err := os.Remove(l.snapshotPath(o)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				l.logger.Warn("deleting producer snapshot", zap.Int64("offset", o), zap.Error(err))
			}
		}
	}
}

// ActiveSegmentBase is the base offset of the active segment: the
// partition actor writes a producer snapshot when it changes (a roll), as
// Kafka does on roll.
func (l *Log) ActiveSegmentBase() int64 { return l.segs.Load().active().BaseOffset() }

// Package partitiontest is a small file-backed stand-in for the storage
// engine (one file per partition, every batch kept in memory as an index
// entry) that satisfies partition.Log and partition.LogStore. It exists so
// the partition actor and the data-path handlers can be tested with real
// files and real file regions independently of storage.LogManager; it has
// no segments, indexes, retention or recovery beyond re-reading its file.
package partitiontest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"gregor/partition"
	"gregor/storage"
	"gregor/storage/record"
)

type entry struct {
	base, last int64
	pos, size  int64
	maxTs      int64
	epoch      int32
}

// Log is one partition's log in a single file.
type Log struct {
	tp     partition.TopicPartition
	path   string
	mu     sync.Mutex
	f      *os.File
	idx    []entry
	start  int64
	end    int64
	size   int64
	cfg    storage.LogConfig
	closed atomic.Bool
	// FailAppends makes Append fail with an I/O-like error (fault injection).
	FailAppends atomic.Bool
}

func openLog(tp partition.TopicPartition, dir string, cfg storage.LogConfig) (*Log, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "00000000000000000000.log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	l := &Log{tp: tp, path: path, f: f, cfg: cfg}
	// Re-read the batches (no recovery: a torn tail is cut).
	var pos int64
	hdr := make([]byte, record.HeaderSize)
	for {
		if _, err := f.ReadAt(hdr, pos); err != nil {
			break
		}
		h, err := record.ParseHeader(hdr)
		if err != nil {
			break
		}
		sz := int64(h.Size())
		if st, _ := f.Stat(); pos+sz > st.Size() {
			break
		}
		if len(l.idx) == 0 {
			l.start = h.BaseOffset
		}
		l.idx = append(l.idx, entry{base: h.BaseOffset, last: h.LastOffset(), pos: pos, size: sz, maxTs: h.MaxTimestamp, epoch: h.PartitionLeaderEpoch})
		l.end = h.NextOffset()
		pos += sz
	}
	l.size = pos
	if err := f.Truncate(pos); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// Append implements partition.Log.
func (l *Log) Append(batch []byte, opts partition.AppendOptions) (storage.AppendInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return storage.AppendInfo{}, storage.ErrLogClosed
	}
	h, b, err := record.Validate(batch)
	if err != nil {
		return storage.AppendInfo{}, err
	}
	if !opts.PreValidated {
		if err := record.ValidateRecords(h, b, int(l.cfg.MaxMessageBytes)*4, l.cfg.Compact); err != nil {
			return storage.AppendInfo{}, err
		}
	}
	if l.cfg.MaxMessageBytes > 0 && len(b) > int(l.cfg.MaxMessageBytes) {
		return storage.AppendInfo{}, storage.ErrRecordTooLarge
	}
	if l.FailAppends.Load() {
		return storage.AppendInfo{}, fmt.Errorf("injected I/O error writing %s", l.path)
	}
	record.SetBaseOffset(b, l.end)
	record.SetPartitionLeaderEpoch(b, opts.LeaderEpoch)
	appendTime := int64(-1)
	if opts.LogAppendTime >= 0 {
		record.SetLogAppendTime(b, opts.LogAppendTime)
		appendTime = opts.LogAppendTime
	}
	if _, err := l.f.WriteAt(b, l.size); err != nil {
		return storage.AppendInfo{}, err
	}
	h, _ = record.ParseHeader(b)
	e := entry{base: l.end, last: h.LastOffset(), pos: l.size, size: int64(len(b)), maxTs: h.MaxTimestamp, epoch: opts.LeaderEpoch}
	l.idx = append(l.idx, e)
	l.size += e.size
	l.end = e.last + 1
	return storage.AppendInfo{FirstOffset: e.base, LastOffset: e.last, MaxTimestamp: h.MaxTimestamp, LogAppendTime: appendTime,
		RecordCount: h.RecordCount, Bytes: len(b), OffsetOfMaxTimestamp: e.last}, nil
}

// Read implements partition.Log with the agreed semantics (whole batches,
// KIP-74 first batch, upper bound).
func (l *Log) Read(offset, maxBytes, upperBound int64) (storage.FetchData, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return storage.FetchData{}, storage.ErrLogClosed
	}
	if offset < l.start || offset > l.end {
		return storage.FetchData{}, storage.ErrOffsetOutOfRange
	}
	var regs []storage.Region
	first := int64(-1)
	var total int64
	for _, e := range l.idx {
		if e.last < offset {
			continue
		}
		if e.last >= upperBound {
			break
		}
		if len(regs) > 0 && total+e.size > maxBytes {
			break
		}
		if first < 0 {
			first = e.base
		}
		regs = append(regs, storage.Region{File: l.f, Pos: e.pos, Len: e.size})
		total += e.size
	}
	return storage.NewFetchData(regs, first, nil), nil
}

func (l *Log) LogStartOffset() int64 { l.mu.Lock(); defer l.mu.Unlock(); return l.start }
func (l *Log) LogEndOffset() int64   { l.mu.Lock(); defer l.mu.Unlock(); return l.end }

// OffsetForTimestamp implements partition.Log (batch granularity).
func (l *Log) OffsetForTimestamp(ts int64) (int64, int64, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.idx {
		if e.last >= l.start && e.maxTs >= ts {
			return max(e.base, l.start), e.maxTs, true, nil
		}
	}
	return -1, -1, false, nil
}

// OffsetOfMaxTimestamp implements partition.Log (last offset of the batch
// with the largest max timestamp).
func (l *Log) OffsetOfMaxTimestamp() (int64, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	off, ts := int64(-1), int64(-1)
	for _, e := range l.idx {
		if e.maxTs > ts {
			off, ts = e.last, e.maxTs
		}
	}
	return off, ts
}

// ScanBatches implements partition.Log.
func (l *Log) ScanBatches(from int64, fn func(h record.Header) bool) error {
	l.mu.Lock()
	idx := append([]entry(nil), l.idx...)
	l.mu.Unlock()
	hdr := make([]byte, record.HeaderSize)
	for _, e := range idx {
		if e.last < from {
			continue
		}
		if _, err := l.f.ReadAt(hdr, e.pos); err != nil && err != io.EOF {
			return err
		}
		h, err := record.ParseHeader(hdr)
		if err != nil {
			return err
		}
		if !fn(h) {
			return nil
		}
	}
	return nil
}

// DeleteRecordsBefore implements partition.Log.
func (l *Log) DeleteRecordsBefore(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if offset > l.end {
		return storage.ErrOffsetOutOfRange
	}
	if offset > l.start {
		l.start = offset
	}
	return nil
}

// EndOffsetForEpoch implements partition.Log.
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.idx) - 1; i >= 0; i-- {
		if l.idx[i].epoch <= epoch {
			return l.idx[i].epoch, l.idx[i].last + 1
		}
	}
	return -1, -1
}

func (l *Log) Config() storage.LogConfig     { l.mu.Lock(); defer l.mu.Unlock(); return l.cfg }
func (l *Log) SetConfig(c storage.LogConfig) { l.mu.Lock(); l.cfg = c; l.mu.Unlock() }

// Close closes the file. Regions handed out become unreadable (the real
// storage reference-counts instead).
func (l *Log) Close() error {
	if l.closed.Swap(true) {
		return nil
	}
	return l.f.Close()
}

// Store is a partition.LogStore over Logs in one directory.
type Store struct {
	Dir string
	// HW is returned by HighWatermarks; CheckpointHighWatermarks stores into it.
	mu     sync.Mutex
	logs   map[partition.TopicPartition]*Log
	hw     map[partition.TopicPartition]int64
	Passes atomic.Int64 // retention + flush + checkpoint passes run
	closed []*Log
}

// NewStore opens a store in dir (t.TempDir()).
func NewStore(dir string) *Store {
	return &Store{Dir: dir, logs: map[partition.TopicPartition]*Log{}, hw: map[partition.TopicPartition]int64{}}
}

// Log returns the open log of tp (for fault injection in tests).
func (s *Store) Log(tp partition.TopicPartition) *Log {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs[tp]
}

func (s *Store) GetOrCreate(tp partition.TopicPartition, cfg storage.LogConfig) (partition.Log, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.logs[tp]; ok {
		return l, nil
	}
	l, err := openLog(tp, filepath.Join(s.Dir, tp.String()), cfg)
	if err != nil {
		return nil, err
	}
	s.logs[tp] = l
	return l, nil
}

func (s *Store) Reopen(tp partition.TopicPartition) (partition.Log, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.logs[tp]
	if !ok {
		return nil, fmt.Errorf("reopen %s: not open", tp)
	}
	// Keep the old file open until Close: in-flight reads may hold regions.
	old.closed.Store(true)
	s.closed = append(s.closed, old)
	l, err := openLog(tp, filepath.Join(s.Dir, tp.String()), old.cfg)
	if err != nil {
		return nil, err
	}
	s.logs[tp] = l
	return l, nil
}

func (s *Store) Delete(tp partition.TopicPartition) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.logs[tp]; ok {
		l.Close()
		delete(s.logs, tp)
	}
	return os.RemoveAll(filepath.Join(s.Dir, tp.String()))
}

func (s *Store) HighWatermarks() map[partition.TopicPartition]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[partition.TopicPartition]int64, len(s.hw))
	for k, v := range s.hw {
		out[k] = v
	}
	return out
}

func (s *Store) CheckpointHighWatermarks(hw map[partition.TopicPartition]int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range hw {
		s.hw[k] = v
	}
	return nil
}

func (s *Store) CheckpointRecoveryPoints() error      { s.Passes.Add(1); return nil }
func (s *Store) CheckpointLogStartOffsets() error     { s.Passes.Add(1); return nil }
func (s *Store) RetentionPass(time.Time) (int, error) { s.Passes.Add(1); return 0, nil }
func (s *Store) FlushPass(time.Time) error            { s.Passes.Add(1); return nil }

// Close closes every log.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.logs {
		l.Close()
	}
	for _, l := range s.closed {
		l.f.Close()
	}
	s.logs = map[partition.TopicPartition]*Log{}
	s.closed = nil
	return nil
}

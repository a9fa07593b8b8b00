package storage

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gregor/storage/record"
)

// TestConcurrentAppendReadRetention: one writer appends and rolls, readers
// read regions and check every byte through pread, retention deletes old
// segments underneath them.
func TestConcurrentAppendReadRetention(t *testing.T) {
	cfg := testConfig()
	cfg.RetentionMs = -1
	cfg.RetentionBytes = 16 << 10
	l := newTestLog(t, cfg)
	const batches, per = 2000, 4
	var done atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, 8)

	wg.Add(1)
	go func() { // writer
		defer wg.Done()
		defer done.Store(true)
		for i := 0; i < batches; i++ {
			b := makeBatch(t, batchSpec{n: per, valueSize: 40, baseTs: int64(i), tag: byte(i)})
			if _, err := l.Append(b, AppendOptions{LeaderEpoch: 1, LogAppendTime: -1}); err != nil {
				errc <- err
				return
			}
		}
	}()
	wg.Add(1)
	go func() { // retention
		defer wg.Done()
		for !done.Load() {
			if _, err := l.retain(time.Now()); err != nil {
				errc <- err
				return
			}
			time.Sleep(time.Millisecond) // pacing, not synchronisation
		}
	}()
	var reads atomic.Int64
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			off := int64(0)
			for !done.Load() || off < l.LogEndOffset() {
				fd, err := l.Read(off, 3000, l.LogEndOffset())
				if errors.Is(err, ErrOffsetOutOfRange) {
					off = l.LogStartOffset()
					continue
				}
				if err != nil {
					errc <- err
					return
				}
				if err := checkRegions(fd, off); err != nil {
					fd.Release()
					errc <- err
					return
				}
				reads.Add(1)
				if fd.Bytes > 0 {
					off = fd.FirstOffset + fd.Bytes/int64(len(makeBatch(t, batchSpec{n: per, valueSize: 40})))*per
				}
				fd.Release()
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if l.LogEndOffset() != batches*per || l.LogStartOffset() == 0 || reads.Load() == 0 {
		t.Fatalf("LEO %d start %d reads %d", l.LogEndOffset(), l.LogStartOffset(), reads.Load())
	}
}

// checkRegions preads every region and checks each batch: valid CRC,
// contiguous offsets from the first, and values derived from the batch
// index (tag = base/4).
func checkRegions(fd FetchData, want int64) error {
	next := fd.FirstOffset
	if fd.Bytes > 0 && (next > want || want-next >= 4) {
		return fmt.Errorf("read at %d started at batch %d", want, next)
	}
	for _, r := range fd.Regions {
		buf := make([]byte, r.Len)
		if _, err := r.File.ReadAt(buf, r.Pos); err != nil {
			return fmt.Errorf("pread: %w", err)
		}
		for len(buf) > 0 {
			h, b, err := record.Validate(buf)
			if err != nil {
				return fmt.Errorf("batch at %d: %w", next, err)
			}
			if h.BaseOffset != next {
				return fmt.Errorf("batch base %d, want %d", h.BaseOffset, next)
			}
			tag := byte(h.BaseOffset / 4)
			err = record.Records(h, b, 1<<20, func(rec *record.Record) error {
				if rec.Value[0] != tag+byte(rec.OffsetDelta) {
					return fmt.Errorf("offset %d: value %d, want %d", rec.Offset(&h), rec.Value[0], tag+byte(rec.OffsetDelta))
				}
				return nil
			})
			if err != nil {
				return err
			}
			next = h.NextOffset()
			buf = buf[len(b):]
		}
	}
	return nil
}

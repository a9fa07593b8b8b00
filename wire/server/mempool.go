package server

import (
	"context"
	"sync"
)

// memPool bounds the bytes of requests read, from every connection of the
// server together, and not yet answered (queued.max.request.bytes), as
// Kafka's SimpleMemoryPool in non-strict mode: a reader may take a frame's
// bytes whenever any memory is left, even more than is left (so one frame
// of socket.request.max.bytes is always readable), and waits while none
// is. The writer gives the bytes back once the request's response has been
// written (or abandoned). A nil *memPool is unbounded.
type memPool struct {
	mu    sync.Mutex
	avail int64         // may go negative (non-strict)
	freed chan struct{} // closed and replaced whenever memory is given back
}

func newMemPool(capacity int64) *memPool {
	if capacity <= 0 {
		return nil
	}
	return &memPool{avail: capacity, freed: make(chan struct{})}
}

// acquire takes n bytes, waiting while the pool is exhausted; false when
// ctx ends first.
func (p *memPool) acquire(ctx context.Context, n int64) bool {
	if p == nil {
		return true
	}
	for {
		p.mu.Lock()
		if p.avail > 0 {
			p.avail -= n
			p.mu.Unlock()
			return true
		}
		ch := p.freed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// release gives n bytes back and wakes the waiting readers.
func (p *memPool) release(n int64) {
	if p == nil || n == 0 {
		return
	}
	p.mu.Lock()
	p.avail += n
	close(p.freed)
	p.freed = make(chan struct{})
	p.mu.Unlock()
}

// available is the memory left (negative when over-committed); the
// capacity when unbounded is not tracked, so nil reports -1.
func (p *memPool) available() int64 {
	if p == nil {
		return -1
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.avail
}

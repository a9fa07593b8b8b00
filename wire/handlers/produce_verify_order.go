package handlers

import (
	"sync"
	"time"

	"gregor/wire"
)

// Pipelined transactional produces and KIP-890 verification.
//
// Kafka reads a connection's next request only once the previous one is
// answered (the socket server mutes the channel), so a producer's second
// batch reaches the partition after its first is in the log and the
// transaction is ongoing: it needs no verification. Here requests of one
// connection are handled concurrently; several batches of consecutive
// sequences may each be sent back for verification, and the
// coordinator's answers come back in any order. Were the verified batches
// sent to the partition in that order, a later sequence could arrive
// before the first and be refused OUT_OF_ORDER_SEQUENCE_NUMBER, which
// transactional clients treat as fatal. So each transactional produce
// takes a place in its producer's queue in arrival order (on the reader
// goroutine) and sends its verified batches back to the partitions only
// once every earlier produce of that producer has sent its own or is
// done: the partitions see the verified batches in the order the
// producer sent them, as in Kafka.

// verifyOrder is the per-producer-id queue of transactional produces;
// its zero value is ready.
type verifyOrder struct {
	mu sync.Mutex
	// last is, per producer id, the turn of the latest produce queued.
	last map[int64]*turn
}

// turn is one produce's place in its producer's queue.
type turn struct {
	o    *verifyOrder
	pid  int64
	prev chan struct{} // closed when the previous produce is done with its turn; nil = first
	mine chan struct{}
	once sync.Once
}

// take queues a produce of producerID; call on the connection's reader
// goroutine, before the batches are sent to the partitions, and end the
// turn with done on every path.
func (o *verifyOrder) take(producerID int64) *turn {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.last == nil {
		o.last = make(map[int64]*turn)
	}
	t := &turn{o: o, pid: producerID, mine: make(chan struct{})}
	if p := o.last[producerID]; p != nil {
		t.prev = p.mine
	}
	o.last[producerID] = t
	return t
}

// wait waits until the previous produce is done with its turn, bounded by
// timeout, the connection's life and closing; false when cut short.
func (t *turn) wait(rc *wire.RequestContext, timeout time.Duration, closing <-chan struct{}) bool {
	if t == nil || t.prev == nil {
		return true
	}
	select {
	case <-t.prev:
		return true
	default:
	}
	var done <-chan struct{}
	if rc.Ctx != nil {
		done = rc.Ctx.Done()
	}
	tm := time.NewTimer(timeout)
	defer tm.Stop()
	select {
	case <-t.prev:
		return true
	case <-tm.C:
	case <-done:
	case <-closing:
	}
	return false
}

// done ends the turn (idempotent; nil-safe): the next produce may send.
func (t *turn) done() {
	if t == nil {
		return
	}
	t.once.Do(func() {
		t.o.mu.Lock()
		if t.o.last[t.pid] == t {
			delete(t.o.last, t.pid)
		}
		t.o.mu.Unlock()
		close(t.mine)
	})
}

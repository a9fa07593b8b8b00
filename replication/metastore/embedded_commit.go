package metastore

import (
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// The embedded store's group commit. Every write is a writeReq whose apply
// runs on one committer goroutine with the tree's lock held. The committer
// takes all the writes queued while the previous commit was on disk, so N
// concurrent writers pay for about one fsync, not N, and each is answered
// only after its change is durable. Reads take the same lock, so they wait
// for a commit in progress rather than see a change before it is on disk
// (the old snapshot store held the lock while it wrote, too).

// committer is the queue of writes and the goroutine that commits them.
type committer struct {
	qmu     sync.Mutex
	queue   []*writeReq
	qclosed bool
	kick    chan struct{} // buffered 1: something was queued
	stop    chan struct{} // closed by stopCommitter
	stopped chan struct{} // closed when the loop has returned
	commits int64         // transactions committed (under Embedded.mu; read by tests and benchmarks)
}

// writeReq is one write: apply checks it against the tree and, only when
// every check passes, changes the tree through the batch (a failed check
// changes nothing). done receives its outcome.
type writeReq struct {
	apply func(b *batch) error
	done  chan error
}

// batch gathers what the writes of one commit did: the paths whose
// stored node changed, how to undo each change, the watch events to fire
// once the commit is durable.
type batch struct {
	e      *Embedded
	dirty  map[string]struct{}
	undo   []func()
	events []pendingEvent
}

type pendingEvent struct {
	m map[string][]chan Event
	p string
	t EventType
}

func (e *Embedded) startCommitter() {
	e.kick = make(chan struct{}, 1)
	e.stop = make(chan struct{})
	e.stopped = make(chan struct{})
	go e.commitLoop()
}

// stopCommitter refuses new writes, fails the queued ones with ErrClosed
// (e.closed is set) and waits for the goroutine to end.
func (e *Embedded) stopCommitter() {
	e.qmu.Lock()
	e.qclosed = true
	e.qmu.Unlock()
	close(e.stop)
	<-e.stopped
}

// write queues apply and waits until it is durable or failed.
func (e *Embedded) write(apply func(b *batch) error) error {
	req := &writeReq{apply: apply, done: make(chan error, 1)}
	e.qmu.Lock()
	if e.qclosed {
		e.qmu.Unlock()
		return ErrClosed
	}
	e.queue = append(e.queue, req)
	e.qmu.Unlock()
	select {
	case e.kick <- struct{}{}:
	default: // a kick is pending: the committer will see this request too
	}
	return <-req.done
}

func (e *Embedded) commitLoop() {
	defer close(e.stopped)
	for {
		select {
		case <-e.kick:
			e.commit(e.takeQueue())
		case <-e.stop:
			e.commit(e.takeQueue()) // each fails with ErrClosed
			return
		}
	}
}

func (e *Embedded) takeQueue() []*writeReq {
	e.qmu.Lock()
	defer e.qmu.Unlock()
	q := e.queue
	e.queue = nil
	return q
}

// commit applies reqs in order, writes the nodes they changed in one
// bbolt transaction (which fsyncs before it returns), then fires their
// watches and answers them. When the transaction fails, every change of
// the batch is undone and every request in it gets the error, even one
// whose own check had failed against changes that are now undone.
func (e *Embedded) commit(reqs []*writeReq) {
	if len(reqs) == 0 {
		return
	}
	e.mu.Lock()
	b := &batch{e: e, dirty: map[string]struct{}{}}
	errs := make([]error, len(reqs))
	for i, r := range reqs {
		if e.closed {
			errs[i] = ErrClosed
			continue
		}
		errs[i] = r.apply(b)
	}
	var err error
	if len(b.dirty) > 0 {
		if err = e.persist(b.dirty); err == nil {
			e.commits++
		}
	}
	if err != nil {
		for i := len(b.undo) - 1; i >= 0; i-- {
			b.undo[i]()
		}
		for i := range errs {
			errs[i] = err
		}
	} else {
		for _, ev := range b.events {
			e.fire(ev.m, ev.p, ev.t)
		}
	}
	e.mu.Unlock()
	for i, r := range reqs {
		r.done <- errs[i]
	}
}

// persist writes the current state of the dirty paths: a persistent node
// is put, a deleted (or ephemeral) one deleted. e.mu is held.
func (e *Embedded) persist(dirty map[string]struct{}) error {
	err := e.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNodes)
		for p := range dirty {
			var err error
			if n, ok := e.nodes[p]; ok && !n.ephemeral {
				err = b.Put([]byte(p), encodeNode(n))
			} else {
				err = b.Delete([]byte(p))
			}
			if err != nil {
				return fmt.Errorf("node %q: %w", p, err)
			}
		}
		if e.failCommit != nil {
			return e.failCommit()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("metastore: commit to %s: %w", e.file, err)
	}
	return nil
}

// checkKey refuses a persistent path that bbolt cannot store as a key, so
// that it fails alone, in its check, rather than its whole batch.
func checkKey(p string) error {
	if len(p) > bolt.MaxKeySize {
		return fmt.Errorf("%w: a path of %d bytes (the embedded store keeps at most %d)", ErrInvalidPath, len(p), bolt.MaxKeySize)
	}
	return nil
}

// addNode creates p under its existing parent (the caller checked).
func (b *batch) addNode(p string, data []byte, ephemeral bool) {
	nodes := b.e.nodes
	parent := nodes[Parent(p)]
	nodes[p] = &node{data: clone(data), ephemeral: ephemeral, children: map[string]struct{}{}}
	parent.children[Base(p)] = struct{}{}
	b.undo = append(b.undo, func() { delete(nodes, p); delete(parent.children, Base(p)) })
	if !ephemeral {
		b.dirty[p] = struct{}{}
	}
	b.events = append(b.events,
		pendingEvent{b.e.dataW, p, EventNodeCreated},
		pendingEvent{b.e.childW, Parent(p), EventNodeChildrenChanged})
}

// setNode replaces n's data and bumps its version.
func (b *batch) setNode(p string, n *node, data []byte) {
	oldData, oldVersion := n.data, n.version
	n.data, n.version = clone(data), n.version+1
	b.undo = append(b.undo, func() { n.data, n.version = oldData, oldVersion })
	if !n.ephemeral {
		b.dirty[p] = struct{}{}
	}
	b.events = append(b.events, pendingEvent{b.e.dataW, p, EventNodeDataChanged})
}

// deleteNode removes the childless node p (the caller checked).
func (b *batch) deleteNode(p string) {
	nodes := b.e.nodes
	n := nodes[p]
	parent := nodes[Parent(p)]
	delete(nodes, p)
	delete(parent.children, Base(p))
	b.undo = append(b.undo, func() { nodes[p] = n; parent.children[Base(p)] = struct{}{} })
	if !n.ephemeral {
		b.dirty[p] = struct{}{}
	}
	b.events = append(b.events,
		pendingEvent{b.e.dataW, p, EventNodeDeleted},
		pendingEvent{b.e.childW, p, EventNodeDeleted},
		pendingEvent{b.e.childW, Parent(p), EventNodeChildrenChanged})
}

// bumpSeq advances the sequential-child counter of the node at p; it is
// persisted even for an ephemeral child, so numbers are never reused.
func (b *batch) bumpSeq(p string, n *node) {
	n.cseq++
	b.undo = append(b.undo, func() { n.cseq-- })
	b.dirty[p] = struct{}{}
}

package handlers

import (
	"context"
	"sync"

	"gregor/wire"
)

// tasks owns the goroutines handlers start to answer a request Later
// (acks=all produce, fetch long polls, auto-creation, DeleteRecords, admin
// operations): Close cancels their context and waits for them, so none
// outlives the broker's shutdown and reaches a controller, replica manager
// or log that is already closed. The zero value is ready to use.
type tasks struct {
	mu     sync.Mutex
	wg     sync.WaitGroup
	ctx    context.Context // cancelled by close; nil until first use
	cancel context.CancelFunc
	closed bool
}

// init sets up the context (tasks.mu held).
func (ts *tasks) init() {
	if ts.ctx == nil {
		ts.ctx, ts.cancel = context.WithCancel(context.Background())
	}
}

// add counts one goroutine about to start; false once close has begun
// (nothing was counted).
func (ts *tasks) add() bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return false
	}
	ts.wg.Add(1)
	return true
}

// close cancels the context and waits for every goroutine add counted.
func (ts *tasks) close() {
	ts.mu.Lock()
	ts.init()
	ts.closed = true
	ts.cancel()
	ts.mu.Unlock()
	ts.wg.Wait()
}

// spawn runs fn on a goroutine Close waits for; fn should return soon
// after closing() is closed. Once Close has begun fn runs on the caller's
// goroutine instead, so that it still settles what it owns (a produce's
// in-flight appends) without a goroutine escaping; the server is closed
// before the handlers, so no request normally arrives then.
func (b *Broker) spawn(fn func()) {
	if !b.tasks.add() {
		fn()
		return
	}
	go func() {
		defer b.tasks.wg.Done()
		fn()
	}()
}

// later answers with what fn returns, computed by spawn.
func (b *Broker) later(fn func() wire.Response) wire.Reply {
	ch := make(chan wire.Response, 1)
	b.spawn(func() { ch <- fn() })
	return wire.Later(ch)
}

// closing is closed when Close begins.
func (b *Broker) closing() <-chan struct{} {
	b.tasks.mu.Lock()
	defer b.tasks.mu.Unlock()
	b.tasks.init()
	return b.tasks.ctx.Done()
}

// tasksContext is cancelled when Close begins.
func (b *Broker) tasksContext() context.Context {
	b.tasks.mu.Lock()
	defer b.tasks.mu.Unlock()
	b.tasks.init()
	return b.tasks.ctx
}

// Close cancels the goroutines handlers started to answer requests and
// waits until every one has returned. Call it after the listeners are
// closed (their connections' contexts are cancelled then, which ends
// produce waits and fetch long polls) and before the controller, replica
// manager and logs those goroutines use. Handle still answers afterwards,
// on the caller's goroutine. Idempotent.
func (b *Broker) Close() {
	b.tasks.close()
}

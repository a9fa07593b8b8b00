package handlers

import (
	"testing"
	"time"

	"gregor/wire"
)

// TestVerifyOrderTurns: a producer's produces take turns in arrival
// order; one waits until the previous is done (not before), another
// producer's never waits, done twice is harmless, and the queue forgets a
// producer once its last turn is done.
func TestVerifyOrderTurns(t *testing.T) {
	var o verifyOrder
	rc := &wire.RequestContext{}
	a, b, c := o.take(1), o.take(1), o.take(2)
	if !a.wait(rc, time.Second, nil) || !c.wait(rc, time.Second, nil) {
		t.Fatal("a first turn waited")
	}
	got := make(chan bool, 1)
	go func() { got <- b.wait(rc, 10*time.Second, nil) }()
	select {
	case <-got:
		t.Fatal("second turn did not wait for the first")
	case <-time.After(50 * time.Millisecond): // a wait that must not end: no event to await
	}
	a.done()
	a.done()
	if !<-got {
		t.Fatal("second turn cut short")
	}
	held := o.take(3)
	if o.take(3).wait(rc, 10*time.Millisecond, nil) {
		t.Fatal("a turn behind one never done must give up at its timeout")
	}
	_ = held
	b.done()
	c.done()
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.last[1]; ok {
		t.Fatal("producer 1 still queued after its last turn")
	}
	if _, ok := o.last[2]; ok {
		t.Fatal("producer 2 still queued after its last turn")
	}
}

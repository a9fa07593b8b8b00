package partition

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Producer is what ProduceWait hands a produce to: Handle's
// Produce (the result arrives on req.Reply; req.Released is set by it).
type Producer interface {
	Produce(req *Produce)
}

// ProduceWait hands req to h and waits for its outcome until ctx ends,
// with the abandon/release protocol of Produce: a produce the
// actor has not started when ctx ends is abandoned (never appended); one
// it is appending is waited for (req.Batch, which may alias a request
// buffer, is still being read); one it has appended and that waits for the
// ISR (acks=-1: Kafka's delayed produce) is given up — the records stay in
// the leader's log and the answer is REQUEST_TIMED_OUT, as Kafka's
// delayed produce expiring. ProduceWait sets req.Reply (one slot). The
// result's Err is nil on success; BaseOffset is then the batch's first
// offset.
func ProduceWait(ctx context.Context, h Producer, req *Produce) ProduceResult {
	reply := make(chan ProduceResult, 1)
	req.Reply = reply
	h.Produce(req)
	select {
	case r := <-reply:
		return r
	case <-ctx.Done():
		return SettleExpired(req, reply)
	}
}

// SettleExpired settles a produce whose wait has run out (its request
// timed out, or the connection or coordinator went away): abandoned if
// the actor has not started it, else the outcome if it comes before the
// actor releases the batch, else REQUEST_TIMED_OUT (appended, waiting for
// the ISR). reply is where the produce's result arrives. It returns at
// once unless the actor is appending the batch right now.
func SettleExpired(req *Produce, reply <-chan ProduceResult) ProduceResult {
	timedOut := ProduceResult{Err: kerr.RequestTimedOut, BaseOffset: -1, LogAppendTime: -1, LogStartOffset: -1}
	if req.Abandon() {
		return timedOut
	}
	select {
	case r := <-reply:
		return r
	case <-req.Released():
		select {
		case r := <-reply:
			return r
		default:
			return timedOut
		}
	}
}

// Deadline is one timeout shared by several produces handed to partition
// actors by one request (Produce, WriteTxnMarkers): Result waits for each
// outcome in turn until the deadline or done (the connection going away),
// and settles every later one at once with SettleExpired. Not safe for
// concurrent use; Stop releases its timer.
type Deadline struct {
	timer   *time.Timer
	done    <-chan struct{}
	expired bool
}

// NewDeadline starts a deadline of timeout; done (nil: never) ends it early.
func NewDeadline(timeout time.Duration, done <-chan struct{}) *Deadline {
	return &Deadline{timer: time.NewTimer(timeout), done: done}
}

// Result is req's outcome from reply, waited for until the deadline, else
// settled with SettleExpired.
func (d *Deadline) Result(req *Produce, reply <-chan ProduceResult) ProduceResult {
	if !d.expired {
		select {
		case r := <-reply:
			return r
		case <-d.timer.C:
			d.expired = true
		case <-d.done:
			d.expired = true
		}
	}
	return SettleExpired(req, reply)
}

// Stop releases the timer.
func (d *Deadline) Stop() { d.timer.Stop() }

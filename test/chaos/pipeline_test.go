package chaos

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// pipeline is a consume-transform-produce job on franz-go's
// GroupTransactSession: it reads the chaos topic in its own group and
// copies each record, value and partition unchanged, to the output topic
// inside a transaction that also commits the group's offsets. Every
// abortEvery-th transaction is aborted on purpose after its records
// reached the log, so the output holds aborted data a read_committed
// reader must skip. End failing (the transactional id fenced, the
// coordinator gone for longer than the retries) closes the session and
// starts a new one with the same transactional id, as an application
// restart would: its InitProducerId fences the old producer and aborts
// whatever it left open.
type pipeline struct {
	opts   []kgo.Opt
	out    string
	cancel context.CancelFunc
	done   chan struct{}

	commits, aborts, failedEnds, sessions, pollErrors atomic.Int64

	mu      sync.Mutex
	lastErr error
}

// abortEvery makes every abortEvery-th transaction an intentional abort.
const abortEvery = 7

// startPipeline starts the loop on its own goroutine; finish ends it.
func startPipeline(opts []kgo.Opt, out string) *pipeline {
	ctx, cancel := context.WithCancel(context.Background())
	p := &pipeline{opts: opts, out: out, cancel: cancel, done: make(chan struct{})}
	go p.loop(ctx)
	return p
}

func (p *pipeline) fail(err error) {
	p.mu.Lock()
	p.lastErr = err
	p.mu.Unlock()
}

func (p *pipeline) loop(ctx context.Context) {
	defer close(p.done)
	for ctx.Err() == nil {
		sess, err := kgo.NewGroupTransactSession(p.opts...)
		if err != nil {
			p.fail(err)
			return
		}
		p.sessions.Add(1)
		p.run(ctx, sess)
		sess.Close()
	}
}

// run drives one session until End fails or the pipeline stops.
func (p *pipeline) run(ctx context.Context, sess *kgo.GroupTransactSession) {
	for txn := 0; ctx.Err() == nil; txn++ {
		fs := sess.PollRecords(ctx, 200)
		if ctx.Err() != nil {
			return
		}
		for _, e := range fs.Errors() {
			p.pollErrors.Add(1)
			p.fail(e.Err)
		}
		if fs.NumRecords() == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			p.fail(err)
			p.failedEnds.Add(1)
			return
		}
		fs.EachRecord(func(r *kgo.Record) {
			// A background context: the produce is settled by End, never
			// failed by a cancelled context while it could be retried.
			sess.Produce(context.Background(), &kgo.Record{Topic: p.out, Partition: r.Partition, Value: r.Value}, nil)
		})
		how := kgo.TryCommit
		endCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if txn%abortEvery == abortEvery-1 {
			// The attempt's records reach the log first, so the abort
			// leaves data a read_committed reader must skip.
			_ = sess.Client().Flush(endCtx)
			how = kgo.TryAbort
		}
		committed, err := sess.End(endCtx, how)
		cancel()
		switch {
		case err != nil:
			p.fail(err)
			p.failedEnds.Add(1)
			return
		case committed:
			p.commits.Add(1)
		default:
			p.aborts.Add(1)
		}
	}
}

// finish stops the loop and waits for it (idempotent). Cancelling the
// context ends only a poll: a transaction in hand still ends by its own
// End, bounded by a minute, and no transaction begins after it.
func (p *pipeline) finish() {
	p.cancel()
	<-p.done
}

func (p *pipeline) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}

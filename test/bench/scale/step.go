package main

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// stepCtx bounds one step: its context ends at bound or when a watched
// broker exits (see watch), with the cause as its error.
type stepCtx struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	bound  time.Duration
	began  time.Time
	stopT  context.CancelFunc
}

func newStep(bound time.Duration) *stepCtx {
	ctx, cancel := context.WithCancelCause(context.Background())
	tctx, stopT := context.WithTimeoutCause(ctx, bound, fmt.Errorf("bound %v reached", bound))
	return &stepCtx{ctx: tctx, cancel: cancel, bound: bound, began: time.Now(), stopT: stopT}
}

// watch ends the step when n's process exits (a crash, or a kill not of
// the step's making must not leave the step polling until its bound).
func (s *stepCtx) watch(n *node) {
	p := n.proc
	go func() {
		select {
		case <-p.Done():
			s.cancel(fmt.Errorf("broker %d exited (%v); log: %s", n.id, p.Cmd.ProcessState, n.logTail(3)))
		case <-s.ctx.Done():
		}
	}()
}

func (s *stepCtx) elapsed() time.Duration { return time.Since(s.began) }

// err is why the step ended early, or err itself when the context is
// still live.
func (s *stepCtx) err(err error) error {
	if err == nil {
		return nil
	}
	if c := context.Cause(s.ctx); c != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return c
	}
	return err
}

func (s *stepCtx) done() {
	s.stopT()
	s.cancel(nil)
}

package partition

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// fakeProducer answers a produce with result, or holds it (nil result).
type fakeProducer struct {
	result *ProduceResult
	got    *Produce
}

func (f *fakeProducer) Produce(req *Produce) {
	f.got = req
	if f.result != nil {
		req.Reply <- *f.result
	}
}

func TestProduceWaitReturnsTheActorsResult(t *testing.T) {
	want := ProduceResult{BaseOffset: 17, LogAppendTime: -1, LogStartOffset: 3}
	f := &fakeProducer{result: &want}
	r := ProduceWait(context.Background(), f, &Produce{Acks: -1})
	if r != want || f.got == nil || f.got.Reply == nil {
		t.Fatalf("result %+v, want %+v", r, want)
	}
	f.result = &ProduceResult{Err: kerr.NotEnoughReplicas, BaseOffset: -1}
	if r := ProduceWait(context.Background(), f, &Produce{Acks: -1}); r.Err != kerr.NotEnoughReplicas {
		t.Fatalf("error result %+v", r)
	}
}

func TestProduceWaitAbandonsAnUnstartedProduceWhenItsContextEnds(t *testing.T) {
	f := &fakeProducer{} // never starts it
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := &Produce{Acks: -1}
	r := ProduceWait(ctx, f, req)
	if r.Err != kerr.RequestTimedOut || r.BaseOffset != -1 {
		t.Fatalf("result %+v, want REQUEST_TIMED_OUT", r)
	}
	// Abandoned for good: the actor would skip it.
	if !req.Abandon() {
		t.Fatal("produce not abandoned")
	}
}

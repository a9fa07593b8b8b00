package handlers

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"gregor/config"
	"gregor/partition"
	"gregor/replication/metadata"
	"gregor/storage"
	"gregor/wire"
)

// blockingTopics is a TopicSource whose AutoCreateTopics blocks until
// proceed is closed (only Snapshot and AutoCreateTopics are called).
type blockingTopics struct {
	TopicSource
	entered chan struct{}
	proceed chan struct{}
}

func (f *blockingTopics) Snapshot() *metadata.Snapshot {
	return &metadata.Snapshot{Topics: map[string]*metadata.Topic{}, TopicsByID: map[[16]byte]*metadata.Topic{}}
}

func (f *blockingTopics) AutoCreateTopics(names []string) map[string]error {
	f.entered <- struct{}{}
	<-f.proceed
	return map[string]error{}
}

// blockingReplicas is a ReplicaSource whose first DeleteRecords blocks
// until proceed is closed (only DeleteRecords is called).
type blockingReplicas struct {
	ReplicaSource
	entered chan struct{}
	proceed chan struct{}
	calls   atomic.Int32
}

func (f *blockingReplicas) DeleteRecords(storage.TopicPartition, int64, time.Duration) partition.DeleteRecordsResult {
	if f.calls.Add(1) == 1 {
		f.entered <- struct{}{}
		<-f.proceed
	}
	return partition.DeleteRecordsResult{LowWatermark: 5}
}

// wait fails t unless ch delivers within 10 s.
func wait[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not within 10 s", what)
	}
}

// closeAfterBlocked starts b.Close while a handler goroutine is blocked in
// a dependency, checks Close does not return while it is, then unblocks
// it (close(proceed)) and waits for Close.
func closeAfterBlocked(t *testing.T, b *Broker, proceed chan struct{}) {
	t.Helper()
	closed := make(chan struct{})
	go func() { b.Close(); close(closed) }()
	wait(t, b.closing(), "Close to begin")
	select {
	case <-closed:
		t.Fatal("Close returned while a handler goroutine was still running")
	case <-time.After(100 * time.Millisecond): // a negative check, bounded
	}
	close(proceed)
	wait(t, closed, "Close after the handler goroutine was released")
}

// TestCloseWaitsForHandlerGoroutines: a Metadata request that
// auto-creates answers from a goroutine; Close waits for it (its answer
// is ready when Close returns, no goroutine is left), and a request after
// Close is answered on the caller's goroutine.
func TestCloseWaitsForHandlerGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := &blockingTopics{entered: make(chan struct{}, 1), proceed: make(chan struct{})}
	b := &Broker{Config: &config.Broker{AutoCreateTopicsEnable: true}, Log: zap.NewNop(), Topics: f}
	req := func() kmsg.Request {
		r := kmsg.NewPtrMetadataRequest()
		r.SetVersion(9)
		r.AllowAutoTopicCreation = true
		name := "auto"
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = &name
		r.Topics = append(r.Topics, rt)
		return r
	}
	rc := &wire.RequestContext{Ctx: context.Background(), Key: 3, Version: 9, Listener: "PLAINTEXT"}
	reply := b.Handle(rc, req())
	wait(t, f.entered, "AutoCreateTopics to be called")
	closeAfterBlocked(t, b, f.proceed)
	if _, ok := reply.TryResolve(); !ok {
		t.Fatal("Close returned before the Metadata goroutine answered")
	}
	reply = b.Handle(rc, req())
	if _, ok := reply.TryResolve(); !ok {
		t.Fatal("a request after Close was not answered on the caller's goroutine")
	}
	b.Close() // idempotent
}

// TestDeleteRecordsStopsOnClose: DeleteRecords works through its
// partitions on a goroutine; once Close has begun it leaves the rest
// unchanged (REQUEST_TIMED_OUT) instead of waiting on each in turn.
func TestDeleteRecordsStopsOnClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := &blockingReplicas{entered: make(chan struct{}, 1), proceed: make(chan struct{})}
	b := &Broker{Config: &config.Broker{}, Log: zap.NewNop(), Replicas: f}
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "t"
	for p := int32(0); p < 2; p++ {
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Partition, rp.Offset = p, 5
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	reply := b.Handle(&wire.RequestContext{Ctx: context.Background(), Key: 21}, req)
	wait(t, f.entered, "DeleteRecords of the first partition")
	closeAfterBlocked(t, b, f.proceed)
	r, ok := reply.TryResolve()
	if !ok {
		t.Fatal("Close returned before the DeleteRecords goroutine answered")
	}
	ps := r.Msg.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions
	if ps[0].ErrorCode != 0 || ps[0].LowWatermark != 5 {
		t.Errorf("partition 0 (begun before Close): %+v", ps[0])
	}
	if ps[1].ErrorCode != kerr.RequestTimedOut.Code || f.calls.Load() != 1 {
		t.Errorf("partition 1 (after Close began): %+v, %d DeleteRecords calls; want REQUEST_TIMED_OUT without a call", ps[1], f.calls.Load())
	}
}

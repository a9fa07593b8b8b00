package fetcher

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap/zaptest"

	"gregor/actors"
	"gregor/partition"
	"gregor/storage"
)

// promptly bounds each wait below on an event. It is well under every
// timeout a blocked fetcher would wait out (ListOffsets 10 s before,
// franz-go's request timeouts, Unfollow's 10 s fallback), so a fetcher
// waiting inside Receive fails the test instead of passing it slowly.
const promptly = 5 * time.Second

// silentLeader accepts connections on a loopback port and reads from them
// but never answers, as a leader that hangs. accepted delivers each
// connection once its first bytes arrived (a request is in flight);
// closed receives when the peer closed one.
type silentLeader struct {
	ln       net.Listener
	accepted chan struct{}
	closed   chan struct{}
}

func newSilentLeader(t *testing.T) *silentLeader {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &silentLeader{ln: ln, accepted: make(chan struct{}, 16), closed: make(chan struct{}, 16)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				first := true
				for {
					if _, err := c.Read(buf); err != nil {
						if errors.Is(err, io.EOF) || !errors.Is(err, net.ErrClosed) {
							s.closed <- struct{}{}
						}
						return
					}
					if first {
						first = false
						s.accepted <- struct{}{}
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return s
}

func (s *silentLeader) BrokerEndpoint(int32) (string, int32, bool) {
	return "127.0.0.1", int32(s.ln.Addr().(*net.TCPAddr).Port), true
}

// await fails the test unless ch delivers within promptly.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(promptly):
		t.Fatalf("no %s within %v", what, promptly)
		panic("unreachable")
	}
}

// fetcherPID is the PID of the fetcher named name ("fetcher-3-0").
func fetcherPID(sys *actor.ActorSystem, name string) *actor.PID {
	return actor.NewPID(sys.Address(), ManagerName+"/"+name)
}

// pingFetcher fails the test unless the fetcher handles a message promptly.
func pingFetcher(t *testing.T, sys *actor.ActorSystem, pid *actor.PID) {
	t.Helper()
	ack := make(chan struct{}, 1)
	sys.Root.Send(pid, &ping{ack: ack})
	await(t, ack, "answer from the fetcher")
}

// watchStop returns a channel closed when pid stops.
func watchStop(t *testing.T, sys *actor.ActorSystem, pid *actor.PID) <-chan struct{} {
	t.Helper()
	gone, watching := make(chan struct{}), make(chan struct{})
	probe := sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		switch m := ctx.Message().(type) {
		case *actor.Started:
			ctx.Watch(pid)
			close(watching)
		case *actor.Terminated:
			if m.Who.Equal(pid) {
				close(gone)
			}
		}
	}))
	t.Cleanup(func() { sys.Root.Stop(probe) })
	<-watching
	return gone
}

// followerOf starts a replica manager (broker 2) and a fetcher manager
// whose leader (broker 3) is at eps, and makes tps followers of it.
func followerOf(t *testing.T, eps partition.EndpointLookup, tps ...partition.TopicPartition) (*actor.ActorSystem, *partition.Manager, *Manager) {
	t.Helper()
	sys := actors.NewSystem(zaptest.NewLogger(t))
	logs, err := storage.NewLogManager(storage.LogManagerConfig{Dirs: []string{t.TempDir()}, Defaults: storage.DefaultLogConfig()})
	if err != nil {
		t.Fatal(err)
	}
	rm, err := partition.NewManager(partition.ManagerConfig{System: sys, Store: partition.StorageStore{M: logs}, BrokerID: 2})
	if err != nil {
		t.Fatal(err)
	}
	fm, err := Start(Config{System: sys, BrokerID: 2, Replicas: rm, Endpoints: eps, Backoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fm.Close(); rm.Close(); sys.Shutdown(); logs.Close() })
	for _, tp := range tps {
		if errs := rm.ApplyLeaderAndIsr([]partition.LeaderAndIsr{{TopicPartition: tp, Leader: 3, LeaderEpoch: 0,
			ISR: []int32{2, 3}, Replicas: []int32{2, 3}, MinInsyncReplicas: 1, Config: storage.DefaultLogConfig()}}); len(errs) != 0 {
			t.Fatal(errs)
		}
	}
	return sys, rm, fm
}

// TestFetcherAnswersManagerWhileLeaderNeverAnswers: a fetcher whose leader
// accepted the connection but never answers keeps handling its messages —
// a ping, a new partition, the removal of all of them — and stopping it
// cancels the request and closes the connection at once.
func TestFetcherAnswersManagerWhileLeaderNeverAnswers(t *testing.T) {
	leader := newSilentLeader(t)
	a := partition.TopicPartition{Topic: "silent", Partition: 0}
	b := partition.TopicPartition{Topic: "silent", Partition: 1}
	sys, _, fm := followerOf(t, leader, a)
	fm.Follow(a, 3, 0)
	await(t, leader.accepted, "request to the leader")
	pid := fetcherPID(sys, fm.Assigned(a))
	pingFetcher(t, sys, pid)

	fm.Follow(b, 3, 0)
	if got := fm.Assigned(b); got != "fetcher-3-0" {
		t.Fatalf("second partition assigned to %q, want fetcher-3-0", got)
	}
	pingFetcher(t, sys, pid)

	gone := watchStop(t, sys, pid)
	unfollowed := make(chan struct{})
	go func() { fm.Unfollow(a, b); close(unfollowed) }()
	await(t, unfollowed, "return of Unfollow")
	await(t, gone, "stop of the idle fetcher")
	await(t, leader.closed, "close of the connection to the leader")
	if got := fm.Assigned(a); got != "" {
		t.Fatalf("unfollowed partition still assigned to %q", got)
	}
}

// TestManagerCloseWithSilentLeader: Close stops a fetcher stuck on a
// leader that never answers, promptly, and closes its connection.
func TestManagerCloseWithSilentLeader(t *testing.T) {
	leader := newSilentLeader(t)
	a := partition.TopicPartition{Topic: "silent", Partition: 0}
	sys, _, fm := followerOf(t, leader, a)
	fm.Follow(a, 3, 0)
	await(t, leader.accepted, "request to the leader")
	gone := watchStop(t, sys, fetcherPID(sys, "fetcher-3-0"))
	closed := make(chan struct{})
	go func() { fm.Close(); close(closed) }()
	await(t, closed, "return of Close")
	await(t, gone, "stop of the fetcher")
	await(t, leader.closed, "close of the connection to the leader")
}

// outOfRangeSetup writes offsets 0..9 on leader 1 alone, deletes the
// records below 5, then adds broker 2 as a follower: its empty log is
// below the leader's log start (OFFSET_OUT_OF_RANGE).
func outOfRangeSetup(t *testing.T, c *cluster, tp partition.TopicPartition, beforeFollow func()) {
	t.Helper()
	c.apply(tp, 1, 0, []int32{1}, []int32{1}, 1)
	for i := 0; i < 10; i++ {
		if _, err := produce(t, c.brokers[1], tp, 1, 5*time.Second, "v"); err != nil {
			t.Fatal(err)
		}
	}
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.TimeoutMillis = 5000
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = tp.Topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = tp.Partition, 5
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, c.brokers[1].client.SeedBrokers()[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode); err != nil {
		t.Fatal(err)
	}
	if v := view(c.brokers[1], tp); v.LogStartOffset != 5 || v.LogEndOffset != 10 {
		t.Fatalf("leader log [%d, %d), want [5, 10)", v.LogStartOffset, v.LogEndOffset)
	}
	beforeFollow()
	c.apply(tp, 1, 1, []int32{1}, []int32{1, 2}, 1)
}

// TestOutOfRangeFollowerStartsAtLeaderLogStart: a follower behind the
// leader's log start resets to it (ListOffsets) and copies the rest.
func TestOutOfRangeFollowerStartsAtLeaderLogStart(t *testing.T) {
	c := newCluster(t, 1, 2)
	tp := partition.TopicPartition{Topic: "trimmed", Partition: 0}
	outOfRangeSetup(t, c, tp, func() {})
	eventually(t, 5*time.Second, "follower caught up", func() bool {
		v := view(c.brokers[2], tp)
		return v.LogStartOffset == 5 && v.LogEndOffset == 10 && v.HighWatermark == 10
	})
	got, want := batches(t, c.brokers[2], tp), batches(t, c.brokers[1], tp)
	if len(got) != 5 || len(want) != 5 || got[0] != want[0] || got[4] != want[4] {
		t.Fatalf("follower batches %v, leader %v", got, want)
	}
}

// TestFetcherAnswersWhileListOffsetsHangs: the out-of-range reset asks the
// leader's offsets off the actor: with the leader never answering
// ListOffsets the fetcher still answers, and Unfollow stops it promptly.
func TestFetcherAnswersWhileListOffsetsHangs(t *testing.T) {
	c := newCluster(t, 1, 2)
	tp := partition.TopicPartition{Topic: "trimmed", Partition: 0}
	outOfRangeSetup(t, c, tp, func() { c.brokers[1].gate.silent.Store(int32(kmsg.ListOffsets) + 1) })
	if k := await(t, c.brokers[1].gate.stuck, "ListOffsets request"); k != int16(kmsg.ListOffsets) {
		t.Fatalf("stuck on API key %d", k)
	}
	sys := c.brokers[2].sys
	pid := fetcherPID(sys, c.brokers[2].fm.Assigned(tp))
	pingFetcher(t, sys, pid)
	gone := watchStop(t, sys, pid)
	unfollowed := make(chan struct{})
	go func() { c.brokers[2].fm.Unfollow(tp); close(unfollowed) }()
	await(t, unfollowed, "return of Unfollow")
	await(t, gone, "stop of the idle fetcher")
	if v := view(c.brokers[2], tp); v.LogEndOffset != 0 {
		t.Fatalf("follower log end offset %d without the leader's offsets, want 0", v.LogEndOffset)
	}
}

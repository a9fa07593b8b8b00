package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/actors"
)

// Peers carries the controller's requests (LeaderAndIsr, UpdateMetadata,
// StopReplica) to the other brokers, Kafka's ControllerChannelManager: one
// ordered queue per broker, so a broker sees the controller's requests in
// the order they were decided.
type Peers interface {
	// AddBroker opens the channel to broker id at addr ("host:port");
	// re-adding an id with a new address replaces its channel.
	AddBroker(id int32, addr string)
	// RemoveBroker closes broker id's channel; queued requests are dropped
	// (the broker is dead; it gets the full state when it registers again).
	RemoveBroker(id int32)
	// Send queues req for broker id. done (may be nil) runs on the
	// channel's goroutine with the response, or with the error when the
	// channel was removed before delivery. Unknown ids call done with an error.
	Send(id int32, req kmsg.Request, done func(kmsg.Response, error))
	// Close removes every channel.
	Close()
}

// channelRequest is the message a channel actor receives.
type channelRequest struct {
	req  kmsg.Request
	done func(kmsg.Response, error)
}

// ChannelManager is the Peers implementation over the Kafka protocol: one
// protoactor actor per peer broker (named "controller-channel-<id>"),
// each owning a franz-go client to that broker, sending its requests one
// at a time and retrying a failed send every RetryBackoff until it succeeds
// or the broker is removed (Kafka's RequestSendThread). Safe for
// concurrent use.
type ChannelManager struct {
	system   *actor.ActorSystem
	selfID   int32
	log      *zap.Logger
	timeout  time.Duration // per attempt (controller.socket.timeout.ms)
	backoff  time.Duration
	mu       sync.Mutex
	channels map[int32]*channel
	stopping sync.WaitGroup // channels removed, still stopping (Close waits for them)
}

type channel struct {
	pid    *actor.PID
	addr   string
	cancel context.CancelFunc
}

// channelSupervision restarts a failed channel actor with backoff (100 ms
// doubling to 5 s, jittered) and never gives up: a stopped channel would
// leave its peer without LeaderAndIsr/UpdateMetadata until it re-registers.
// One shared value, so every channel has the same root guardian.
var channelSupervision = &actors.BackoffStrategy{Initial: 100 * time.Millisecond, Max: 5 * time.Second, MaxRetries: actors.NeverGiveUp, Window: time.Minute}

// NewChannelManager makes a channel manager spawning its actors in system.
// selfID names the client ("gregor-controller-<id>").
func NewChannelManager(system *actor.ActorSystem, selfID int32, log *zap.Logger) *ChannelManager {
	if log == nil {
		log = zap.NewNop()
	}
	return &ChannelManager{system: system, selfID: selfID, log: log, timeout: 30 * time.Second,
		backoff: 300 * time.Millisecond, channels: map[int32]*channel{}}
}

// AddBroker implements Peers.
func (m *ChannelManager) AddBroker(id int32, addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ch, ok := m.channels[id]; ok {
		if ch.addr == addr {
			return
		}
		m.removeLocked(id, false)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &channelActor{id: id, addr: addr, ctx: ctx, mgr: m, log: m.log.With(zap.Int32("peer", id))}
	props := actors.Props(m.log, func() actor.Actor { return a }, actor.WithGuardian(channelSupervision))
	pid, err := m.system.Root.SpawnNamed(props, fmt.Sprintf("controller-channel-%d-%d", id, time.Now().UnixNano()))
	if err != nil {
		cancel()
		m.log.Error("spawn controller channel", zap.Int32("peer", id), zap.Error(err))
		return
	}
	m.channels[id] = &channel{pid: pid, addr: addr, cancel: cancel}
}

// RemoveBroker implements Peers. It does not wait for the channel's actor
// to stop (the controller actor calls it): Close does.
func (m *ChannelManager) RemoveBroker(id int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.removeLocked(id, false)
}

// removeLocked stops broker id's channel; wait: until its actor stopped,
// else the stop is remembered for Close.
func (m *ChannelManager) removeLocked(id int32, wait bool) {
	ch, ok := m.channels[id]
	if !ok {
		return
	}
	delete(m.channels, id)
	ch.cancel() // ends a send in progress
	// Stop, not Poison: queued requests are for a dead broker.
	f := m.system.Root.StopFuture(ch.pid)
	if wait {
		_ = f.Wait()
		return
	}
	m.stopping.Add(1)
	go func() { defer m.stopping.Done(); _ = f.Wait() }()
}

// Send implements Peers.
func (m *ChannelManager) Send(id int32, req kmsg.Request, done func(kmsg.Response, error)) {
	m.mu.Lock()
	ch, ok := m.channels[id]
	m.mu.Unlock()
	if !ok {
		if done != nil {
			done(nil, fmt.Errorf("controller: no channel to broker %d", id))
		}
		return
	}
	m.system.Root.Send(ch.pid, &channelRequest{req: req, done: done})
}

// Close implements Peers.
func (m *ChannelManager) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id := range m.channels {
		m.removeLocked(id, true)
	}
	m.stopping.Wait()
}

// channelActor delivers requests to one peer in order. It blocks its
// mailbox while a request is in flight: that is the ordering guarantee.
type channelActor struct {
	id   int32
	addr string
	ctx  context.Context // cancelled by RemoveBroker
	mgr  *ChannelManager
	log  *zap.Logger
	cl   *kgo.Client
}

func (a *channelActor) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *channelRequest:
		resp, err := a.deliver(m.req)
		if m.done != nil {
			m.done(resp, err)
		}
	case *actor.Stopping, *actor.Restarting:
		if a.cl != nil {
			a.cl.Close()
			a.cl = nil
		}
	}
}

// deliver sends req until the peer answers or the channel is removed.
func (a *channelActor) deliver(req kmsg.Request) (kmsg.Response, error) {
	for attempt := 0; ; attempt++ {
		if err := a.ctx.Err(); err != nil {
			return nil, fmt.Errorf("controller: channel to broker %d closed: %w", a.id, err)
		}
		if a.cl == nil {
			cl, err := kgo.NewClient(kgo.SeedBrokers(a.addr), kgo.ClientID(fmt.Sprintf("gregor-controller-%d", a.mgr.selfID)),
				kgo.DialTimeout(5*time.Second))
			if err != nil {
				return nil, err // bad address: retrying cannot help
			}
			a.cl = cl
		}
		ctx, cancel := context.WithTimeout(a.ctx, a.mgr.timeout)
		resp, err := a.cl.SeedBrokers()[0].Request(ctx, req)
		cancel()
		if err == nil {
			return resp, nil
		}
		if attempt%10 == 0 {
			a.log.Warn("controller request failed, retrying", zap.Int16("key", req.Key()), zap.Error(err))
		}
		select {
		case <-a.ctx.Done():
		case <-time.After(a.mgr.backoff):
		}
	}
}

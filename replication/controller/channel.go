package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/wire/security/clientsec"
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
	timeout  time.Duration // per attempt, connect included (controller.socket.timeout.ms)
	backoff  time.Duration
	mu       sync.Mutex
	channels map[int32]*channel
	stopping sync.WaitGroup // channels removed, still stopping (Close waits for them)
	sends    sync.WaitGroup // send goroutines of every channel (Close waits for them)
	// security is the control-plane (else inter-broker) listener's
	// security; set before the first AddBroker, read-only after.
	security clientsec.Client
}

// SetSecurity sets the security the channels connect with: that of the
// listener AddBroker's addresses belong to (control.plane.listener.name,
// else inter.broker.listener.name). Call it before the first AddBroker.
func (m *ChannelManager) SetSecurity(sec clientsec.Client) { m.security = sec }

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
// selfID names the client ("gregor-controller-<id>"). Its connections are
// PLAINTEXT unless SetSecurity says otherwise.
func NewChannelManager(system *actor.ActorSystem, selfID int32, log *zap.Logger) *ChannelManager {
	if log == nil {
		log = zap.NewNop()
	}
	return &ChannelManager{system: system, selfID: selfID, log: log, timeout: 30 * time.Second,
		backoff: 300 * time.Millisecond, channels: map[int32]*channel{}}
}

// SetTimeout sets the bound of one send attempt, connecting included
// (controller.socket.timeout.ms, default 30 s; Kafka bounds the connect by
// it and the answer by request.timeout.ms, also 30 s). d <= 0 keeps the
// default. Call it before the first AddBroker.
func (m *ChannelManager) SetTimeout(d time.Duration) {
	if d > 0 {
		m.timeout = d
	}
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
	m.sends.Wait() // each ends with its channel's context, cancelled above
}

// channelActor delivers requests to one peer in order. Its mailbox never
// waits on the network: the request at the head of its queue is sent from
// a goroutine the manager owns (counted in sends, ended by the channel's
// context), which runs done and then tells the actor (channelSent) to send
// the next one. One request in flight at a time is the ordering guarantee
// (Kafka's RequestSendThread). The queue and the in-flight mark live in
// the actor value, which its producer hands back on a restart, so a
// restart (a /faults kill) loses no request and never sends two at once.
type channelActor struct {
	id   int32
	addr string
	ctx  context.Context // cancelled by RemoveBroker
	mgr  *ChannelManager
	log  *zap.Logger
	cl   *kgo.Client

	queue    []*channelRequest
	inflight bool
}

// channelSent tells a channel actor that the request at the head of its
// queue was delivered (or given up) and its done has run.
type channelSent struct{}

func (a *channelActor) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *channelRequest:
		a.queue = append(a.queue, m)
		a.sendNext(c)
	case *channelSent:
		a.inflight = false
		a.queue[0] = nil
		a.queue = a.queue[1:]
		a.sendNext(c)
	case *actor.Started:
		a.sendNext(c) // after a restart: resume the queue unless one is in flight
	case *actor.Stopping:
		// RemoveBroker and Close cancel a.ctx first; a send in flight sees
		// that (or the closed client) and ends.
		if a.cl != nil {
			a.cl.Close()
			a.cl = nil
		}
	}
}

// sendNext starts delivering the head of the queue unless a request is in
// flight or the queue is empty.
func (a *channelActor) sendNext(c actor.Context) {
	if a.inflight || len(a.queue) == 0 {
		return
	}
	m := a.queue[0]
	cl, err := a.client()
	if err != nil { // bad address: retrying cannot help
		a.queue[0] = nil
		a.queue = a.queue[1:]
		if m.done != nil {
			m.done(nil, err)
		}
		a.sendNext(c)
		return
	}
	a.inflight = true
	self, root := c.Self(), c.ActorSystem().Root
	a.mgr.sends.Add(1)
	go func() {
		defer a.mgr.sends.Done()
		defer root.Send(self, &channelSent{}) // even if done panics: the queue moves on
		resp, err := a.deliver(cl, m.req)
		if m.done != nil {
			defer func() {
				if r := recover(); r != nil { // a goroutine's panic would end the broker
					a.log.Error("controller request callback panicked", zap.Int16("key", m.req.Key()), zap.Any("panic", r))
				}
			}()
			m.done(resp, err)
		}
	}()
}

// client is the channel's franz-go client to the peer, made on first use
// (kgo dials lazily, so this does not wait on the network).
func (a *channelActor) client() (*kgo.Client, error) {
	if a.cl == nil {
		opts := append([]kgo.Opt{kgo.SeedBrokers(a.addr), kgo.ClientID(fmt.Sprintf("gregor-controller-%d", a.mgr.selfID))}, a.mgr.security.SetupOpts(a.mgr.timeout)...)
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return nil, err
		}
		a.cl = cl
	}
	return a.cl, nil
}

// deliver sends req through cl until the peer answers, the channel is
// removed or its client closed. It runs on a send goroutine and touches no
// actor state.
func (a *channelActor) deliver(cl *kgo.Client, req kmsg.Request) (kmsg.Response, error) {
	for attempt := 0; ; attempt++ {
		if err := a.ctx.Err(); err != nil {
			return nil, fmt.Errorf("controller: channel to broker %d closed: %w", a.id, err)
		}
		ctx, cancel := context.WithTimeout(a.ctx, a.mgr.timeout)
		resp, err := cl.SeedBrokers()[0].Request(ctx, req)
		cancel()
		if err == nil {
			return resp, nil
		}
		if errors.Is(err, kgo.ErrClientClosed) {
			return nil, fmt.Errorf("controller: channel to broker %d stopped: %w", a.id, err)
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

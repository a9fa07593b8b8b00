package controller

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/config"
	"gregor/partition"
	"gregor/replication/zkmeta"
)

// controlledShutdownLocked is the body of ControlledShutdown, run on the controller actor.
// ControlledShutdown is the controller side of a broker's controlled
// shutdown (API key 7; Kafka's KafkaController.doControlledShutdown):
// every partition with more than one replica that broker leads moves to
// another live ISR member (ISR minus the broker, leader epoch + 1); where
// it only follows, it leaves the ISR and gets StopReplica (keeping its
// log). It returns the partitions the broker still leads (no other ISR
// member alive). Errors: NOT_CONTROLLER; BROKER_NOT_AVAILABLE when the
// broker is not registered.
func (c *Controller) controlledShutdownLocked(brokerID int32) ([]partition.TopicPartition, error) {
	if !c.active {
		return nil, ErrNotController
	}
	if !c.live(brokerID) {
		return nil, errf(kerr.BrokerNotAvailable, "Broker %d is not registered.", brokerID)
	}
	c.shuttingDown[brokerID] = true
	c.log.Info("controlled shutdown", zap.Int32("broker", brokerID))
	eligible := func(id int32) bool { return c.live(id) && !c.shuttingDown[id] }
	var moved, stopped []partition.LeaderAndIsr
	var remaining []partition.TopicPartition
	// Plan every move, write them in batched transactions, then sort the
	// partitions by outcome.
	var ds []decision
	leads := map[partition.TopicPartition]bool{} // a leadership move, else an ISR shrink
	for _, n := range c.sortedTopics() {
		t := c.topics[n]
		for _, p := range t.sortedPartitions() {
			replicas, cur := t.assignment[p], t.state[p]
			if cur == nil || len(replicas) < 2 || !contains(replicas, brokerID) {
				continue
			}
			tp := partition.TopicPartition{Topic: n, Partition: p}
			isr := without(cur.ISR, brokerID)
			switch {
			case cur.Leader == brokerID:
				leader := int32(-1)
				for _, r := range replicas {
					if eligible(r) && contains(isr, r) {
						leader = r
						break
					}
				}
				if leader < 0 {
					remaining = append(remaining, tp)
					continue
				}
				leads[tp] = true
				ds = append(ds, decision{tp, func(cur PartitionLeadership) (PartitionLeadership, bool) {
					if cur.Leader != brokerID {
						return cur, false
					}
					return PartitionLeadership{Leader: leader, LeaderEpoch: cur.LeaderEpoch + 1, ISR: without(cur.ISR, brokerID)}, true
				}})
			case contains(cur.ISR, brokerID):
				ds = append(ds, decision{tp, func(cur PartitionLeadership) (PartitionLeadership, bool) {
					if !contains(cur.ISR, brokerID) || cur.Leader == brokerID {
						return cur, false
					}
					return PartitionLeadership{Leader: cur.Leader, LeaderEpoch: cur.LeaderEpoch + 1, ISR: without(cur.ISR, brokerID)}, true
				}})
			}
		}
	}
	failed := c.applyDecisions(ds)
	for _, d := range ds {
		t, err := c.topics[d.tp.Topic], failed[d.tp]
		switch {
		case leads[d.tp] && err != nil:
			c.log.Error("controlled shutdown: moving leadership failed", zap.Stringer("partition", d.tp), zap.Error(err))
			remaining = append(remaining, d.tp)
		case leads[d.tp]:
			moved = append(moved, c.stateOf(t, d.tp.Partition))
		case err != nil:
			c.log.Error("controlled shutdown: shrinking ISR failed", zap.Stringer("partition", d.tp), zap.Error(err))
		default:
			stopped = append(stopped, c.stateOf(t, d.tp.Partition))
		}
	}
	SortTPs(remaining)
	// The other replicas learn the new leaders and ISRs; the shutting-down
	// broker stops its replicas (keeping the logs), so it neither serves
	// as a stale leader nor fetches its way back into an ISR.
	all := append(moved, stopped...)
	others := map[int32]bool{}
	for _, id := range c.liveBrokers() {
		others[id] = id != brokerID
	}
	c.sendLeaderAndIsr(all, others)
	if len(all) > 0 {
		tps := make([]partition.TopicPartition, len(all))
		for i, s := range all {
			tps[i] = s.TopicPartition
		}
		if brokerID == c.cfg.BrokerID {
			c.stopLocalReplicas(tps, false, "controlled shutdown: stopping local replicas")
		} else {
			c.peers.Send(brokerID, c.stopReplicaRequest(tps, false), c.logFailure(brokerID, "StopReplica"))
		}
	}
	c.publish()
	c.log.Info("controlled shutdown step done", zap.Int32("broker", brokerID), zap.Int("leaders.moved", len(moved)),
		zap.Int("isr.left", len(stopped)), zap.Int("remaining", len(remaining)))
	return remaining, nil
}

// writeStateRetry applies decide to partition p's current state and
// writes the result, re-reading the znode after a version conflict.
func (c *Controller) writeStateRetry(t *topicState, p int32, decide func(PartitionLeadership) (PartitionLeadership, bool)) error {
	for attempt := 0; ; attempt++ {
		next, ok := decide(t.state[p].PartitionLeadership)
		if !ok {
			return nil
		}
		err := c.writeState(t, p, next)
		if err == nil || attempt >= 3 {
			return err
		}
		if rerr := c.reloadState(t, p); rerr != nil {
			return rerr
		}
		if t.state[p] == nil {
			return err
		}
	}
}

func without(s []int32, x int32) []int32 {
	out := make([]int32, 0, len(s))
	for _, v := range s {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}

// ShutdownOptions bound RequestControlledShutdown.
type ShutdownOptions struct {
	// MaxRetries is controlled.shutdown.max.retries (Kafka default 3):
	// the number of attempts, as Kafka counts it; 0 or less makes none.
	MaxRetries int
	// Backoff is controlled.shutdown.retry.backoff.ms (Kafka default 5000 ms).
	Backoff time.Duration
	// Timeout bounds one attempt, connecting included
	// (controller.socket.timeout.ms, default 30 s).
	Timeout time.Duration
}

// ShutdownOptionsFromBroker reads controlled.shutdown.max.retries,
// controlled.shutdown.retry.backoff.ms and controller.socket.timeout.ms
// from the broker's config.
func ShutdownOptionsFromBroker(b *config.Broker) ShutdownOptions {
	return ShutdownOptions{MaxRetries: b.ControlledShutdown.MaxRetries, Backoff: b.ControlledShutdown.RetryBackoff, Timeout: b.ControllerSocketTimeout}
}

// RequestControlledShutdown is the broker side of a controlled shutdown
// (Kafka's KafkaServer.controlledShutdown, run on SIGTERM before the
// broker stops): it asks the controller named in /controller to move
// leadership away from this broker, in-process when this broker is the
// controller, else with a ControlledShutdown request, retrying after
// Backoff while partitions remain or the controller is unreachable, at
// most MaxRetries attempts in all. ctx cancels it. It returns nil when no
// partition remains led by this broker.
func (c *Controller) RequestControlledShutdown(ctx context.Context, o ShutdownOptions) error {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.MaxRetries <= 0 {
		return errors.New("controller: controlled shutdown: controlled.shutdown.max.retries allows no attempt")
	}
	var last error
	for attempt := 0; attempt < o.MaxRetries; attempt++ {
		if attempt > 0 {
			t := time.NewTimer(o.Backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		remaining, err := c.controlledShutdownOnce(ctx, o.Timeout)
		if err == nil && remaining == 0 {
			c.log.Info("controlled shutdown succeeded")
			return nil
		}
		if err == nil {
			err = fmt.Errorf("%d partitions still led by this broker", remaining)
		}
		last = err
		c.log.Warn("controlled shutdown attempt failed", zap.Int("attempt", attempt+1), zap.Int("attempts", o.MaxRetries), zap.Error(err))
	}
	return fmt.Errorf("controller: controlled shutdown: %w", last)
}

func (c *Controller) controlledShutdownOnce(ctx context.Context, timeout time.Duration) (int, error) {
	data, _, err := c.store.Get(zkmeta.ControllerPath)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", zkmeta.ControllerPath, err)
	}
	ctrlID, err := zkmeta.DecodeController(data)
	if err != nil {
		return 0, err
	}
	if ctrlID == c.cfg.BrokerID {
		rem, err := c.ControlledShutdown(c.cfg.BrokerID)
		return len(rem), err
	}
	host, port, ok := c.BrokerEndpoint(ctrlID)
	if !ok {
		return 0, fmt.Errorf("controller %d has no known endpoint", ctrlID)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(host + ":" + strconv.Itoa(int(port))), kgo.ClientID(fmt.Sprintf("gregor-broker-%d", c.cfg.BrokerID))},
		c.security.SetupOpts(timeout)...)...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	req := kmsg.NewPtrControlledShutdownRequest()
	req.BrokerID = c.cfg.BrokerID
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	kresp, err := cl.SeedBrokers()[0].Request(rctx, req)
	if err != nil {
		return 0, err
	}
	resp := kresp.(*kmsg.ControlledShutdownResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return 0, err
	}
	return len(resp.PartitionsRemaining), nil
}

// HandleControlledShutdown serves a ControlledShutdown request (API key 7).
func (c *Controller) HandleControlledShutdown(req *kmsg.ControlledShutdownRequest) *kmsg.ControlledShutdownResponse {
	resp := req.ResponseKind().(*kmsg.ControlledShutdownResponse)
	remaining, err := c.ControlledShutdown(req.BrokerID)
	if err != nil {
		code, _ := Code(err)
		if errors.Is(err, ErrNotController) {
			code = kerr.NotController.Code
		}
		resp.ErrorCode = code
		return resp
	}
	for _, tp := range remaining {
		r := kmsg.NewControlledShutdownResponsePartitionsRemaining()
		r.Topic, r.Partition = tp.Topic, tp.Partition
		resp.PartitionsRemaining = append(resp.PartitionsRemaining, r)
	}
	return resp
}

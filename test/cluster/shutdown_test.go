package cluster

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gregor/replication/zkmeta"
	"gregor/test/harness"
)

// TestControlledShutdown sends SIGTERM to a broker that leads partitions
// (not the controller, so the controller's own failover does not mix in).
// While its process still runs, ZooKeeper's state znodes already name
// other leaders with bumped leader epochs and no ISR names it: leadership
// moved away before it stopped (controlled.shutdown.enable, Kafka's
// ControlledShutdown request). Its log says the controlled shutdown
// completed and the broker shut down cleanly, and it exits 0.
func TestControlledShutdown(t *testing.T) {
	c := startCluster(t, 3, nil, nil)
	const topic = "shutdown"
	const parts = 6
	c.createTopic(topic, parts, 3, nil)
	ctrl := c.controllerID()
	before := map[int32]zkmeta.PartitionState{}
	led := map[int32][]int32{}
	for p := int32(0); p < parts; p++ {
		s, _ := c.partitionState(topic, p)
		before[p] = s
		led[s.Leader] = append(led[s.Leader], p)
	}
	var victim int32 = -1
	for id := range c.brokers {
		if id != ctrl && len(led[id]) > 0 && (victim < 0 || id < victim) {
			victim = id
		}
	}
	if victim < 0 {
		t.Fatalf("no broker other than the controller %d leads a partition: %v", ctrl, led)
	}
	vb := c.brokers[victim]
	for _, p := range led[victim] {
		c.waitServing(topic, p, 20*time.Second)
	}
	t.Logf("controller %d; SIGTERM to broker %d, leader of partitions %v", ctrl, victim, led[victim])

	moved := func() (bool, string) {
		for p := int32(0); p < parts; p++ {
			s, ok := c.partitionState(topic, p)
			if !ok || s.Leader < 0 || s.Leader == victim || contains(s.ISR, victim) || s.LeaderEpoch <= before[p].LeaderEpoch {
				return false, fmt.Sprintf("p%d %+v (before %+v)", p, s, before[p])
			}
		}
		return true, ""
	}
	exited := make(chan bool, 1)
	go func() { exited <- vb.Signal(syscall.SIGTERM) }()
	sent := time.Now()
	var movedAt time.Duration = -1
	var last string
	deadline := time.After(40 * time.Second)
poll:
	for {
		select {
		case ok := <-exited:
			if !ok {
				t.Fatalf("broker %d did not exit within 30 s of SIGTERM", victim)
			}
			break poll
		case <-deadline:
			t.Fatal("SIGTERM: no exit within 40 s")
		default:
		}
		ok, s := moved()
		// The state was read before this check, so a running process
		// here means the move happened before the broker exited.
		if ok && vb.ExitCode() == -1 {
			movedAt = time.Since(sent)
			if v := <-exited; !v {
				t.Fatalf("broker %d did not exit within 30 s of SIGTERM", victim)
			}
			break
		}
		last = s
		time.Sleep(5 * time.Millisecond)
	}
	exitedAt := time.Since(sent)
	if movedAt < 0 {
		t.Fatalf("broker %d exited after %v while ZooKeeper still showed it leading or in an ISR: %s\n--- broker log ---\n%s",
			victim, exitedAt, last, tail(vb.Log(), 40))
	}
	t.Logf("leadership moved and ISRs shrank %v after SIGTERM; process exited after %v", movedAt.Round(time.Millisecond), exitedAt.Round(time.Millisecond))
	if code := vb.ExitCode(); code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0", code)
	}
	log := vb.Log()
	for _, want := range []string{"controlled shutdown succeeded", "controlled shutdown complete", "shut down cleanly"} {
		if !strings.Contains(log, want) {
			t.Errorf("broker log lacks %q:\n%s", want, tail(log, 40))
		}
	}
	if strings.Contains(log, "Proceeding to do an unclean shutdown") {
		t.Errorf("broker log reports an incomplete controlled shutdown:\n%s", tail(log, 40))
	}
	if n := c.controlledShutdownRequests(ctrl); n < 1 {
		t.Errorf("controller %d counted %v ControlledShutdown requests, want at least 1", ctrl, n)
	}
	// Each moved partition went to a replica that was in its ISR, and
	// the other brokers serve them.
	for _, p := range led[victim] {
		s, _ := c.partitionState(topic, p)
		if !contains(before[p].ISR, s.Leader) {
			t.Errorf("p%d moved to %d, not in its ISR %v", p, s.Leader, before[p].ISR)
		}
		if l := c.waitServing(topic, p, 20*time.Second); l == victim {
			t.Errorf("p%d still led by the stopped broker", p)
		}
		if code, _ := rawProduce(t, c.brokers[s.Leader].Addr(), topic, p, -1, 10*time.Second, "after"); code != 0 {
			t.Errorf("acks=all produce to p%d on its new leader %d: %s", p, s.Leader, codeName(code))
		}
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// controlShutdownRequests is how many ControlledShutdown requests broker
// id's admin listener counted, every version.
func (c *cluster) controlledShutdownRequests(id int32) float64 {
	c.t.Helper()
	var n float64
	for v := 0; v <= 3; v++ {
		x, _, err := harness.MetricValue(metricsHTTP, c.admins[id], "kafka_network_requestmetrics_requests_total",
			map[string]string{"request": "ControlledShutdown", "version": strconv.Itoa(v)})
		if err != nil {
			c.t.Fatalf("broker %d metrics: %v", id, err)
		}
		n += x
	}
	return n
}

// TestControlledShutdownDisabled: with controlled.shutdown.enable=false a
// SIGTERM stops a partition leader without a ControlledShutdown request
// (the controller counts none, where TestControlledShutdown's counts one);
// the controller moves its leaderships only once it is gone, as for a
// broker that died, and it still exits 0.
func TestControlledShutdownDisabled(t *testing.T) {
	c := startCluster(t, 3, map[string]string{"controlled.shutdown.enable": "false"}, nil)
	const topic = "noshutdown"
	c.createTopic(topic, 6, 3, nil)
	ctrl := c.controllerID()
	led := map[int32][]int32{}
	for p := int32(0); p < 6; p++ {
		s, _ := c.partitionState(topic, p)
		led[s.Leader] = append(led[s.Leader], p)
	}
	var victim int32 = -1
	for id := range c.brokers {
		if id != ctrl && len(led[id]) > 0 && (victim < 0 || id < victim) {
			victim = id
		}
	}
	if victim < 0 {
		t.Fatalf("no broker other than the controller %d leads a partition: %v", ctrl, led)
	}
	for _, p := range led[victim] {
		c.waitServing(topic, p, 20*time.Second)
	}
	vb := c.brokers[victim]
	if !vb.Signal(syscall.SIGTERM) {
		t.Fatalf("broker %d did not exit within 30 s of SIGTERM", victim)
	}
	if code := vb.ExitCode(); code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0", code)
	}
	log := vb.Log()
	if !strings.Contains(log, "controlled.shutdown.enable=false") || strings.Contains(log, "controlled shutdown succeeded") {
		t.Errorf("broker log does not say the controlled shutdown was skipped:\n%s", tail(log, 40))
	}
	for _, p := range led[victim] {
		if l := c.waitServing(topic, p, 30*time.Second); l == victim {
			t.Errorf("p%d still led by the stopped broker", p)
		}
	}
	if n := c.controlledShutdownRequests(ctrl); n != 0 {
		t.Errorf("controller %d counted %v ControlledShutdown requests, want 0", ctrl, n)
	}
}

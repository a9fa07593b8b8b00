package cluster

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestStoppedPartitionActorIsReportedOffline: an operator stops the
// leader's partition actor (POST /faults "stop", the same outage path as
// the supervisor giving up). The broker lives and reports the replica
// offline; within a bounded time the controller moves leadership to
// another ISR member (leader epoch + 1) with an ISR without the stopped
// replica, Metadata lists it in offline_replicas, produce and consume work
// on the new leader, and the metrics say 1 offline replica on the old
// leader and 1 under-replicated partition on the new one.
func TestStoppedPartitionActorIsReportedOffline(t *testing.T) {
	c, admins := startAdminCluster(t, 3)
	const topic = "offline"
	c.createTopic(topic, 1, 3, nil)
	old := c.waitServing(topic, 0, 30*time.Second)
	before, _ := c.partitionState(topic, 0)
	if code, _ := rawProduce(t, c.brokers[old].Addr(), topic, 0, -1, 10*time.Second, "a", "b"); code != 0 {
		t.Fatalf("produce before the stop: %s", codeName(code))
	}

	hc := &http.Client{Timeout: 10 * time.Second}
	body := fmt.Sprintf(`{"action":"stop","actor":"replica-manager/%s-0"}`, topic)
	resp, err := hc.Post(admins[old]+"/faults", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /faults: %s", resp.Status)
	}

	c.waitFor("another broker leading without the stopped replica in the ISR", 30*time.Second, func() (bool, string) {
		s, ok := c.partitionState(topic, 0)
		return ok && s.Leader >= 0 && s.Leader != old && !contains(s.ISR, old), fmt.Sprintf("%+v", s)
	})
	after, _ := c.partitionState(topic, 0)
	if after.LeaderEpoch <= before.LeaderEpoch || len(after.ISR) != 2 {
		t.Fatalf("state %+v after %+v: want a higher leader epoch and an ISR of the 2 others", after, before)
	}
	leader := c.waitServing(topic, 0, 30*time.Second)
	c.waitFor("offline_replicas in Metadata", 30*time.Second, func() (bool, string) {
		d, err := describe(t, c.brokers[leader], topic)
		if err != nil {
			return false, err.Error()
		}
		p := d.Partitions[0]
		return p.Leader == leader && len(p.OfflineReplicas) == 1 && p.OfflineReplicas[0] == old, fmt.Sprintf("%+v", p)
	})

	code, base := rawProduce(t, c.brokers[leader].Addr(), topic, 0, -1, 10*time.Second, "c")
	if code != 0 || base != 2 {
		t.Fatalf("produce to the new leader: %s at %d, want offset 2", codeName(code), base)
	}
	got := readPartition(t, c.seeds(), topic, 0, 3)
	if got[0] != "a" || got[1] != "b" || got[2] != "c" {
		t.Fatalf("consumed %v, want a b c", got)
	}

	if n := metric(t, c.brokers[old], "kafka_server_replicamanager_offline_replica_count"); n != 1 {
		t.Fatalf("offline_replica_count on the stopped replica's broker: %v, want 1", n)
	}
	c.waitFor("under_replicated_partitions 1 on the new leader", 30*time.Second, func() (bool, string) {
		n := metric(t, c.brokers[leader], "kafka_server_replicamanager_under_replicated_partitions")
		return n == 1, fmt.Sprint(n)
	})
	if c.brokers[old].ExitCode() != -1 {
		t.Fatalf("the broker with the stopped actor exited (%d)", c.brokers[old].ExitCode())
	}
}

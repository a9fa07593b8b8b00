package config

import (
	"strings"
	"testing"
	"time"
)

func TestAutoLeaderRebalanceConfig(t *testing.T) {
	b, err := Parse(map[string]string{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := b.AutoLeaderRebalance; !r.Enable || r.CheckInterval != 300*time.Second || r.PerBrokerPercentage != 10 {
		t.Fatalf("defaults %+v; want Kafka's true, 300 s, 10%%", r)
	}
	b, err = Parse(map[string]string{"auto.leader.rebalance.enable": "false",
		"leader.imbalance.check.interval.seconds": "5", "leader.imbalance.per.broker.percentage": "0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := b.AutoLeaderRebalance; r.Enable || r.CheckInterval != 5*time.Second || r.PerBrokerPercentage != 0 {
		t.Fatalf("parsed %+v", r)
	}
	for k, v := range map[string]string{"auto.leader.rebalance.enable": "yes",
		"leader.imbalance.check.interval.seconds": "0", "leader.imbalance.per.broker.percentage": "-1"} {
		if _, err := Parse(map[string]string{k: v}, nil); err == nil {
			t.Errorf("%s=%s accepted; it was silently ignored before these keys were parsed", k, v)
		}
	}
}

// replica.selector.class: null by default (leader only, as Kafka), Kafka's
// RackAwareReplicaSelector accepted, any other class refused at load.
func TestReplicaSelectorClass(t *testing.T) {
	b, err := Parse(map[string]string{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.ReplicaSelector != "" {
		t.Fatalf("default %q, want none (Kafka's null)", b.ReplicaSelector)
	}
	b, err = Parse(map[string]string{"replica.selector.class": " org.apache.kafka.common.replica.RackAwareReplicaSelector "}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.ReplicaSelector != RackAwareReplicaSelector {
		t.Fatalf("parsed %q", b.ReplicaSelector)
	}
	_, err = Parse(map[string]string{"replica.selector.class": "com.example.NearestSelector"}, nil)
	ve, ok := err.(*ValueError)
	if !ok || ve.Key != "replica.selector.class" || !strings.Contains(err.Error(), "only org.apache.kafka.common.replica.RackAwareReplicaSelector is supported") {
		t.Fatalf("custom selector: %v, want a ValueError naming replica.selector.class", err)
	}
}

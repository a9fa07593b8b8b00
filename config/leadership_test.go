package config

import (
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

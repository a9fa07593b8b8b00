package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"gregor/test/zkharness"
)

// TestClusterRackAwarePlacement: brokers 1 and 2 in rack-a, 3 in rack-b.
// The controller places RF 2 replicas rack-aware (Kafka's AdminUtils), so
// every partition has a replica on broker 3, which a rack-unaware
// assignment of 6 partitions would not give; Metadata shows the racks.
func TestClusterRackAwarePlacement(t *testing.T) {
	racks := map[int32]string{1: "rack-a", 2: "rack-a", 3: "rack-b"}
	c := startClusterEach(t, zkharness.Options{}, 3, nil, nil, func(id int32) map[string]string {
		return map[string]string{"broker.rack": racks[id]}
	})
	c.createTopic("racked", 6, 2, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := c.admin()
	defer adm.Close()
	var md kadm.Metadata
	c.waitFor("Metadata with 6 partitions", 30*time.Second, func() (bool, string) {
		var err error
		if md, err = adm.Metadata(ctx, "racked"); err != nil {
			return false, err.Error()
		}
		return len(md.Topics["racked"].Partitions) == 6, fmt.Sprint(len(md.Topics["racked"].Partitions))
	})
	for _, b := range md.Brokers {
		if b.Rack == nil || *b.Rack != racks[b.NodeID] {
			t.Errorf("broker %d rack %v, want %s", b.NodeID, b.Rack, racks[b.NodeID])
		}
	}
	td := md.Topics["racked"]
	for p, pd := range td.Partitions {
		seen := map[string]bool{}
		for _, r := range pd.Replicas {
			seen[racks[r]] = true
		}
		if len(pd.Replicas) != 2 || len(seen) != 2 {
			t.Errorf("partition %d replicas %v span racks %v; want both racks", p, pd.Replicas, seen)
		}
	}
	// CreatePartitions keeps the placement rack-aware.
	if _, err := adm.UpdatePartitions(ctx, 9, "racked"); err != nil {
		t.Fatal(err)
	}
	c.waitFor("9 partitions", 30*time.Second, func() (bool, string) {
		md, err := adm.Metadata(ctx, "racked")
		if err != nil {
			return false, err.Error()
		}
		ps := md.Topics["racked"].Partitions
		if len(ps) != 9 {
			return false, fmt.Sprint(len(ps))
		}
		for p, pd := range ps {
			seen := map[string]bool{}
			for _, r := range pd.Replicas {
				seen[racks[r]] = true
			}
			if len(seen) != 2 {
				t.Fatalf("added partition %d replicas %v on one rack", p, pd.Replicas)
			}
		}
		return true, ""
	})
}

package controller

import (
	"fmt"
	"testing"
	"time"

	"gregor/partition"
	"gregor/replication/metastore"
)

// BenchmarkCreateTopicsEmbedded20k creates 200 topics × 100 partitions
// (RF 1), ten topics per CreateTopics as a client batching them would,
// through the controller over the zero-config embedded store, with a fake
// replica manager: the controller and the store, no partition logs. It
// reports the whole run and the last request, which grows with the
// number of partitions already stored if a write costs O(all nodes).
// Run: go test -run '^$' -bench CreateTopicsEmbedded20k -benchtime 1x ./replication/controller/
func BenchmarkCreateTopicsEmbedded20k(b *testing.B) {
	const topics, partitions, perRequest = 200, 100, 10
	for range b.N {
		b.StopTimer()
		s, err := metastore.OpenEmbeddedDir(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		rm := &fakeRM{}
		c := New(s, rm, testConfig(), Options{})
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		began := time.Now()
		var last time.Duration
		for t := 0; t < topics; t += perRequest {
			var req []NewTopic
			for i := t; i < t+perRequest; i++ {
				req = append(req, NewTopic{Name: fmt.Sprintf("scale-%03d", i), NumPartitions: partitions, ReplicationFactor: 1})
			}
			t0 := time.Now()
			for _, r := range c.CreateTopics(req, false) {
				if r.Err != nil {
					b.Fatalf("%s: %v", r.Name, r.Err)
				}
			}
			last = time.Since(t0)
		}
		b.ReportMetric(time.Since(began).Seconds(), "s/20k-partitions")
		b.ReportMetric(float64(last.Milliseconds()), "ms/last-1k")
		b.StopTimer()
		c.Close()
		s.Close()
		b.StartTimer()
	}
}

// BenchmarkReassignStart10k: one AlterPartitionReassignments moving
// 10,000 partitions (100 topics × 100, RF 2 on brokers 1 and 2) to add
// broker 0 — the controller's phase 1 (assignments, epoch bumps,
// LeaderAndIsr to the peers) over the embedded store.
func BenchmarkReassignStart10k(b *testing.B) {
	const topics, partitions = 100, 100
	for range b.N {
		b.StopTimer()
		e, _ := startCluster3Over(b, nil)
		reqs := map[partition.TopicPartition][]int32{}
		for t := 0; t < topics; t++ {
			name := fmt.Sprintf("r-%03d", t)
			assignment := map[int32][]int32{}
			for p := int32(0); p < partitions; p++ {
				assignment[p] = []int32{1, 2}
				reqs[partition.TopicPartition{Topic: name, Partition: p}] = []int32{1, 2, 0}
			}
			if res := e.c.CreateTopics([]NewTopic{{Name: name, NumPartitions: -1, ReplicationFactor: -1, Assignment: assignment}}, false); res[0].Err != nil {
				b.Fatal(res[0].Err)
			}
		}
		b.StartTimer()
		errs, err := e.c.AlterPartitionReassignments(reqs)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		for tp, err := range errs {
			if err != nil {
				b.Fatalf("%v: %v", tp, err)
			}
		}
		e.stop()
		b.StartTimer()
	}
}

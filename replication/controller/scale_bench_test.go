package controller

import (
	"fmt"
	"testing"
	"time"

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

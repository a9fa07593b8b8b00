package metastore

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// Benchmarks of the embedded store at the size of a 50,000-partition
// cluster's ZooKeeper tree: 500 topics × 100 partitions in Kafka's layout
// (/brokers/topics/<t>, …/partitions, …/partitions/<p>, …/<p>/state) is
// 101,003 nodes. Run: go test -run '^$' -bench Embedded -benchtime 20x ./replication/metastore/

const (
	benchTopics     = 500
	benchPartitions = 100
)

func benchStatePath(t, p int) string {
	return fmt.Sprintf("/brokers/topics/bench-%03d/partitions/%d/state", t, p)
}

// openBench100k returns a store in a fresh directory holding the 101,003
// nodes (written in Multis of one topic each, as the controller does).
func openBench100k(b *testing.B) (*Embedded, string) {
	b.Helper()
	dir := b.TempDir()
	s, err := OpenEmbeddedDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	if err := EnsurePath(s, "/brokers/topics"); err != nil {
		b.Fatal(err)
	}
	state := []byte(`{"controller_epoch":1,"leader":0,"version":1,"leader_epoch":0,"isr":[0]}`)
	assign := []byte(`{"version":2,"partitions":{"0":[0]},"adding_replicas":{},"removing_replicas":{}}`)
	for t := range benchTopics {
		topic := fmt.Sprintf("/brokers/topics/bench-%03d", t)
		ops := []Op{&CreateOp{Path: topic, Data: assign}, &CreateOp{Path: topic + "/partitions"}}
		for p := range benchPartitions {
			ops = append(ops, &CreateOp{Path: fmt.Sprintf("%s/partitions/%d", topic, p)},
				&CreateOp{Path: benchStatePath(t, p), Data: state})
		}
		if _, err := s.Multi(ops...); err != nil {
			b.Fatal(err)
		}
	}
	return s, dir
}

func BenchmarkEmbeddedOpen100k(b *testing.B) {
	s, dir := openBench100k(b)
	n := len(s.nodes)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		s, err := OpenEmbeddedDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if len(s.nodes) != n {
			b.Fatalf("reopened %d nodes, want %d", len(s.nodes), n)
		}
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n), "nodes")
}

// One partition-state write, as the controller makes for a leader change.
func BenchmarkEmbeddedSet100k(b *testing.B) {
	s, _ := openBench100k(b)
	defer s.Close()
	data := []byte(`{"controller_epoch":1,"leader":0,"version":1,"leader_epoch":1,"isr":[0]}`)
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Set(benchStatePath(i%benchTopics, i/benchTopics%benchPartitions), data, AnyVersion); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEmbeddedCreate100k(b *testing.B) {
	s, _ := openBench100k(b)
	defer s.Close()
	b.ResetTimer()
	for i := range b.N {
		if err := s.Create(fmt.Sprintf("/brokers/topics/bench-%03d/new-%d", i%benchTopics, i), []byte("x"), false); err != nil {
			b.Fatal(err)
		}
	}
}

// 100 partition states in one Multi behind the controller-epoch check, as
// the controller writes a batch of leader changes.
func BenchmarkEmbeddedMulti100(b *testing.B) {
	s, _ := openBench100k(b)
	defer s.Close()
	if err := s.Create("/controller_epoch", []byte("1"), false); err != nil {
		b.Fatal(err)
	}
	data := []byte(`{"controller_epoch":1,"leader":0,"version":1,"leader_epoch":2,"isr":[0]}`)
	b.ResetTimer()
	for i := range b.N {
		ops := []Op{&CheckVersionOp{Path: "/controller_epoch", Version: 0}}
		t := i % benchTopics
		for p := range 100 {
			ops = append(ops, &SetOp{Path: benchStatePath(t, p), Data: data, Version: AnyVersion})
		}
		if _, err := s.Multi(ops...); err != nil {
			b.Fatal(err)
		}
	}
}

// Concurrent writers (b.SetParallelism × GOMAXPROCS goroutines) share
// commits: commits/op below 1 is the group commit at work.
func BenchmarkEmbeddedSetParallel100k(b *testing.B) {
	s, _ := openBench100k(b)
	defer s.Close()
	data := []byte(`{"controller_epoch":1,"leader":0,"version":1,"leader_epoch":1,"isr":[0]}`)
	var next atomic.Int64
	b.SetParallelism(16)
	before := s.commitCount()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(next.Add(1))
			if _, err := s.Set(benchStatePath(i%benchTopics, i/benchTopics%benchPartitions), data, AnyVersion); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(s.commitCount()-before)/float64(b.N), "commits/op")
}

package handlers

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/metadata"
	"gregor/wire"
)

// bigSnapshot is topics × partitions led by broker 1 of 3, RF 3.
func bigSnapshot(topics, partitions int) *metadata.Snapshot {
	s := &metadata.Snapshot{ControllerID: 1, ClusterID: "bench", Topics: map[string]*metadata.Topic{}, TopicsByID: map[[16]byte]*metadata.Topic{}}
	for id := int32(1); id <= 3; id++ {
		s.Brokers = append(s.Brokers, metadata.Broker{ID: id, Host: "127.0.0.1", Port: 9090 + id})
	}
	for i := 0; i < topics; i++ {
		t := &metadata.Topic{Name: fmt.Sprintf("topic-%03d", i)}
		t.ID[0], t.ID[1] = byte(i), byte(i>>8)
		for p := 0; p < partitions; p++ {
			t.Partitions = append(t.Partitions, metadata.Partition{Partition: int32(p), Leader: 1, LeaderEpoch: 3,
				Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}})
		}
		s.Topics[t.Name], s.TopicsByID[t.ID] = t, t
	}
	return s
}

// BenchmarkMetadataFull20k: a full Metadata v12 (every topic) over 200
// topics × 100 partitions, built and encoded as the connection's writer
// does, without an authorizer.
func BenchmarkMetadataFull20k(b *testing.B) {
	br := &Broker{Topics: snapshotTopics{s: bigSnapshot(200, 100)}}
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	rc := &wire.RequestContext{Key: 3, Version: 12, Listener: "PLAINTEXT"}
	b.ReportAllocs()
	var buf []byte
	for i := 0; i < b.N; i++ {
		resp, ok := handleMetadata(br, rc, req).TryResolve()
		if !ok {
			b.Fatal("metadata not answered at once")
		}
		m := resp.Msg.(*kmsg.MetadataResponse)
		if len(m.Topics) != 200 {
			b.Fatalf("%d topics", len(m.Topics))
		}
		buf = m.AppendTo(buf[:0])
	}
	b.SetBytes(int64(len(buf)))
}

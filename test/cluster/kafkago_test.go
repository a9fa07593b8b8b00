package cluster

import (
	"context"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

// TestClusterKafkaGoConsumerOffsets is kafka-go's own
// retrieve-committed-offsets scenario on three brokers: a Writer with its
// default acks=0 (fire and forget) produces, a group Reader commits every
// message, and Client.ConsumerOffsets reads the commits back through
// broker 1 (FindCoordinator, then OffsetFetch v5 to the coordinator).
// Gregor once answered acks=0 produces; kafka-go, which pipelines and
// reads no answer for them, then decoded a stray Produce response as its
// OffsetFetch's and failed with "unexpected EOF".
func TestClusterKafkaGoConsumerOffsets(t *testing.T) {
	c := startCluster(t, 3, map[string]string{"offsets.topic.num.partitions": "5"}, nil)
	const partitions, perPartition = 6, 4
	c.createTopic("kafkago", partitions, 1, nil)
	addr := c.brokers[1].Addr()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: "kafkago", Balancer: &kafka.RoundRobin{}, BatchSize: 1, Transport: tr}
	var msgs []kafka.Message
	for i := 0; i < partitions*perPartition; i++ {
		msgs = append(msgs, kafka.Message{Value: []byte{byte(i)}})
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{addr}, Topic: "kafkago", GroupID: "kafkago-g",
		MinBytes: 1, MaxBytes: 10e6, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	for i := 0; i < partitions*perPartition; i++ {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if err := r.CommitMessages(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	client := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 20 * time.Second, Transport: tr}
	offsets, err := client.ConsumerOffsets(ctx, kafka.TopicAndGroup{GroupId: "kafkago-g", Topic: "kafkago"})
	if err != nil {
		t.Fatal(err)
	}
	if len(offsets) != partitions {
		t.Fatalf("offsets for %d partitions, want %d: %v", len(offsets), partitions, offsets)
	}
	for p := 0; p < partitions; p++ {
		if offsets[p] != perPartition {
			t.Errorf("partition %d committed %d, want %d", p, offsets[p], perPartition)
		}
	}
}

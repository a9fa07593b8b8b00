package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"gregor/test/harness"
)

// TestLegacySarama: Sarama pinned to V0_8_2_0 (Produce v0 magic 0, Fetch
// v0, ListOffsets v0), V0_10_2_0 (Produce v2 magic 1, Fetch v3) and
// V0_11_0_0 (record batches) produces with every codec its version
// allows and consumes from the start with a partition consumer; each
// version also reads what the others wrote (old and new clients on one
// topic).
func TestLegacySarama(t *testing.T) {
	b := harness.StartBroker(t, nil)
	versions := []struct {
		name string
		v    sarama.KafkaVersion
	}{{"0.8.2", sarama.V0_8_2_0}, {"0.10.2", sarama.V0_10_2_0}, {"0.11.0", sarama.V0_11_0_0}}
	codecs := map[string]sarama.CompressionCodec{"none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP, "snappy": sarama.CompressionSnappy, "lz4": sarama.CompressionLZ4}
	const n = 40
	for codecName, codec := range codecs {
		topic := "sarama-" + codecName
		createTopic(t, b, topic, 1, nil)
		want := 0
		for _, ver := range versions {
			if codec == sarama.CompressionLZ4 && ver.v == sarama.V0_8_2_0 {
				continue // Sarama requires 0.10 for lz4
			}
			cfg := sarama.NewConfig()
			cfg.Version = ver.v
			cfg.Producer.Return.Successes = true
			cfg.Producer.Compression = codec
			cfg.Producer.Partitioner = sarama.NewManualPartitioner
			cfg.Producer.Flush.Messages = 10
			p, err := sarama.NewSyncProducer([]string{b.Addr()}, cfg)
			if err != nil {
				t.Fatalf("%s %s: producer: %v", ver.name, codecName, err)
			}
			msgs := make([]*sarama.ProducerMessage, n)
			for i := range msgs {
				msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: 0, Key: sarama.StringEncoder(fmt.Sprintf("k%d", i)), Value: sarama.StringEncoder(fmt.Sprintf("%s-%d", ver.name, i))}
			}
			// Bounded: one run once hung inside Sarama's SendMessages for the
			// whole test timeout; a minute fails fast with the broker's log.
			sent := make(chan error, 1)
			go func() { sent <- p.SendMessages(msgs) }()
			select {
			case err := <-sent:
				if err != nil {
					t.Fatalf("%s %s: send: %v", ver.name, codecName, err)
				}
			case <-time.After(time.Minute):
				log := b.Log()
				t.Fatalf("%s %s: SendMessages did not return in a minute; broker log tail:\n%s", ver.name, codecName, log[max(0, len(log)-4000):])
			}
			_ = p.Close()
			for i, m := range msgs {
				if m.Offset != int64(want+i) {
					t.Fatalf("%s %s: message %d at offset %d, want %d", ver.name, codecName, i, m.Offset, want+i)
				}
			}
			want += n
		}
		// Every version reads everything (its own and the others' records).
		for _, ver := range versions {
			if codec == sarama.CompressionLZ4 && ver.v == sarama.V0_8_2_0 {
				// Magic-0 lz4 carries the pre-0.10 header checksum (as
				// Kafka writes it), which Sarama's lz4 reader refuses:
				// Sarama supports lz4 from 0.10 only.
				continue
			}
			cfg := sarama.NewConfig()
			cfg.Version = ver.v
			cfg.Consumer.MaxWaitTime = 200 * time.Millisecond
			c, err := sarama.NewConsumer([]string{b.Addr()}, cfg)
			if err != nil {
				t.Fatalf("%s: consumer: %v", ver.name, err)
			}
			pc, err := c.ConsumePartition(topic, 0, sarama.OffsetOldest)
			if err != nil {
				t.Fatalf("%s %s: consume: %v", ver.name, codecName, err)
			}
			var got []*sarama.ConsumerMessage
			deadline := time.After(time.Minute)
			for len(got) < want {
				select {
				case m := <-pc.Messages():
					got = append(got, m)
				case err := <-pc.Errors():
					t.Fatalf("%s %s: %v", ver.name, codecName, err)
				case <-deadline:
					t.Fatalf("%s %s: read %d of %d", ver.name, codecName, len(got), want)
				}
			}
			_ = pc.Close()
			_ = c.Close()
			for i, m := range got {
				if m.Offset != int64(i) || string(m.Key) != fmt.Sprintf("k%d", i%n) {
					t.Fatalf("%s %s: message %d: offset %d key %q", ver.name, codecName, i, m.Offset, m.Key)
				}
				// Magic-0 messages (from 0.8.2) have no timestamp; others do.
				old := strings.HasPrefix(string(m.Value), "0.8.2-")
				if ver.v != sarama.V0_8_2_0 && !old && m.Timestamp.Before(time.Now().Add(-time.Hour)) {
					t.Fatalf("%s %s: message %d timestamp %v", ver.name, codecName, i, m.Timestamp)
				}
			}
		}
	}
}

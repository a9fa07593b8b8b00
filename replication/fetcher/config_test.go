package fetcher

import (
	"testing"
	"time"

	"gregor/config"
)

// ConfigFromBroker carries every replica.fetch.* / replica.socket.* key
// config.Parse read, zeros included (no defaults put back over them).
func TestConfigFromBroker(t *testing.T) {
	b, err := config.Parse(map[string]string{"broker.id": "7", "num.replica.fetchers": "3", "replica.fetch.wait.max.ms": "250",
		"replica.fetch.max.bytes": "0", "replica.fetch.backoff.ms": "0", "replica.socket.timeout.ms": "900",
		"replica.socket.receive.buffer.bytes": "-1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := ConfigFromBroker(b)
	c.defaults()
	if c.BrokerID != 7 || c.NumFetchers != 3 || c.MaxWait != 250*time.Millisecond || c.PartitionMaxBytes != 0 || c.Backoff != 0 ||
		c.SocketTimeout != 900*time.Millisecond || c.SocketReceiveBufferBytes != -1 {
		t.Fatalf("mapped %+v", c)
	}
	if c.MaxBytes != 10<<20 || c.MinBytes != 1 {
		t.Fatalf("Kafka's defaults not kept: %+v", c)
	}
}

func TestFetcherIndexMatchesKafka(t *testing.T) {
	// Kafka getFetcherId: Utils.abs(31 * topic.hashCode + partition) % n;
	// "orders".hashCode = -1008770331, so for partition 0 the value is
	// -1207109189: index 1 of 4, 2 of 3.
	if got := fetcherIndex(tp0, 4); got != 1 {
		t.Fatalf("index of orders-0 among 4: %d, want 1", got)
	}
	if got := fetcherIndex(tp0, 3); got != 2 {
		t.Fatalf("index of orders-0 among 3: %d, want 2", got)
	}
	if got := fetcherIndex(tp0, 1); got != 0 {
		t.Fatalf("index among 1: %d", got)
	}
}

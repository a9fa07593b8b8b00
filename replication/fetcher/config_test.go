package fetcher

import (
	"testing"
	"time"

	"gregor/config"
)

func TestConfigFromBroker(t *testing.T) {
	b := config.Defaults()
	b.BrokerID = 7
	b.NumReplicaFetchers = 3
	b.Raw = map[string]string{"replica.fetch.wait.max.ms": "250", "replica.fetch.max.bytes": "2048", "replica.fetch.backoff.ms": "junk"}
	c := ConfigFromBroker(b)
	if c.BrokerID != 7 || c.NumFetchers != 3 || c.MaxWait != 250*time.Millisecond || c.PartitionMaxBytes != 2048 {
		t.Fatalf("mapped %+v", c)
	}
	if c.Backoff != time.Second || c.MaxBytes != 10<<20 || c.MinBytes != 1 {
		t.Fatalf("defaults not kept: %+v", c)
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

package fetcher

import (
	"strconv"
	"strings"
	"time"

	"gregor/config"
)

// ConfigFromBroker maps the broker's replica fetcher settings onto a
// Config (System, Replicas, Endpoints and Logger are left to the caller):
// num.replica.fetchers, and from the raw properties replica.fetch.wait.max.ms,
// replica.fetch.min.bytes, replica.fetch.max.bytes,
// replica.fetch.response.max.bytes and replica.fetch.backoff.ms. Missing or
// unparsable values keep Kafka's defaults (see Config).
func ConfigFromBroker(b *config.Broker) Config {
	c := Config{BrokerID: b.BrokerID, NumFetchers: b.NumReplicaFetchers}
	num := func(key string) (int64, bool) {
		v, ok := b.Raw[key]
		if !ok {
			return 0, false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return n, err == nil && n > 0
	}
	if n, ok := num("replica.fetch.wait.max.ms"); ok {
		c.MaxWait = time.Duration(n) * time.Millisecond
	}
	if n, ok := num("replica.fetch.backoff.ms"); ok {
		c.Backoff = time.Duration(n) * time.Millisecond
	}
	if n, ok := num("replica.fetch.min.bytes"); ok && n <= 1<<31-1 {
		c.MinBytes = int32(n)
	}
	if n, ok := num("replica.fetch.max.bytes"); ok && n <= 1<<31-1 {
		c.PartitionMaxBytes = int32(n)
	}
	if n, ok := num("replica.fetch.response.max.bytes"); ok && n <= 1<<31-1 {
		c.MaxBytes = int32(n)
	}
	c.defaults()
	c.Logger = nil
	return c
}

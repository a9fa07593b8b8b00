package integration

import (
	"testing"
	"time"

	"gregor/test/harness"
)

// readAll reads topic from the start with the isolation level until it has
// seen want records or timeout passes, and returns the values.
func readAll(t *testing.T, b *harness.Broker, topic string, committed bool, want int, timeout time.Duration) []string {
	t.Helper()
	return harness.ReadValues(t, []string{b.Addr()}, topic, committed, want, timeout)
}

// TestGroupTransactSessionExactlyOnce runs franz-go's GroupTransactSession
// as a consume-transform-produce pipeline from in to out, aborting every
// third transaction: a read_committed reader of out sees every input
// exactly once, while a read_uncommitted one also sees the aborted
// attempts' records (so the aborts really wrote something).
func TestGroupTransactSessionExactlyOnce(t *testing.T) {
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "eos-in", 3, nil)
	createTopic(t, b, "eos-out", 3, nil)
	p := harness.Pipeline{Seeds: []string{b.Addr()}, TxnID: "eos-pipeline", Group: "eos-group", In: "eos-in", Out: "eos-out", N: 300}
	harness.ProduceInputs(t, p.Seeds, p.In, p.N)
	committed, aborted := p.Run(t)
	if committed != p.N || aborted == 0 {
		t.Fatalf("committed %d records in all (want %d) with %d aborted transactions (want some)", committed, p.N, aborted)
	}
	p.CheckOutput(t)
}

// TestConfluentKafkaTransactions drives librdkafka's transactional
// producer (Debian's python3-confluent-kafka): a committed transaction, an
// aborted one, and a read_committed consumer that sees only the committed
// records, while a read_uncommitted consumer sees both.
func TestConfluentKafkaTransactions(t *testing.T) {
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "rdk-txn", 2, nil)
	harness.ConfluentTransactions(t, b.Addr(), "rdk-txn", "rdk-tx")
}

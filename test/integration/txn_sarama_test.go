package integration

import (
	"testing"

	"gregor/test/harness"
)

// TestSaramaTransactionalProducer: Sarama's transactional SyncProducer
// commits one transaction and aborts another; a read_committed reader sees
// exactly the committed records, a read_uncommitted one both.
func TestSaramaTransactionalProducer(t *testing.T) {
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "sarama-txn", 2, nil)
	harness.SaramaTransactions(t, []string{b.Addr()}, "sarama-txn", "sarama-tx")
}

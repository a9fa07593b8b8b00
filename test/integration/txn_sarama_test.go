package integration

import (
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"gregor/test/harness"
)

// TestSaramaTransactionalProducer: Sarama's transactional SyncProducer
// commits one transaction and aborts another; a read_committed reader sees
// exactly the committed records, a read_uncommitted one both.
func TestSaramaTransactionalProducer(t *testing.T) {
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "sarama-txn", 2, nil)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.ClientID = "sarama-txn-test"
	cfg.Producer.Idempotent = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Transaction.ID = "sarama-tx"
	cfg.Producer.Transaction.Timeout = 20 * time.Second
	cfg.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer([]string{b.Addr()}, cfg)
	if err != nil {
		t.Fatalf("sarama producer: %v", err)
	}
	defer p.Close()
	send := func(prefix string, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "sarama-txn", Key: sarama.StringEncoder("k" + strconv.Itoa(i%3)), Value: sarama.StringEncoder(prefix + strconv.Itoa(i))}); err != nil {
				t.Fatalf("send %s%d: %v", prefix, i, err)
			}
		}
	}
	if err := p.BeginTxn(); err != nil {
		t.Fatal(err)
	}
	send("commit-", 30)
	if err := p.CommitTxn(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if err := p.BeginTxn(); err != nil {
		t.Fatal(err)
	}
	send("abort-", 10)
	if err := p.AbortTxn(); err != nil {
		t.Fatalf("abort: %v", err)
	}
	if err := p.BeginTxn(); err != nil {
		t.Fatal(err)
	}
	send("last-", 1)
	if err := p.CommitTxn(); err != nil {
		t.Fatalf("commit: %v", err)
	}

	got := readAll(t, b, "sarama-txn", true, 31, 30*time.Second)
	if len(got) != 31 {
		t.Fatalf("read_committed saw %d records, want 31: %v", len(got), got)
	}
	for _, v := range got {
		if v[0] == 'a' {
			t.Fatalf("read_committed saw aborted record %q", v)
		}
	}
	if all := readAll(t, b, "sarama-txn", false, 41, 30*time.Second); len(all) != 41 {
		t.Fatalf("read_uncommitted saw %d records, want 41", len(all))
	}
}

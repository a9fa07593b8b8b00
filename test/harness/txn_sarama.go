package harness

import (
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// SaramaTransactions drives Sarama's transactional SyncProducer (acks=all,
// idempotent, transactional id tid) against the brokers at seeds on
// topic: a committed transaction of 30 records, an aborted one of 10, a
// committed one of 1. t fails unless a read_committed reader sees exactly
// the 31 committed records and a read_uncommitted one all 41.
func SaramaTransactions(t testing.TB, seeds []string, topic, tid string) {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.ClientID = "sarama-txn-test"
	cfg.Producer.Idempotent = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Transaction.ID = tid
	cfg.Producer.Transaction.Timeout = 20 * time.Second
	cfg.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer(seeds, cfg)
	if err != nil {
		t.Fatalf("sarama producer: %v", err)
	}
	defer p.Close()
	send := func(prefix string, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder("k" + strconv.Itoa(i%3)), Value: sarama.StringEncoder(prefix + strconv.Itoa(i))}); err != nil {
				t.Fatalf("send %s%d: %v", prefix, i, err)
			}
		}
	}
	txn := func(prefix string, n int, commit bool) {
		t.Helper()
		if err := p.BeginTxn(); err != nil {
			t.Fatal(err)
		}
		send(prefix, n)
		end, what := p.CommitTxn, "commit"
		if !commit {
			end, what = p.AbortTxn, "abort"
		}
		if err := end(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	txn("commit-", 30, true)
	txn("abort-", 10, false)
	txn("last-", 1, true)

	got := ReadValues(t, seeds, topic, true, 31, 30*time.Second)
	if len(got) != 31 {
		t.Fatalf("read_committed saw %d records, want 31: %v", len(got), got)
	}
	for _, v := range got {
		if v[0] == 'a' {
			t.Fatalf("read_committed saw aborted record %q", v)
		}
	}
	if all := ReadValues(t, seeds, topic, false, 41, 30*time.Second); len(all) != 41 {
		t.Fatalf("read_uncommitted saw %d records, want 41", len(all))
	}
}

package integration

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// kafka-dump-log.sh --transaction-log-decoder on the __transaction_state
// segment a broker wrote for one committed transaction: the coordinator's
// Empty, Ongoing (with the partition), PrepareCommit and CompleteCommit
// records print as Kafka's TransactionLog.formatRecordKeyAndValue prints
// them, one producer id throughout. It runs once the broker serves EndTxn
// (the transaction coordinator's work).
func TestCLIDumpLogTransactionLogDecoder(t *testing.T) {
	if !served(26) {
		t.Skip("the broker does not serve EndTxn (26) yet: it writes no __transaction_state to dump")
	}
	b := harness.StartBroker(t, map[string]string{
		"transaction.state.log.num.partitions":     "1",
		"transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr":            "1",
	})
	createTopic(t, b, "txn-dumped", 1, nil)
	cl := b.Client(kgo.TransactionalID("dump-tx"), kgo.DefaultProduceTopic("txn-dumped"), kgo.TransactionTimeout(30*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("in a transaction")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	// EndTxn answers once PrepareCommit is written; CompleteCommit follows
	// the markers. Stop the broker only once the coordinator reports it.
	adm := kadm.NewClient(cl)
	for state := ""; state != "CompleteCommit"; {
		if ctx.Err() != nil {
			t.Fatalf("transaction state %q, never CompleteCommit", state)
		}
		ds, err := adm.DescribeTransactions(ctx, "dump-tx")
		if err == nil {
			if d, ok := ds["dump-tx"]; ok && d.Err == nil {
				state = d.State
			}
		}
		if state != "CompleteCommit" {
			time.Sleep(20 * time.Millisecond) // polling the coordinator's state: no event to wait on
		}
	}
	cl.Close()
	b.Stop()

	seg := filepath.Join(b.DataDir, "__transaction_state-0", "00000000000000000000.log")
	code, out, errs := cliRun(t, nil, "kafka-dump-log.sh", "--transaction-log-decoder", "--files", seg)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	const key = `key: transaction_metadata::transactionalId=dump-tx payload: producerId:(\d+),producerEpoch:\d+,`
	const tail = `,txnLastUpdateTimestamp=\d+,txnTimeoutMs=30000$`
	pid := ""
	for _, want := range []string{
		key + `state=Empty,partitions=\[\]` + tail,
		key + `state=Ongoing,partitions=\[txn-dumped-0\]` + tail,
		key + `state=PrepareCommit,partitions=\[txn-dumped-0\]` + tail,
		key + `state=CompleteCommit,partitions=\[\]` + tail,
	} {
		m := regexp.MustCompile(`(?m)` + want).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no line matching %s in:\n%s", want, out)
		}
		if pid == "" {
			pid = m[1]
		} else if m[1] != pid {
			t.Fatalf("producer id %s, earlier records had %s:\n%s", m[1], pid, out)
		}
	}
}

package integration

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
	"gregor/wire/handlers"
)

// served reports whether this checkout's broker serves API key (what its
// ApiVersions answers), so a test of a command whose API another piece of
// work adds switches on by itself once that work is merged.
func served(key int16) bool {
	for _, r := range handlers.SupportedRanges() {
		if r.Key == key {
			return true
		}
	}
	return false
}

// bin/kafka-transactions.sh against a real single-node broker: `list` and
// `describe-producers` print Kafka's tables where the broker serves
// ListTransactions (66) and DescribeProducers (61); where it does not
// (yet), the tool fails at once, exit 1, with Kafka's message naming the
// API rather than retrying or printing an empty table.
func TestCLITransactionsAgainstBroker(t *testing.T) {
	b := harness.StartBroker(t, nil)
	bs := b.Addr()
	quickRaceExit(t)
	createTopic(t, b, "txn-tool", 1, nil)
	// An idempotent producer (kgo's default) writes three records in one
	// batch: Kafka keeps its state (sequence 0-2) on the partition, and
	// DescribeProducers lists it with no open transaction.
	cl := b.Client(kgo.DefaultProduceTopic("txn-tool"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var recs []*kgo.Record
	for i := 0; i < 3; i++ {
		recs = append(recs, &kgo.Record{Value: []byte("v")})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pid < 0 {
		t.Fatalf("the producer has no producer id (%d): not idempotent", pid)
	}

	t.Run("list", func(t *testing.T) {
		code, out, errs := cliRun(t, nil, "kafka-transactions.sh", "--bootstrap-server", bs, "list")
		if !served(66) {
			if code != 1 || out != "" || errs != "Failed to list transactions: The node does not support LIST_TRANSACTIONS. Enable debug logging for additional detail.\n" {
				t.Fatalf("without ListTransactions: exit %d, stdout %q, stderr %q", code, out, errs)
			}
			t.Skip("the broker does not serve ListTransactions (66) yet")
		}
		// No transactional producer ran: only the header line.
		if code != 0 || errs != "" || out != "TransactionalId\tCoordinator\tProducerId\tTransactionState\t\n" {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
		}
	})

	t.Run("describe-producers", func(t *testing.T) {
		code, out, errs := cliRun(t, nil, "kafka-transactions.sh", "--bootstrap-server", bs, "describe-producers", "--topic", "txn-tool", "--partition", "0")
		if !served(61) {
			if code != 1 || out != "" || errs != "Failed to describe producers for partition txn-tool-0 on leader: The node does not support DESCRIBE_PRODUCERS. Enable debug logging for additional detail.\n" {
				t.Fatalf("without DescribeProducers: exit %d, stdout %q, stderr %q", code, out, errs)
			}
			t.Skip("the broker does not serve DescribeProducers (61) yet")
		}
		if code != 0 || errs != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "ProducerId ProducerEpoch LatestCoordinatorEpoch LastSequence LastTimestamp CurrentTransactionStartOffset" {
			t.Fatalf("output:\n%s", out)
		}
		// The idempotent producer: its id and epoch, no coordinator epoch,
		// last sequence 2, no open transaction.
		f := strings.Fields(lines[1])
		if len(f) != 6 || f[0] != strconv.FormatInt(pid, 10) || f[1] != strconv.Itoa(int(epoch)) || f[2] != "-1" || f[3] != "2" || f[5] != "None" {
			t.Fatalf("producer row %q, want producer %d epoch %d, -1, 2, …, None", lines[1], pid, epoch)
		}
	})

	t.Run("describe-producers unknown partition", func(t *testing.T) {
		if !served(61) {
			t.Skip("the broker does not serve DescribeProducers (61) yet")
		}
		code, _, errs := cliRun(t, nil, "kafka-transactions.sh", "--bootstrap-server", bs, "describe-producers", "--topic", "txn-tool", "--partition", "7")
		if code != 1 || !strings.HasPrefix(errs, "Failed to describe producers for partition txn-tool-7 on leader: ") {
			t.Fatalf("exit %d, stderr %q", code, errs)
		}
	})
}

package transactions

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// describeHeaders are DescribeTransactionsCommand.HEADERS.
var describeHeaders = []string{"CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
	"TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions"}

// describe is `describe --transactional-id ID`: one row, the transaction's
// state at its coordinator. Start time and duration are "None" when no
// transaction is open (StartTimestamp -1); the partitions print as
// "topic-partition" joined by commas, sorted (Kafka's come from a set).
func (t *tool) describe(ctx context.Context, a args) error {
	id := a.str["transactional-id"]
	what := "Failed to describe transaction state of transactional-id `" + id + "`"
	if err := t.require(ctx, 65, 0); err != nil {
		return failWith(err, "%s", what)
	}
	ds, err := t.describeTransactions(ctx, []string{id})
	if err != nil {
		return failWith(err, "%s", what)
	}
	d := ds[id]
	if d.Err != nil {
		return failWith(d.Err, "%s", what)
	}
	printTable(t.out, describeHeaders, [][]string{describeRow(d, t.now().UnixMilli())})
	return nil
}

// describeRow is the describe table's row for d at nowMs.
func describeRow(d kadm.DescribedTransaction, nowMs int64) []string {
	start, dur := "None", "None"
	if d.StartTimestamp >= 0 {
		start = strconv.FormatInt(d.StartTimestamp, 10)
		dur = strconv.FormatInt(nowMs-d.StartTimestamp, 10)
	}
	return []string{strconv.Itoa(int(d.Coordinator)), d.TxnID, strconv.FormatInt(d.ProducerID, 10), strconv.Itoa(int(d.ProducerEpoch)),
		d.State, strconv.Itoa(int(d.TimeoutMillis)), start, dur, strings.Join(topicPartitions(d.Topics), ",")}
}

// describeTransactions describes ids (at least one) at their coordinators.
// Every id is in the result; one its coordinator answered with an error
// code for (or left out of its answer: not found) carries in Err the
// exception Kafka's DescribeTransactionsHandler gives it. err is a failure
// of any coordinator's request.
func (t *tool) describeTransactions(ctx context.Context, ids []string) (kadm.DescribedTransactions, error) {
	ds, err := t.adm.DescribeTransactions(ctx, ids...)
	if err != nil {
		// A coordinator that could not be found or asked fails the
		// whole call, as any failed future fails Kafka's command: an id
		// without an answer must not pass for one that is not found
		// (find-hanging would call its transaction hanging).
		return nil, firstErr(err)
	}
	out := kadm.DescribedTransactions{}
	for _, id := range ids {
		d, ok := ds[id]
		if !ok {
			d = kadm.DescribedTransaction{TxnID: id, Err: kerr.TransactionalIDNotFound}
		}
		d.Err = describeTxnError(id, d.Err)
		out[id] = d
	}
	return out, nil
}

// describeTxnError is DescribeTransactionsHandler's exception for an error
// code answered for id.
func describeTxnError(id string, err error) error {
	if err == nil {
		return nil
	}
	prefix := "DescribeTransactions request for transactionalId `" + id + "` "
	switch {
	case errors.Is(err, kerr.TransactionalIDNotFound):
		return codeError(err, prefix+"failed because the ID could not be found", "")
	case errors.Is(err, kerr.TransactionalIDAuthorizationFailed):
		return codeError(err, prefix+"failed due to authorization failure", "")
	}
	return codeError(err, prefix+"failed due to unexpected error", "")
}

// topicPartitions lists a TopicsSet as "topic-partition" strings (Kafka's
// TopicPartition.toString), sorted by topic then partition.
func topicPartitions(s kadm.TopicsSet) []string {
	var out []string
	for _, tp := range s.Sorted() {
		slices.Sort(tp.Partitions)
		for _, p := range tp.Partitions {
			out = append(out, tp.Topic+"-"+strconv.Itoa(int(p)))
		}
	}
	return out
}

// tp is a topic partition.
type tp struct {
	topic     string
	partition int32
}

func (x tp) String() string { return x.topic + "-" + strconv.Itoa(int(x.partition)) }

func compareTP(a, b tp) int {
	if c := compareStrings(a.topic, b.topic); c != 0 {
		return c
	}
	return int(a.partition) - int(b.partition)
}

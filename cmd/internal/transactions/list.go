package transactions

import (
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// listHeaders are ListTransactionsCommand.HEADERS.
var listHeaders = []string{"TransactionalId", "Coordinator", "ProducerId", "TransactionState"}

// errDurationFilterVersion is the Java client's refusal to send a
// duration filter to a broker without ListTransactions v1 (KIP-994):
// the filter would be dropped from the request and every transaction
// listed.
var errDurationFilterVersion = errors.New("Duration filter can be set only when using API version 1 or higher." +
	" If client is connected to an older broker, do not specify duration filter or set duration filter to -1.")

// list is `list [--duration-filter MS]`: every broker's transactions, one
// row each (listRows); with a filter of 0 or more only those open longer
// than that many milliseconds (KIP-994, ListTransactions v1).
func (t *tool) list(ctx context.Context, a args) error {
	filter, hasFilter := a.num["duration-filter"]
	if err := t.require(ctx, 66, 0); err != nil {
		return failWith(err, "Failed to list transactions")
	}
	var listed kadm.ListedTransactions
	var err error
	if hasFilter && filter >= 0 {
		if err := t.require(ctx, 66, 1); err != nil {
			return failWith(errDurationFilterVersion, "Failed to list transactions")
		}
		listed, err = t.listFiltered(ctx, filter)
	} else {
		listed, err = t.adm.ListTransactions(ctx, nil, nil)
	}
	if err != nil {
		return failWith(listError(err), "Failed to list transactions")
	}
	printTable(t.out, listHeaders, listRows(listed))
	return nil
}

// listRows are the list table's rows, ordered by coordinator then
// transactional id (Kafka prints its result map's order).
func listRows(listed kadm.ListedTransactions) [][]string {
	ls := make([]kadm.ListedTransaction, 0, len(listed))
	for _, l := range listed {
		ls = append(ls, l)
	}
	slices.SortFunc(ls, func(x, y kadm.ListedTransaction) int {
		if x.Coordinator != y.Coordinator {
			return int(x.Coordinator) - int(y.Coordinator)
		}
		return compareStrings(x.TxnID, y.TxnID)
	})
	rows := make([][]string, 0, len(ls))
	for _, l := range ls {
		rows = append(rows, []string{l.TxnID, strconv.Itoa(int(l.Coordinator)), strconv.FormatInt(l.ProducerID, 10), l.State})
	}
	return rows
}

// listFiltered is ListTransactions with DurationFilterMillis (v1+), which
// kadm does not set: the request goes to every broker (kgo shards it so)
// and the answers are merged as kadm merges them.
func (t *tool) listFiltered(ctx context.Context, durationMs int64) (kadm.ListedTransactions, error) {
	req := kmsg.NewPtrListTransactionsRequest()
	req.DurationFilterMillis = durationMs
	listed := kadm.ListedTransactions{}
	for _, sh := range t.cl.RequestSharded(ctx, req) {
		if sh.Err != nil {
			return nil, &kadm.ShardErrors{Name: "ListTransactions", Errs: []kadm.ShardError{{Req: sh.Req, Err: sh.Err, Broker: sh.Meta}}}
		}
		resp := sh.Resp.(*kmsg.ListTransactionsResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return nil, &kadm.ShardErrors{Name: "ListTransactions", Errs: []kadm.ShardError{{Req: sh.Req, Err: err, Broker: sh.Meta}}}
		}
		for _, s := range resp.TransactionStates {
			listed[s.TransactionalID] = kadm.ListedTransaction{Coordinator: sh.Meta.NodeID, TxnID: s.TransactionalID, ProducerID: s.ProducerID, State: s.TransactionState}
		}
	}
	return listed, nil
}

// listError is the exception Kafka's ListTransactionsHandler fails a
// broker's listing with.
func listError(err error) error {
	var se *kadm.ShardErrors
	if !errors.As(err, &se) || len(se.Errs) == 0 {
		return err
	}
	first := se.Errs[0]
	broker := first.Broker.NodeID
	switch {
	case errors.Is(first.Err, kerr.CoordinatorNotAvailable):
		return codeError(first.Err, "ListTransactions request sent to broker "+strconv.Itoa(int(broker))+" failed because the coordinator is shutting down", "")
	case isCode(first.Err):
		return codeError(first.Err, "ListTransactions request sent to broker "+strconv.Itoa(int(broker))+" failed with an unexpected exception", "")
	}
	return first.Err
}

func isCode(err error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke)
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

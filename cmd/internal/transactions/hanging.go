package transactions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// hangingHeaders are FindHangingTransactionsCommand.HEADERS.
var hangingHeaders = []string{"Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset", "LastTimestamp", "Duration(min)"}

// maxBatch is how many topics or partitions one request asks about
// (FindHangingTransactionsCommand.MAX_BATCH_SIZE), so a broker with many
// partitions is not sent one giant request.
const maxBatch = 500

// openTxn is a producer with an open transaction on a partition.
type openTxn struct {
	p tp
	s kadm.DescribedProducer
}

// findHanging is `find-hanging (--broker-id B | --topic T [--partition P])
// [--max-transaction-timeout MIN]`: the partitions' (all of B's replicas,
// or T's partitions, or T-P) open transactions older than the timeout
// whose coordinator does not know them — no transactional id lists the
// producer, the id is not found, or its transaction does not include the
// partition. Those can never get a marker and hold back the last stable
// offset until aborted. Rows are ordered by topic, partition, producer id.
func (t *tool) findHanging(ctx context.Context, a args) error {
	broker, hasBroker := a.num["broker-id"]
	topic, hasTopic := a.str["topic"]
	if !hasTopic && !hasBroker {
		return fail("The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search")
	}
	partition, hasPartition := a.num["partition"]
	if hasPartition && !hasTopic {
		return fail("The --partition argument requires --topic to be provided")
	}
	maxTimeoutMs := (time.Duration(a.num["max-transaction-timeout"]) * time.Minute).Milliseconds()
	var brokerID *int32
	if hasBroker {
		id := int32(broker)
		brokerID = &id
	}

	var tps []tp
	if hasTopic && hasPartition {
		tps = []tp{{topic, int32(partition)}}
	} else {
		var err error
		if tps, err = t.partitionsToSearch(ctx, topic, hasTopic, brokerID); err != nil {
			return err
		}
	}
	open, err := t.candidates(ctx, tps, brokerID, maxTimeoutMs)
	if err != nil {
		return err
	}
	var hanging []openTxn
	if len(open) > 0 {
		pids := map[int64]bool{}
		for _, o := range open {
			pids[o.s.ProducerID] = true
		}
		txnIDs, err := t.transactionalIDs(ctx, pids)
		if err != nil {
			return err
		}
		descs, err := t.describeForHanging(ctx, txnIDs)
		if err != nil {
			return err
		}
		hanging = hangingTxns(open, txnIDs, descs)
	}
	printTable(t.out, hangingHeaders, hangingRows(hanging, t.now().UnixMilli()))
	return nil
}

// hangingRows are the find-hanging table's rows at nowMs; Duration(min)
// is the whole minutes since the producer's last write.
func hangingRows(hanging []openTxn, nowMs int64) [][]string {
	rows := [][]string{}
	for _, h := range hanging {
		rows = append(rows, []string{h.p.topic, strconv.Itoa(int(h.p.partition)), strconv.FormatInt(h.s.ProducerID, 10),
			strconv.Itoa(int(h.s.ProducerEpoch)), strconv.Itoa(int(coordinatorEpochOr(h.s, -1))), strconv.FormatInt(max(h.s.CurrentTxnStartOffset, -1), 10),
			strconv.FormatInt(h.s.LastTimestamp, 10), strconv.FormatInt((nowMs-h.s.LastTimestamp)/time.Minute.Milliseconds(), 10)})
	}
	return rows
}

// optionalBroker prints a broker id as Kafka prints its Optional<Integer>
// in the find-hanging failure message.
func optionalBroker(id *int32) string {
	if id == nil {
		return "Optional.empty"
	}
	return fmt.Sprintf("Optional[%d]", *id)
}

// partitionsToSearch lists topic's partitions (every topic's, internal
// ones included, without --topic), keeping only those with a replica on
// *brokerID when given.
func (t *tool) partitionsToSearch(ctx context.Context, topic string, hasTopic bool, brokerID *int32) ([]tp, error) {
	var topics []string
	if hasTopic {
		topics = []string{topic}
	} else {
		all, err := t.adm.ListTopicsWithInternal(ctx)
		if err != nil {
			return nil, failWith(firstErr(err), "Failed to list topics")
		}
		topics = all.Names()
	}
	var out []tp
	for batch := range slices.Chunk(topics, maxBatch) {
		md, err := t.adm.Metadata(ctx, batch...)
		if err == nil {
			err = md.Topics.Error()
		}
		if err != nil {
			return nil, failWith(codeError(firstErr(err), "", ""), "Failed to describe %d topics", len(batch))
		}
		for _, td := range md.Topics.Sorted() {
			for _, pd := range td.Partitions.Sorted() {
				if brokerID == nil || slices.Contains(pd.Replicas, *brokerID) {
					out = append(out, tp{td.Topic, pd.Partition})
				}
			}
		}
	}
	return out, nil
}

// candidates are the open transactions on tps (described in batches at
// their leaders or at *brokerID) whose producer last wrote more than
// maxTimeoutMs ago.
func (t *tool) candidates(ctx context.Context, tps []tp, brokerID *int32, maxTimeoutMs int64) ([]openTxn, error) {
	if len(tps) > 0 {
		if err := t.require(ctx, 61, 0); err != nil {
			return nil, failWith(err, "Failed to describe producers for %d partitions on broker %s", min(len(tps), maxBatch), optionalBroker(brokerID))
		}
	}
	var out []openTxn
	for batch := range slices.Chunk(tps, maxBatch) {
		res, err := t.producers(ctx, batch, brokerID)
		if err == nil {
			for _, p := range batch {
				if err = res[p].Err; err != nil {
					break
				}
			}
		}
		if err != nil {
			return nil, failWith(err, "Failed to describe producers for %d partitions on broker %s", len(batch), optionalBroker(brokerID))
		}
		out = append(out, openCandidates(res, t.now().UnixMilli(), maxTimeoutMs)...)
	}
	return out, nil
}

// openCandidates picks, from described partitions, the producers with an
// open transaction (a current start offset) whose last write is more than
// maxTimeoutMs before nowMs, ordered by partition then producer id.
func openCandidates(res map[tp]kadm.DescribedProducersPartition, nowMs, maxTimeoutMs int64) []openTxn {
	var out []openTxn
	for p, d := range res {
		for _, s := range d.ActiveProducers {
			if s.CurrentTxnStartOffset >= 0 && nowMs-s.LastTimestamp > maxTimeoutMs {
				out = append(out, openTxn{p, s})
			}
		}
	}
	sortOpen(out)
	return out
}

func sortOpen(o []openTxn) {
	slices.SortFunc(o, func(a, b openTxn) int {
		if c := compareTP(a.p, b.p); c != 0 {
			return c
		}
		switch {
		case a.s.ProducerID < b.s.ProducerID:
			return -1
		case a.s.ProducerID > b.s.ProducerID:
			return 1
		}
		return 0
	})
}

// transactionalIDs maps the producer ids to the transactional ids the
// coordinators list for them (ListTransactions filtered by producer id).
func (t *tool) transactionalIDs(ctx context.Context, pids map[int64]bool) (map[int64]string, error) {
	what := fmt.Sprintf("Failed to list transactions for %d producers", len(pids))
	if err := t.require(ctx, 66, 0); err != nil {
		return nil, failWith(err, "%s", what)
	}
	ids := make([]int64, 0, len(pids))
	for id := range pids {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	listed, err := t.adm.ListTransactions(ctx, ids, nil)
	if err != nil {
		return nil, failWith(listError(err), "%s", what)
	}
	out := map[int64]string{}
	for _, l := range listed {
		if pids[l.ProducerID] { // a listing for a producer not asked about is ignored, as Kafka does
			out[l.ProducerID] = l.TxnID
		}
	}
	return out, nil
}

// describeForHanging describes the transactional ids; an id its
// coordinator does not know maps to nil.
func (t *tool) describeForHanging(ctx context.Context, txnIDs map[int64]string) (map[string]*kadm.DescribedTransaction, error) {
	out := map[string]*kadm.DescribedTransaction{}
	if len(txnIDs) == 0 {
		return out, nil // kadm would describe every transaction for no ids
	}
	var ids []string
	for _, id := range txnIDs {
		if _, dup := out[id]; !dup {
			out[id] = nil
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	what := fmt.Sprintf("Failed to describe %d transactions", len(ids))
	if err := t.require(ctx, 65, 0); err != nil {
		return nil, failWith(err, "%s", what)
	}
	ds, err := t.describeTransactions(ctx, ids)
	if err != nil {
		return nil, failWith(err, "%s", what)
	}
	for _, id := range ids {
		d := ds[id]
		switch {
		case d.Err == nil:
			out[id] = &d
		case errors.Is(d.Err, kerr.TransactionalIDNotFound):
		default:
			return nil, failWith(d.Err, "%s", what)
		}
	}
	return out, nil
}

// hangingTxns is the decision of FindHangingTransactionsCommand: an open
// transaction hangs when no transactional id lists its producer, when the
// id's coordinator does not know it (nil description), or when the
// coordinator's transaction does not include the partition — a partition
// it includes (ongoing, or awaiting its marker in PrepareCommit /
// PrepareAbort) will still get its marker.
func hangingTxns(open []openTxn, txnIDs map[int64]string, descs map[string]*kadm.DescribedTransaction) []openTxn {
	var out []openTxn
	for _, o := range open {
		id, ok := txnIDs[o.s.ProducerID]
		if !ok {
			out = append(out, o)
			continue
		}
		d := descs[id]
		if d == nil || !d.Topics.Lookup(o.p.topic, o.p.partition) {
			out = append(out, o)
		}
	}
	sortOpen(out)
	return out
}

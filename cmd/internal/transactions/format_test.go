package transactions

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

// ToolsUtils.prettyPrintTable's layout: each cell padded to its column's
// width and followed by a tab, the trailing tab included.
func TestPrintTableLayout(t *testing.T) {
	var b bytes.Buffer
	printTable(&b, []string{"A", "Long"}, [][]string{{"xyz", "1"}, {"é", "22222"}})
	want := "A  \tLong \t\nxyz\t1    \t\né  \t22222\t\n"
	if b.String() != want {
		t.Fatalf("got %q\nwant %q", b.String(), want)
	}
	b.Reset()
	printTable(&b, hangingHeaders, nil)
	if b.String() != "Topic\tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset\tLastTimestamp\tDuration(min)\t\n" {
		t.Fatalf("empty table: %q", b.String())
	}
}

// The values of Kafka's TransactionsCommandTest, through this tool's row
// builders.
func TestRowsFromResponses(t *testing.T) {
	prods := kadm.DescribedProducersPartition{Topic: "foo", Partition: 5, ActiveProducers: kadm.DescribedProducers{
		98765: {ProducerID: 98765, ProducerEpoch: 30, LastSequence: 2300, LastTimestamp: 1599509599, CoordinatorEpoch: -1, CurrentTxnStartOffset: -1},
		12345: {ProducerID: 12345, ProducerEpoch: 15, LastSequence: 1300, LastTimestamp: 1599509565, CoordinatorEpoch: 20, CurrentTxnStartOffset: 990},
	}}
	wantProds := [][]string{{"12345", "15", "20", "1300", "1599509565", "990"}, {"98765", "30", "-1", "2300", "1599509599", "None"}}
	if got := producerRows(prods); !slices.EqualFunc(got, wantProds, slices.Equal) {
		t.Errorf("describe-producers rows %v, want %v", got, wantProds)
	}

	listed := kadm.ListedTransactions{
		"foo": {Coordinator: 0, TxnID: "foo", ProducerID: 12345, State: "Ongoing"},
		"bar": {Coordinator: 0, TxnID: "bar", ProducerID: 98765, State: "PrepareAbort"},
		"baz": {Coordinator: 1, TxnID: "baz", ProducerID: 13579, State: "CompleteCommit"},
	}
	wantList := [][]string{{"bar", "0", "98765", "PrepareAbort"}, {"foo", "0", "12345", "Ongoing"}, {"baz", "1", "13579", "CompleteCommit"}}
	if got := listRows(listed); !slices.EqualFunc(got, wantList, slices.Equal) {
		t.Errorf("list rows %v, want %v", got, wantList)
	}

	const start = 1700000000000
	d := kadm.DescribedTransaction{Coordinator: 5, TxnID: "foo", State: "Ongoing", TimeoutMillis: 10000, StartTimestamp: start,
		ProducerID: 12345, ProducerEpoch: 15, Topics: kadm.TopicsSet{}}
	d.Topics.Add("bar", 1, 0)
	d.Topics.Add("a", 3)
	want := []string{"5", "foo", "12345", "15", "Ongoing", "10000", "1700000000000", "5000", "a-3,bar-0,bar-1"}
	if got := describeRow(d, start+5000); !slices.Equal(got, want) {
		t.Errorf("describe row %v, want %v", got, want)
	}
	d.StartTimestamp, d.State, d.Topics = -1, "Empty", nil
	want = []string{"5", "foo", "12345", "15", "Empty", "10000", "None", "None", ""}
	if got := describeRow(d, start); !slices.Equal(got, want) {
		t.Errorf("describe row without a transaction %v, want %v", got, want)
	}

	h := []openTxn{{tp{"foo", 5}, kadm.DescribedProducer{ProducerID: 7, ProducerEpoch: 2, CoordinatorEpoch: -1, CurrentTxnStartOffset: 300, LastTimestamp: start}}}
	want = []string{"foo", "5", "7", "2", "-1", "300", "1700000000000", "59"}
	if got := hangingRows(h, start+59*60000+59999); len(got) != 1 || !slices.Equal(got[0], want) {
		t.Errorf("find-hanging rows %v, want [%v]", got, want)
	}
}

// FindHangingTransactionsCommand's decision on every path: no listed
// transactional id, an id its coordinator does not know, a transaction
// that does not include the partition (hanging), and one that does (not).
func TestHangingDecision(t *testing.T) {
	const now, max = 10_000_000, 15 * 60_000
	old := int64(now - max - 1)
	res := map[tp]kadm.DescribedProducersPartition{
		{"t", 0}: {ActiveProducers: kadm.DescribedProducers{
			1: {ProducerID: 1, CurrentTxnStartOffset: 10, LastTimestamp: old},
			2: {ProducerID: 2, CurrentTxnStartOffset: 11, LastTimestamp: old},
			5: {ProducerID: 5, CurrentTxnStartOffset: -1, LastTimestamp: old},       // no open transaction
			6: {ProducerID: 6, CurrentTxnStartOffset: 12, LastTimestamp: now - max}, // not past the timeout
		}},
		{"t", 1}: {ActiveProducers: kadm.DescribedProducers{
			3: {ProducerID: 3, CurrentTxnStartOffset: 4, LastTimestamp: old},
			4: {ProducerID: 4, CurrentTxnStartOffset: 5, LastTimestamp: old},
		}},
	}
	open := openCandidates(res, now, max)
	var pids []int64
	for _, o := range open {
		pids = append(pids, o.s.ProducerID)
	}
	if !slices.Equal(pids, []int64{1, 2, 3, 4}) {
		t.Fatalf("candidates %v, want producers 1-4", pids)
	}
	includes := &kadm.DescribedTransaction{TxnID: "in", Topics: kadm.TopicsSet{}}
	includes.Topics.Add("t", 1)
	other := &kadm.DescribedTransaction{TxnID: "other", Topics: kadm.TopicsSet{}}
	other.Topics.Add("t", 0) // producer 3's open transaction is on t-1
	txnIDs := map[int64]string{2: "gone", 3: "other", 4: "in"}
	descs := map[string]*kadm.DescribedTransaction{"gone": nil, "in": includes, "other": other}
	var got []string
	for _, h := range hangingTxns(open, txnIDs, descs) {
		got = append(got, h.p.String()+"/"+strings.Repeat("p", int(h.s.ProducerID)))
	}
	if want := []string{"t-0/p", "t-0/pp", "t-1/ppp"}; !slices.Equal(got, want) {
		t.Fatalf("hanging %v, want %v (1: no id, 2: id unknown, 3: partition not in its transaction; 4 is in its transaction)", got, want)
	}
}

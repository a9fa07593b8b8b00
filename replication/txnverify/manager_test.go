package txnverify

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeLocal is an in-process coordinator answering from codes.
type fakeLocal struct {
	code  int16
	calls int
}

func (l *fakeLocal) VerifyPartitions(_ string, _ int64, _ int16, parts map[string][]int32, reply func(Codes)) {
	l.calls++
	reply(fill(parts, l.code))
}

func (l *fakeLocal) PartitionFor(id string) int32 { return int32(len(id)) }

// fakeTransport hands each request to the test through sent and waits
// for the test's answer on answers.
type fakeTransport struct {
	sent    chan *kmsg.AddPartitionsToTxnRequest
	answers chan answerMsg
	closed  bool
}

type answerMsg struct {
	resp *kmsg.AddPartitionsToTxnResponse
	err  error
}

func newFakeTransport() *fakeTransport {
	return &fakeTransport{sent: make(chan *kmsg.AddPartitionsToTxnRequest, 8), answers: make(chan answerMsg, 8)}
}

func (f *fakeTransport) Send(ctx context.Context, _ int32, req *kmsg.AddPartitionsToTxnRequest) (*kmsg.AddPartitionsToTxnResponse, error) {
	f.sent <- req
	select {
	case a := <-f.answers:
		return a.resp, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *fakeTransport) Close() { f.closed = true }

// result collects one Verify's reply.
type result chan Codes

func (r result) reply(c Codes) { r <- c }

func (r result) get(t *testing.T) Codes {
	t.Helper()
	select {
	case c := <-r:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no reply")
		return nil
	}
}

func newManager(leader int32, local *fakeLocal, tr Transport) *Manager {
	return New(Config{BrokerID: 1, Local: local, Transport: tr,
		Leader: func(int32) (int32, bool) { return leader, leader >= 0 }})
}

var parts = map[string][]int32{"t": {0, 1}}

// okResponse verifies every partition of every transaction in req, except
// those in refuse, answered TRANSACTION_ABORTABLE, and fenced ids.
func okResponse(req *kmsg.AddPartitionsToTxnRequest, refuse int32, fenced string) *kmsg.AddPartitionsToTxnResponse {
	resp := kmsg.NewPtrAddPartitionsToTxnResponse()
	for _, tx := range req.Transactions {
		rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rt.TransactionalID = tx.TransactionalID
		for _, t := range tx.Topics {
			top := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			top.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				rp.Partition = p
				switch {
				case tx.TransactionalID == fenced:
					rp.ErrorCode = kerr.ProducerFenced.Code
				case p == refuse:
					rp.ErrorCode = kerr.TransactionAbortable.Code
				}
				top.Partitions = append(top.Partitions, rp)
			}
			rt.Topics = append(rt.Topics, top)
		}
		resp.Transactions = append(resp.Transactions, rt)
	}
	return resp
}

func TestLocalCoordinatorShortCircuits(t *testing.T) {
	local := &fakeLocal{code: kerr.ProducerFenced.Code}
	tr := newFakeTransport()
	m := newManager(1, local, tr)
	defer m.Close()
	r := make(result, 1)
	m.Verify("x", 5, 0, parts, r.reply)
	if c := r.get(t); c["t"][0] != kerr.InvalidProducerEpoch.Code || c["t"][1] != kerr.InvalidProducerEpoch.Code || local.calls != 1 {
		t.Fatalf("local answer %v (calls %d), want PRODUCER_FENCED mapped to INVALID_PRODUCER_EPOCH", c, local.calls)
	}
	if len(tr.sent) != 0 {
		t.Fatal("a local coordinator went over the network")
	}
}

func TestNoCoordinator(t *testing.T) {
	m := newManager(-1, &fakeLocal{}, newFakeTransport())
	defer m.Close()
	r := make(result, 1)
	m.Verify("x", 5, 0, parts, r.reply)
	if c := r.get(t); c["t"][0] != kerr.CoordinatorNotAvailable.Code || c["t"][1] != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("%v, want COORDINATOR_NOT_AVAILABLE", c)
	}
}

// TestRemoteBatchesOneInFlight: while a request is in flight to the
// coordinator broker, the next transactions wait and go out together in
// one VerifyOnly request; a second verification of the same id replaces
// the waiting one (NETWORK_EXCEPTION for the same epoch, INVALID_PRODUCER_EPOCH
// for an older one), an older newcomer is refused at once.
func TestRemoteBatchesOneInFlight(t *testing.T) {
	tr := newFakeTransport()
	m := newManager(2, &fakeLocal{}, tr)
	defer m.Close()

	first := make(result, 1)
	m.Verify("a", 1, 0, parts, first.reply)
	req1 := <-tr.sent
	if len(req1.Transactions) != 1 || !req1.Transactions[0].VerifyOnly || req1.Transactions[0].ProducerID != 1 {
		t.Fatalf("first request %+v", req1.Transactions)
	}

	b1, b2, c1, c0 := make(result, 1), make(result, 1), make(result, 1), make(result, 1)
	m.Verify("b", 2, 3, parts, b1.reply)
	m.Verify("b", 2, 3, parts, b2.reply) // a retry: b1 gives way
	if c := b1.get(t); c["t"][0] != kerr.NetworkException.Code {
		t.Fatalf("replaced same-epoch verification: %v, want NETWORK_EXCEPTION", c)
	}
	m.Verify("c", 3, 1, parts, c1.reply)
	m.Verify("c", 3, 0, parts, c0.reply) // older epoch: refused
	if c := c0.get(t); c["t"][1] != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("older-epoch newcomer: %v, want INVALID_PRODUCER_EPOCH", c)
	}
	select {
	case req := <-tr.sent:
		t.Fatalf("a second request went out while one was in flight: %+v", req)
	default:
	}

	tr.answers <- answerMsg{resp: okResponse(req1, 1, "")}
	if c := first.get(t); c["t"][0] != 0 || c["t"][1] != kerr.TransactionAbortable.Code {
		t.Fatalf("first answer %v", c)
	}
	req2 := <-tr.sent
	var ids []string
	for _, tx := range req2.Transactions {
		ids = append(ids, tx.TransactionalID)
	}
	sort.Strings(ids)
	if len(ids) != 2 || ids[0] != "b" || ids[1] != "c" {
		t.Fatalf("batched request holds %v, want [b c]", ids)
	}
	tr.answers <- answerMsg{resp: okResponse(req2, -1, "c")}
	if c := b2.get(t); c["t"][0] != 0 || c["t"][1] != 0 {
		t.Fatalf("b verified: %v", c)
	}
	if c := c1.get(t); c["t"][0] != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("fenced c: %v, want PRODUCER_FENCED as INVALID_PRODUCER_EPOCH", c)
	}
}

// TestRemoteResponseErrors: Kafka's mapping of what can go wrong with
// the request itself.
func TestRemoteResponseErrors(t *testing.T) {
	cases := []struct {
		name string
		ans  func(req *kmsg.AddPartitionsToTxnRequest) answerMsg
		want int16
	}{
		{"lost request", func(*kmsg.AddPartitionsToTxnRequest) answerMsg { return answerMsg{err: errors.New("connection reset")} }, kerr.NetworkException.Code},
		{"cluster authorization", func(*kmsg.AddPartitionsToTxnRequest) answerMsg {
			r := kmsg.NewPtrAddPartitionsToTxnResponse()
			r.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			return answerMsg{resp: r}
		}, kerr.InvalidTxnState.Code},
		{"request-level error", func(*kmsg.AddPartitionsToTxnRequest) answerMsg {
			r := kmsg.NewPtrAddPartitionsToTxnResponse()
			r.ErrorCode = kerr.NotCoordinator.Code
			return answerMsg{resp: r}
		}, kerr.NotCoordinator.Code},
		{"transaction missing from the response", func(*kmsg.AddPartitionsToTxnRequest) answerMsg {
			return answerMsg{resp: kmsg.NewPtrAddPartitionsToTxnResponse()}
		}, kerr.NetworkException.Code},
		{"broker without v4: skipped as Kafka does", func(*kmsg.AddPartitionsToTxnRequest) answerMsg { return answerMsg{err: ErrUnsupported} }, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newFakeTransport()
			m := newManager(2, &fakeLocal{}, tr)
			defer m.Close()
			r := make(result, 1)
			m.Verify("a", 1, 0, parts, r.reply)
			tr.answers <- tc.ans(<-tr.sent)
			if c := r.get(t); c["t"][0] != tc.want || c["t"][1] != tc.want {
				t.Fatalf("%v, want %d", c, tc.want)
			}
		})
	}
}

// TestCloseAnswersEverything: Close cancels the request in flight, answers
// what waits, stops the senders and closes the transport; Verify after
// Close answers at once.
func TestCloseAnswersEverything(t *testing.T) {
	tr := newFakeTransport()
	m := newManager(2, &fakeLocal{}, tr)
	inflight, waiting := make(result, 1), make(result, 1)
	m.Verify("a", 1, 0, parts, inflight.reply)
	<-tr.sent
	m.Verify("b", 1, 0, parts, waiting.reply)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); m.Close() }()
	for _, r := range []result{inflight, waiting} {
		if c := r.get(t); c["t"][0] != kerr.NetworkException.Code {
			t.Fatalf("at close: %v, want NETWORK_EXCEPTION", c)
		}
	}
	wg.Wait()
	if !tr.closed {
		t.Fatal("transport not closed")
	}
	after := make(result, 1)
	m.Verify("c", 1, 0, parts, after.reply)
	if c := after.get(t); c["t"][0] != kerr.NetworkException.Code {
		t.Fatalf("after close: %v", c)
	}
}

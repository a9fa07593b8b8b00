package txncoordinator

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// harness drives a Core as its actor would, with the effects completed by
// the test.
type harness struct {
	t      *testing.T
	c      *Core
	now    int64
	nextID int64
}

func newHarness(t *testing.T) *harness {
	return &harness{t: t, c: NewCore(7, 3, nil, 1000), now: 1000, nextID: 5000}
}

type initResult struct {
	pid   int64
	epoch int16
	code  int16
	done  bool
}

// initPID runs InitProducerId, allocating ids and completing its writes
// with appendCode.
func (h *harness) initPID(id string, timeout int32, exp *ProducerIDAndEpoch, appendCode int16) initResult {
	h.t.Helper()
	var r initResult
	h.c.InitProducerID(id, timeout, exp, h.now, func(pid int64, epoch int16, code int16) { r = initResult{pid, epoch, code, true} })
	for _, req := range h.c.TakeIDRequests() {
		h.nextID++
		req.Done(h.now, h.nextID, nil)
	}
	h.completeWrites(appendCode)
	return r
}

func (h *harness) completeWrites(code int16) []*Write {
	ws := h.c.TakeWrites()
	for _, w := range ws {
		w.Done(code)
	}
	return ws
}

func (h *harness) add(id string, pid int64, epoch int16, appendCode int16, parts ...TopicPartition) (code int16, writes []*Write) {
	code = -99
	h.c.AddPartitions(id, pid, epoch, parts, h.now, func(c int16) { code = c })
	writes = h.completeWrites(appendCode)
	return code, writes
}

func (h *harness) end(id string, pid int64, epoch int16, commit bool, appendCode int16) (int16, []*Write) {
	code := int16(-99)
	h.c.EndTxn(id, pid, epoch, commit, h.now, func(c int16) { code = c })
	return code, h.completeWrites(appendCode)
}

var (
	tpA = TopicPartition{Topic: "a", Partition: 0}
	tpB = TopicPartition{Topic: "b", Partition: 1}
	tpC = TopicPartition{Topic: "b", Partition: 2}
)

func (h *harness) state(id string) State { return h.c.Get(id).State }

func TestInitProducerIDNewAndBump(t *testing.T) {
	h := newHarness(t)
	r := h.initPID("t1", 60000, nil, 0)
	if !r.done || r.code != 0 || r.pid != 5001 || r.epoch != 0 {
		t.Fatalf("first init = %+v, want pid 5001 epoch 0", r)
	}
	m := h.c.Get("t1")
	if m.State != Empty || m.TimeoutMs != 60000 || m.LastProducerEpoch != -1 {
		t.Fatalf("metadata %+v", m)
	}
	// Again: the same id with the next epoch, no new producer id.
	r = h.initPID("t1", 30000, nil, 0)
	if r.code != 0 || r.pid != 5001 || r.epoch != 1 || h.c.Get("t1").TimeoutMs != 30000 {
		t.Fatalf("second init = %+v", r)
	}
	if h.nextID != 5001 {
		t.Fatalf("a second producer id was allocated")
	}
}

func TestInitProducerIDWritesKafkaRecord(t *testing.T) {
	h := newHarness(t)
	h.c.InitProducerID("t1", 60000, nil, h.now, func(int64, int16, int16) {})
	h.c.TakeIDRequests()[0].Done(h.now, 42, nil)
	ws := h.c.TakeWrites()
	if len(ws) != 1 {
		t.Fatalf("%d writes", len(ws))
	}
	id, ok, err := DecodeKey(Key(ws[0].TransactionalID))
	if err != nil || !ok || id != "t1" {
		t.Fatalf("key %q %v %v", id, ok, err)
	}
	m, err := DecodeValue("t1", Value(ws[0].Transit))
	if err != nil || m.ProducerID != 42 || m.ProducerEpoch != 0 || m.State != Empty || m.TimeoutMs != 60000 || m.StartTimestamp != -1 || m.UpdateTimestamp != 1000 {
		t.Fatalf("value %+v %v", m, err)
	}
	// TransactionLogKey v0: int16 version 0, int16 length, bytes.
	if k := Key("t1"); string(k) != "\x00\x00\x00\x02t1" {
		t.Fatalf("key bytes %q", k)
	}
}

func TestInitProducerIDPendingIsConcurrent(t *testing.T) {
	h := newHarness(t)
	h.initPID("t1", 60000, nil, 0)
	var first, second initResult
	h.c.InitProducerID("t1", 60000, nil, h.now, func(p int64, e int16, c int16) { first = initResult{p, e, c, true} })
	h.c.InitProducerID("t1", 60000, nil, h.now, func(p int64, e int16, c int16) { second = initResult{p, e, c, true} })
	if !second.done || second.code != codeConcurrentTransactions || second.pid != -1 {
		t.Fatalf("second while pending = %+v", second)
	}
	h.completeWrites(0)
	if first.code != 0 || first.epoch != 1 {
		t.Fatalf("first = %+v", first)
	}
}

func TestInitProducerIDKIP360(t *testing.T) {
	h := newHarness(t)
	h.initPID("t1", 60000, nil, 0) // 5001/0
	// The producer's current epoch: bumped, the old one remembered.
	r := h.initPID("t1", 60000, &ProducerIDAndEpoch{5001, 0}, 0)
	if r.code != 0 || r.epoch != 1 || h.c.Get("t1").LastProducerEpoch != 0 {
		t.Fatalf("bump = %+v last %d", r, h.c.Get("t1").LastProducerEpoch)
	}
	// A retry of that bump (its answer lost): the same epoch again.
	r = h.initPID("t1", 60000, &ProducerIDAndEpoch{5001, 0}, 0)
	if r.code != 0 || r.epoch != 1 {
		t.Fatalf("retry = %+v", r)
	}
	// Another epoch: fenced. Another producer id: fenced.
	if r = h.initPID("t1", 60000, &ProducerIDAndEpoch{5001, 7}, 0); r.code != codeProducerFenced {
		t.Fatalf("wrong epoch = %+v", r)
	}
	if r = h.initPID("t1", 60000, &ProducerIDAndEpoch{999, 1}, 0); r.code != codeProducerFenced {
		t.Fatalf("wrong id = %+v", r)
	}
	if len(h.c.TakeWrites()) != 0 {
		t.Fatal("a refused init wrote")
	}
}

func TestInitProducerIDRotatesExhaustedEpoch(t *testing.T) {
	h := newHarness(t)
	h.initPID("t1", 60000, nil, 0)
	m := h.c.Get("t1")
	m.ProducerEpoch = 32766 // exhausted
	r := h.initPID("t1", 60000, &ProducerIDAndEpoch{5001, 32766}, 0)
	if r.code != 0 || r.pid != 5002 || r.epoch != 0 {
		t.Fatalf("rotation = %+v", r)
	}
	if m.LastProducerID != 5001 || m.LastProducerEpoch != 32766 {
		t.Fatalf("last id/epoch %d/%d", m.LastProducerID, m.LastProducerEpoch)
	}
	// The old id at its exhausted epoch is still recognised (retry).
	if r = h.initPID("t1", 60000, &ProducerIDAndEpoch{5001, 32766}, 0); r.code != 0 || r.pid != 5002 || r.epoch != 0 {
		t.Fatalf("retry after rotation = %+v", r)
	}
}

func TestAddPartitionsErrorOrder(t *testing.T) {
	h := newHarness(t)
	if code, _ := h.add("nope", 1, 0, 0, tpA); code != codeInvalidProducerIDMap {
		t.Fatalf("unknown id: %d", code)
	}
	h.initPID("t1", 60000, nil, 0) // 5001/0
	// Wrong id beats wrong epoch.
	if code, _ := h.add("t1", 1, 9, 0, tpA); code != codeInvalidProducerIDMap {
		t.Fatalf("wrong id: %d", code)
	}
	if code, _ := h.add("t1", 5001, 9, 0, tpA); code != codeProducerFenced {
		t.Fatalf("wrong epoch: %d", code)
	}
	h.now = 2000
	code, ws := h.add("t1", 5001, 0, 0, tpA, tpB)
	if code != 0 || len(ws) != 1 || h.state("t1") != Ongoing || h.c.Get("t1").StartTimestamp != 2000 {
		t.Fatalf("add: code %d writes %d state %s", code, len(ws), h.state("t1"))
	}
	if got := ws[0].Transit.Partitions; len(got) != 2 || got[0] != tpA || got[1] != tpB {
		t.Fatalf("written partitions %v", got)
	}
	// Already added: answered without a write.
	if code, ws = h.add("t1", 5001, 0, 0, tpB); code != 0 || len(ws) != 0 {
		t.Fatalf("re-add: %d, %d writes", code, len(ws))
	}
	// A new one extends; the start time stays.
	h.now = 3000
	if code, ws = h.add("t1", 5001, 0, 0, tpC); code != 0 || len(ws) != 1 || len(h.c.Get("t1").Partitions) != 3 || h.c.Get("t1").StartTimestamp != 2000 {
		t.Fatalf("extend: %d", code)
	}
	// While an add is being written: concurrent.
	var first int16 = -99
	h.c.AddPartitions("t1", 5001, 0, []TopicPartition{{"c", 0}}, h.now, func(c int16) { first = c })
	if code, _ := h.add("t1", 5001, 0, 0, TopicPartition{"d", 0}); code != codeConcurrentTransactions {
		t.Fatalf("while pending: %d", code)
	}
	h.completeWrites(0)
	if first != 0 {
		t.Fatalf("pending add: %d", first)
	}
}

func TestAppendErrorsMapAndDropPending(t *testing.T) {
	h := newHarness(t)
	h.initPID("t1", 60000, nil, 0)
	for _, c := range []struct{ append, want int16 }{
		{kerr.NotLeaderForPartition.Code, codeNotCoordinator},
		{kerr.RequestTimedOut.Code, codeCoordinatorNotAvail},
		{kerr.NotEnoughReplicas.Code, codeCoordinatorNotAvail},
		{kerr.MessageTooLarge.Code, kerr.UnknownServerError.Code},
	} {
		code, _ := h.add("t1", 5001, 0, c.append, tpA)
		if code != c.want {
			t.Errorf("append %d: answered %d, want %d", c.append, code, c.want)
		}
		if m := h.c.Get("t1"); m.State != Empty || m.hasPending || len(m.Partitions) != 0 {
			t.Fatalf("after failed append: %+v", m)
		}
	}
}

// ongoing sets up t1 (5001/0) with an ongoing transaction on tpA, tpB.
func ongoing(t *testing.T) *harness {
	h := newHarness(t)
	h.initPID("t1", 60000, nil, 0)
	if code, _ := h.add("t1", 5001, 0, 0, tpA, tpB); code != 0 {
		t.Fatalf("add: %d", code)
	}
	return h
}

func TestEndTxnCommitSendsMarkersThenCompletes(t *testing.T) {
	h := ongoing(t)
	code, ws := h.end("t1", 5001, 0, true, 0)
	if code != 0 || len(ws) != 1 || ws[0].Transit.State != PrepareCommit || h.state("t1") != PrepareCommit {
		t.Fatalf("end: %d state %s", code, h.state("t1"))
	}
	ms := h.c.TakeMarkers()
	if len(ms) != 1 || !ms[0].Commit || ms[0].ProducerID != 5001 || ms[0].ProducerEpoch != 0 || ms[0].CoordinatorEpoch != 3 || len(ms[0].Partitions) != 2 {
		t.Fatalf("markers %+v", ms)
	}
	// While markers go out, every request sees the pending completion.
	if code, _ := h.end("t1", 5001, 0, true, 0); code != codeConcurrentTransactions {
		t.Fatalf("commit again while completing: %d", code)
	}
	if code, _ := h.add("t1", 5001, 0, 0, tpC); code != codeConcurrentTransactions {
		t.Fatalf("add while completing: %d", code)
	}
	if r := h.initPID("t1", 60000, nil, 0); r.code != codeConcurrentTransactions {
		t.Fatalf("init while completing: %+v", r)
	}
	ms[0].Done(map[TopicPartition]int16{tpA: 0})
	if len(h.c.TakeWrites()) != 0 {
		t.Fatal("completed with a partition still waiting")
	}
	ms[0].Done(map[TopicPartition]int16{tpB: 0})
	ws = h.completeWrites(0)
	if len(ws) != 1 || ws[0].Transit.State != CompleteCommit || len(ws[0].Transit.Partitions) != 0 || h.state("t1") != CompleteCommit {
		t.Fatalf("completion: %d writes, state %s", len(ws), h.state("t1"))
	}
	// A retried commit of a completed commit succeeds; an abort is invalid.
	if code, ws = h.end("t1", 5001, 0, true, 0); code != 0 || len(ws) != 0 {
		t.Fatalf("commit after complete: %d", code)
	}
	if code, _ = h.end("t1", 5001, 0, false, 0); code != codeInvalidTxnState {
		t.Fatalf("abort after commit: %d", code)
	}
	// The next transaction starts with a fresh start time.
	h.now = 9000
	if code, _ = h.add("t1", 5001, 0, 0, tpC); code != 0 || h.c.Get("t1").StartTimestamp != 9000 {
		t.Fatalf("next transaction: %d", code)
	}
}

func TestEndTxnErrorOrder(t *testing.T) {
	h := newHarness(t)
	if code, _ := h.end("nope", 1, 0, true, 0); code != codeInvalidProducerIDMap {
		t.Fatalf("unknown: %d", code)
	}
	h.initPID("t1", 60000, nil, 0)
	if code, _ := h.end("t1", 5001, 0, true, 0); code != codeInvalidTxnState {
		t.Fatalf("commit of Empty: %d", code)
	}
	h.add("t1", 5001, 0, 0, tpA)
	if code, _ := h.end("t1", 77, 5, true, 0); code != codeInvalidProducerIDMap {
		t.Fatalf("wrong id: %d", code)
	}
	// Client epochs must match exactly: older and newer are fenced.
	if code, _ := h.end("t1", 5001, 1, true, 0); code != codeProducerFenced {
		t.Fatalf("newer epoch: %d", code)
	}
	// Abort, then a commit of that aborting transaction is invalid once
	// nothing is pending.
	code, _ := h.end("t1", 5001, 0, false, 0)
	if code != 0 || h.state("t1") != PrepareAbort {
		t.Fatalf("abort: %d", code)
	}
	ms := h.c.TakeMarkers()
	if len(ms) != 1 || ms[0].Commit {
		t.Fatalf("abort markers %+v", ms)
	}
	// Markers stopped by a newer producer epoch at a partition: the
	// completion never comes, as in Kafka (a reload finishes it).
	ms[0].Done(map[TopicPartition]int16{tpA: kerr.InvalidProducerEpoch.Code})
	if h.c.Completing("t1") || len(h.c.TakeWrites()) != 0 || len(h.c.TakeMarkers()) != 0 {
		t.Fatal("markers not stopped")
	}
	h.c.Get("t1").hasPending = false // as after a reload without completion
	if code, _ := h.end("t1", 5001, 0, true, 0); code != codeInvalidTxnState {
		t.Fatalf("commit of PrepareAbort: %d", code)
	}
	if code, _ := h.end("t1", 5001, 0, false, 0); code != codeConcurrentTransactions {
		t.Fatalf("abort of PrepareAbort: %d", code)
	}
}

func TestMarkerRetriesAndGonePartitions(t *testing.T) {
	h := ongoing(t)
	h.c.AddPartitions("t1", 5001, 0, []TopicPartition{tpC}, h.now, func(int16) {})
	h.completeWrites(0)
	h.end("t1", 5001, 0, true, 0)
	ms := h.c.TakeMarkers()
	ms[0].Done(map[TopicPartition]int16{tpA: 0, tpB: kerr.NotLeaderForPartition.Code, tpC: kerr.UnknownTopicOrPartition.Code})
	re := h.c.TakeMarkers()
	if len(re) != 1 || !re[0].Retry || len(re[0].Partitions) != 2 || re[0].Partitions[0] != tpB || re[0].Partitions[1] != tpC {
		t.Fatalf("retry %+v", re)
	}
	re[0].Failed(re[0].Partitions) // no response at all: all again
	re2 := h.c.TakeMarkers()
	if len(re2) != 1 || len(re2[0].Partitions) != 2 {
		t.Fatalf("after failure %+v", re2)
	}
	re2[0].Gone([]TopicPartition{tpC}) // deleted meanwhile: skipped
	re2[0].Done(map[TopicPartition]int16{tpB: kerr.UnsupportedForMessageFormat.Code})
	if ws := h.completeWrites(0); len(ws) != 1 || h.state("t1") != CompleteCommit {
		t.Fatalf("not completed: state %s", h.state("t1"))
	}
	// A late answer of a finished send changes nothing.
	ms[0].Done(map[TopicPartition]int16{tpA: 0})
	if len(h.c.TakeWrites())+len(h.c.TakeMarkers()) != 0 {
		t.Fatal("stale marker answer acted on")
	}
}

func TestCompletionRetriedWhileCoordinatorUnavailable(t *testing.T) {
	h := ongoing(t)
	h.end("t1", 5001, 0, false, 0)
	ms := h.c.TakeMarkers()
	ms[0].Done(map[TopicPartition]int16{tpA: 0, tpB: 0})
	h.completeWrites(kerr.NotEnoughReplicas.Code) // → COORDINATOR_NOT_AVAILABLE: retried
	if p, ok := h.c.Get("t1").Pending(); !ok || p != CompleteAbort {
		t.Fatalf("pending dropped: %s %v", p, ok)
	}
	ds := h.c.TakeDelayed()
	if len(ds) != 1 {
		t.Fatalf("%d delayed", len(ds))
	}
	ds[0](h.now)
	if ws := h.completeWrites(0); len(ws) != 1 || h.state("t1") != CompleteAbort {
		t.Fatalf("state %s", h.state("t1"))
	}
}

func TestInitProducerIDFencesOngoing(t *testing.T) {
	h := ongoing(t)
	r := h.initPID("t1", 60000, nil, 0)
	if r.code != codeConcurrentTransactions {
		t.Fatalf("init over ongoing = %+v", r)
	}
	m := h.c.Get("t1")
	if m.State != PrepareAbort || m.ProducerEpoch != 1 {
		t.Fatalf("after fence: %s epoch %d", m.State, m.ProducerEpoch)
	}
	// The zombie (epoch 0) is fenced.
	if code, _ := h.end("t1", 5001, 0, true, 0); code != codeProducerFenced {
		t.Fatalf("zombie commit: %d", code)
	}
	ms := h.c.TakeMarkers()
	if len(ms) != 1 || ms[0].ProducerEpoch != 1 || ms[0].Commit {
		t.Fatalf("fence markers %+v", ms)
	}
	ms[0].Done(map[TopicPartition]int16{tpA: 0, tpB: 0})
	h.completeWrites(0)
	// The retry gets the epoch after the fence.
	if r = h.initPID("t1", 60000, nil, 0); r.code != 0 || r.epoch != 2 {
		t.Fatalf("retry = %+v", r)
	}
}

func TestAbortTimedOut(t *testing.T) {
	h := ongoing(t) // started at 1000 with a 60 s timeout
	if n := h.c.AbortTimedOut(61000, nil); n != 0 {
		t.Fatalf("aborted %d at its deadline", n)
	}
	var got int16 = -99
	if n := h.c.AbortTimedOut(61001, func(id string, code int16) { got = code }); n != 1 {
		t.Fatalf("aborted %d", n)
	}
	ws := h.completeWrites(0)
	if got != 0 || len(ws) != 1 || ws[0].Transit.State != PrepareAbort || ws[0].Transit.ProducerEpoch != 1 {
		t.Fatalf("abort write %+v code %d", ws, got)
	}
	if code, _ := h.end("t1", 5001, 0, true, 0); code != codeProducerFenced {
		t.Fatalf("zombie after timeout: %d", code)
	}
	// Nothing more to abort while it completes.
	if n := h.c.AbortTimedOut(99999, nil); n != 0 {
		t.Fatalf("aborted again: %d", n)
	}
}

func TestFailedEpochFenceDoesNotBumpTwice(t *testing.T) {
	h := ongoing(t)
	h.c.AbortTimedOut(70000, nil)
	h.completeWrites(kerr.NotEnoughReplicas.Code)
	m := h.c.Get("t1")
	if m.State != Ongoing || m.ProducerEpoch != 1 || !m.failedEpochFence || m.hasPending {
		t.Fatalf("after failed fence: %+v", m)
	}
	h.c.AbortTimedOut(70000, nil)
	ws := h.completeWrites(0)
	if len(ws) != 1 || ws[0].Transit.ProducerEpoch != 1 {
		t.Fatalf("second fence epoch %+v", ws)
	}
}

func TestVerifyPartitions(t *testing.T) {
	h := ongoing(t)
	got := h.c.VerifyPartitions("t1", 5001, 0, []TopicPartition{tpA, tpC})
	if got[tpA] != 0 || got[tpC] != codeTransactionAbortable {
		t.Fatalf("verify %v", got)
	}
	if got = h.c.VerifyPartitions("t1", 5001, 1, []TopicPartition{tpA}); got[tpA] != codeProducerFenced {
		t.Fatalf("verify wrong epoch %v", got)
	}
	if got = h.c.VerifyPartitions("t2", 5001, 0, []TopicPartition{tpA}); got[tpA] != codeInvalidProducerIDMap {
		t.Fatalf("verify unknown %v", got)
	}
	if len(h.c.TakeWrites()) != 0 {
		t.Fatal("verify wrote")
	}
}

func TestLoadCompletesPreparedTransactions(t *testing.T) {
	l := NewLoader()
	rec := func(id string, tr Transit) {
		if err := l.Apply(Key(id), Value(tr)); err != nil {
			t.Fatal(err)
		}
	}
	rec("commit", Transit{ProducerID: 1, ProducerEpoch: 2, TimeoutMs: 1000, State: PrepareCommit, Partitions: []TopicPartition{tpA, tpB}, StartTimestamp: 10, UpdateTimestamp: 20})
	rec("done", Transit{ProducerID: 2, ProducerEpoch: 0, TimeoutMs: 1000, State: Ongoing, Partitions: []TopicPartition{tpA}, StartTimestamp: 10, UpdateTimestamp: 20})
	rec("done", Transit{ProducerID: 2, ProducerEpoch: 0, TimeoutMs: 1000, State: CompleteAbort, StartTimestamp: 10, UpdateTimestamp: 30})
	rec("gone", Transit{ProducerID: 3, State: Empty, StartTimestamp: -1})
	if err := l.Apply(Key("gone"), nil); err != nil {
		t.Fatal(err)
	}
	if len(l.Txns) != 2 || l.Txns["done"].State != CompleteAbort || len(l.Txns["done"].Partitions) != 0 {
		t.Fatalf("loaded %+v", l.Txns)
	}
	c := NewCore(0, 9, l.Txns, 100)
	ms := c.TakeMarkers()
	if len(ms) != 1 || ms[0].TransactionalID != "commit" || !ms[0].Commit || ms[0].CoordinatorEpoch != 9 || ms[0].ProducerEpoch != 2 || len(ms[0].Partitions) != 2 {
		t.Fatalf("markers after load %+v", ms)
	}
	ms[0].Done(map[TopicPartition]int16{tpA: 0, tpB: 0})
	ws := c.TakeWrites()
	if len(ws) != 1 || ws[0].Transit.State != CompleteCommit {
		t.Fatalf("completion after load %+v", ws)
	}
	ws[0].Done(0)
	if c.Get("commit").State != CompleteCommit {
		t.Fatalf("state %s", c.Get("commit").State)
	}
}

func TestDecodeRejectsBadRecords(t *testing.T) {
	if _, ok, err := DecodeKey([]byte{0, 1, 0, 0}); ok || err != nil {
		t.Fatalf("unknown key version: ok %v err %v", ok, err)
	}
	if _, _, err := DecodeKey([]byte{0}); err == nil {
		t.Fatal("short key accepted")
	}
	if _, err := DecodeValue("x", []byte{0, 9, 1}); err == nil {
		t.Fatal("unknown value version accepted")
	}
	for _, s := range []State{Dead, PrepareEpochFence, 9} {
		if _, err := DecodeValue("x", Value(Transit{ProducerID: 1, State: s})); err == nil {
			t.Errorf("a record in state %s accepted", s)
		}
	}
	v := Value(Transit{ProducerID: 1, State: Ongoing, Partitions: []TopicPartition{tpA}})
	if _, err := DecodeValue("x", v[:len(v)-3]); err == nil {
		t.Fatal("truncated value accepted")
	}
}

func TestExpireTransactionalIDs(t *testing.T) {
	h := ongoing(t) // t1 ongoing, updated at 1000
	h.initPID("idle", 60000, nil, 0)
	h.now = 5000
	h.initPID("fresh", 60000, nil, 0)
	// At 1000+expiration only "idle" (Empty) is old enough; t1 has a
	// transaction open.
	if n := h.c.ExpireTransactionalIDs(1000+7000, 7000); n != 1 {
		t.Fatalf("expired %d", n)
	}
	// While the tombstone is written the id is pending.
	var code int16 = -99
	h.c.InitProducerID("idle", 60000, nil, h.now, func(_ int64, _ int16, c int16) { code = c })
	if code != codeConcurrentTransactions {
		t.Fatalf("init while expiring: %d", code)
	}
	ws := h.c.TakeWrites()
	if len(ws) != 1 || !ws[0].Tombstone || ws[0].TransactionalID != "idle" {
		t.Fatalf("writes %+v", ws)
	}
	ws[0].Done(0)
	if h.c.Get("idle") != nil || h.c.Get("fresh") == nil || h.c.Get("t1") == nil {
		t.Fatal("wrong ids removed")
	}
	// A failed tombstone keeps the id.
	h.c.ExpireTransactionalIDs(5000+7000, 7000)
	ws = h.c.TakeWrites()
	if len(ws) != 1 || ws[0].TransactionalID != "fresh" {
		t.Fatalf("writes %+v", ws)
	}
	ws[0].Done(kerr.NotEnoughReplicas.Code)
	if m := h.c.Get("fresh"); m == nil || m.hasPending || m.State != Empty {
		t.Fatalf("after failed tombstone %+v", m)
	}
	// An expired id starts over with a new producer id.
	if r := h.initPID("idle", 60000, nil, 0); r.code != 0 || r.pid == 5001 || r.epoch != 0 {
		t.Fatalf("init after expiry %+v", r)
	}
}

func TestDescribeAndList(t *testing.T) {
	h := ongoing(t) // t1 5001 ongoing on a-0, b-1 since 1000
	h.initPID("idle", 60000, nil, 0)
	d, ok := h.c.Describe("t1")
	if !ok || d.State != Ongoing || d.ProducerID != 5001 || d.StartTimestamp != 1000 || d.TimeoutMs != 60000 || len(d.Partitions) != 2 {
		t.Fatalf("describe %+v %v", d, ok)
	}
	if _, ok := h.c.Describe("nope"); ok {
		t.Fatal("unknown id described")
	}
	ids := func(l []Listed) map[string]State {
		out := map[string]State{}
		for _, x := range l {
			out[x.TransactionalID] = x.State
		}
		return out
	}
	if got := ids(h.c.List(ListFilter{DurationMs: -1}, 2000)); len(got) != 2 || got["t1"] != Ongoing || got["idle"] != Empty {
		t.Fatalf("list all %v", got)
	}
	if got := ids(h.c.List(ListFilter{States: map[State]bool{Ongoing: true}, DurationMs: -1}, 2000)); len(got) != 1 || got["t1"] != Ongoing {
		t.Fatalf("list ongoing %v", got)
	}
	if got := ids(h.c.List(ListFilter{ProducerIDs: map[int64]bool{5002: true}, DurationMs: -1}, 2000)); len(got) != 1 || got["idle"] != Empty {
		t.Fatalf("list by producer %v", got)
	}
	// Running longer than 500 ms at 2000: t1 (since 1000); not longer than 1000.
	if got := ids(h.c.List(ListFilter{States: map[State]bool{Ongoing: true}, DurationMs: 500}, 2000)); len(got) != 1 {
		t.Fatalf("list by duration %v", got)
	}
	if got := ids(h.c.List(ListFilter{States: map[State]bool{Ongoing: true}, DurationMs: 1000}, 2000)); len(got) != 0 {
		t.Fatalf("list by duration (equal) %v", got)
	}
}

// TestValidPreviousStates is Kafka's TransactionState.validPreviousStates,
// and a transition from any other state is refused (a panic the actor's
// supervisor turns into a reload).
func TestValidPreviousStates(t *testing.T) {
	want := map[State][]State{
		Empty:             {Empty, CompleteCommit, CompleteAbort},
		Ongoing:           {Ongoing, Empty, CompleteCommit, CompleteAbort},
		PrepareCommit:     {Ongoing},
		PrepareAbort:      {Ongoing, PrepareEpochFence},
		CompleteCommit:    {PrepareCommit},
		CompleteAbort:     {PrepareAbort},
		Dead:              {Empty, CompleteAbort, CompleteCommit},
		PrepareEpochFence: {Ongoing},
	}
	for to, froms := range want {
		ok := map[State]bool{}
		for _, f := range froms {
			ok[f] = true
		}
		for from := Empty; from <= PrepareEpochFence; from++ {
			if got := to.validPrevious(from); got != ok[from] {
				t.Errorf("%s → %s allowed %v, want %v", from, to, got, ok[from])
			}
			m := &Metadata{TransactionalID: "x", ProducerID: 1, ProducerEpoch: 0, State: from, Partitions: map[TopicPartition]struct{}{}}
			panicked := func() (p bool) {
				defer func() { p = recover() != nil }()
				m.prepareTransition(Transit{ProducerID: 1, ProducerEpoch: 0, State: to})
				return false
			}()
			if panicked == ok[from] {
				t.Errorf("%s → %s: panicked %v", from, to, panicked)
			}
		}
	}
}

// TestCheckOrderWhilePending: with a transition pending, InitProducerId
// answers CONCURRENT_TRANSACTIONS before it looks at the producer's epoch,
// while AddPartitions and EndTxn check id and epoch first (Kafka's order).
func TestCheckOrderWhilePending(t *testing.T) {
	h := ongoing(t)
	h.c.AddPartitions("t1", 5001, 0, []TopicPartition{tpC}, h.now, func(int16) {}) // pending Ongoing
	var code int16 = -99
	h.c.InitProducerID("t1", 60000, &ProducerIDAndEpoch{999, 9}, h.now, func(_ int64, _ int16, c int16) { code = c })
	if code != codeConcurrentTransactions {
		t.Errorf("init with a bad producer while pending: %d, want CONCURRENT_TRANSACTIONS", code)
	}
	h.c.AddPartitions("t1", 5001, 7, []TopicPartition{tpA}, h.now, func(c int16) { code = c })
	if code != codeProducerFenced {
		t.Errorf("add with a bad epoch while pending: %d, want PRODUCER_FENCED", code)
	}
	h.c.EndTxn("t1", 42, 0, true, h.now, func(c int16) { code = c })
	if code != codeInvalidProducerIDMap {
		t.Errorf("end with a bad id while pending: %d, want INVALID_PRODUCER_ID_MAPPING", code)
	}
	h.c.EndTxn("t1", 5001, 0, true, h.now, func(c int16) { code = c })
	if code != codeConcurrentTransactions {
		t.Errorf("end while pending: %d, want CONCURRENT_TRANSACTIONS", code)
	}
	if ws := h.completeWrites(0); len(ws) != 1 {
		t.Fatalf("%d writes, want only the add", len(ws))
	}
}

// TestExhaustedEpochWithStaleExpectedEpoch: a KIP-360 InitProducerId with
// an old epoch once the epochs are exhausted is fenced (Kafka throws
// there), never a crash of the coordinator.
func TestExhaustedEpochWithStaleExpectedEpoch(t *testing.T) {
	h := newHarness(t)
	h.initPID("t1", 60000, nil, 0)
	m := h.c.Get("t1")
	m.ProducerEpoch, m.LastProducerEpoch = 32766, 32765
	if r := h.initPID("t1", 60000, &ProducerIDAndEpoch{5001, 12}, 0); r.code != codeProducerFenced {
		t.Fatalf("stale epoch at exhaustion: %+v", r)
	}
	if r := h.initPID("t1", 60000, &ProducerIDAndEpoch{5001, 32765}, 0); r.code != 0 || r.pid != 5001 || r.epoch != 32766 {
		t.Fatalf("retry of the last bump: %+v", r)
	}
}

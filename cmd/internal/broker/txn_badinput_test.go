package broker

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawClient sends requests at exactly the version asked for over one
// connection, with no retry in between (kgo would raise the version and
// retry), so every answer is the broker's own. A request that is not
// answered within 10 s (a hang) or a closed connection fails the test.
type rawClient struct {
	t    *testing.T
	c    net.Conn
	fmtr *kmsg.RequestFormatter
	corr int32
}

func dialRawClient(t *testing.T, addr string) *rawClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, c: c, fmtr: kmsg.NewRequestFormatter(kmsg.FormatterClientID("bad-input"))}
}

// call sends req at version v and decodes the response.
func (r *rawClient) call(v int16, req kmsg.Request) kmsg.Response {
	r.t.Helper()
	req.SetVersion(v)
	r.corr++
	if _, err := r.c.Write(r.fmtr.AppendRequest(nil, req, r.corr)); err != nil {
		r.t.Fatalf("%s v%d: write: %v", kmsg.NameForKey(req.Key()), v, err)
	}
	_ = r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(r.c, size[:]); err != nil {
		r.t.Fatalf("%s v%d: no response (hang or dropped connection): %v", kmsg.NameForKey(req.Key()), v, err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(r.c, body); err != nil {
		r.t.Fatalf("%s v%d: short response: %v", kmsg.NameForKey(req.Key()), v, err)
	}
	rd := kbin.Reader{Src: body}
	if corr := rd.Int32(); corr != r.corr {
		r.t.Fatalf("%s v%d: response for correlation id %d, want %d", kmsg.NameForKey(req.Key()), v, corr, r.corr)
	}
	resp := req.ResponseKind()
	resp.SetVersion(v)
	if resp.IsFlexible() && req.Key() != 18 { // response header v1 (ApiVersions keeps v0): tagged fields
		for n := rd.Uvarint(); n > 0; n-- {
			rd.Uvarint()
			rd.Span(int(rd.Uvarint()))
		}
	}
	if err := resp.ReadFrom(rd.Src); err != nil {
		r.t.Fatalf("%s v%d: decode: %v", kmsg.NameForKey(req.Key()), v, err)
	}
	return resp
}

// armFault posts a request fault to the broker's admin listener.
func armFault(t *testing.T, b *Broker, body string) {
	t.Helper()
	resp, err := http.Post("http://"+b.AdminAddr()+"/faults", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("fault %s: %s %s", body, resp.Status, msg)
	}
}

func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if e := kerr.ErrorForCode(code); e != nil {
		return e.Error()
	}
	return fmt.Sprint(code)
}

// TestTransactionalBadInput sends every transactional API (22, 24, 25, 26,
// 27, 28, 61, 65, 66) malformed or out of order to a real single node at
// the versions that matter and checks each answer is the error code
// Kafka's TransactionCoordinator, KafkaApis, GroupCoordinator and
// ProducerAppendInfo give in the same situation, with the connection
// still open afterwards (one connection serves the whole test).
func TestTransactionalBadInput(t *testing.T) {
	b, cl := startTxnNode(t, map[string]string{
		"admin.listener":             "127.0.0.1:0",
		"transaction.max.timeout.ms": "60000",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "bad"); err != nil {
		t.Fatal(err)
	}
	// Create __transaction_state and wait until every partition is loaded
	// (ListTransactions answers COORDINATOR_LOAD_IN_PROGRESS until then).
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorType, fc.CoordinatorKeys = 1, []string{"bi-a"}
	request(t, cl, fc, func(r *kmsg.FindCoordinatorResponse) int16 { return r.Coordinators[0].ErrorCode })
	request(t, cl, kmsg.NewPtrListTransactionsRequest(), func(r *kmsg.ListTransactionsResponse) int16 { return r.ErrorCode })

	raw := dialRawClient(t, b.Addrs()[0].String())
	check := func(what string, got, want int16) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %s, want %s", what, errName(got), errName(want))
		}
	}
	str := func(s string) *string { return &s }

	// --- InitProducerId (22) ---
	initReq := func(id *string, timeout int32, pid int64, epoch int16) *kmsg.InitProducerIDRequest {
		r := kmsg.NewPtrInitProducerIDRequest()
		r.TransactionalID, r.TransactionTimeoutMillis, r.ProducerID, r.ProducerEpoch = id, timeout, pid, epoch
		return r
	}
	initCode := func(v int16, r *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
		return raw.call(v, r).(*kmsg.InitProducerIDResponse)
	}
	for _, v := range []int16{1, 4} {
		check(fmt.Sprintf("InitProducerId v%d empty transactional id", v), initCode(v, initReq(str(""), 1000, -1, -1)).ErrorCode, kerr.InvalidRequest.Code)
		for _, timeout := range []int32{0, -5, 60001} {
			check(fmt.Sprintf("InitProducerId v%d timeout %d", v, timeout), initCode(v, initReq(str("bi-a"), timeout, -1, -1)).ErrorCode, kerr.InvalidTransactionTimeout.Code)
		}
	}
	// A producer id without an epoch (or the reverse): KafkaApis refuses it.
	check("InitProducerId v3 epoch without producer id", initCode(3, initReq(str("bi-a"), 1000, -1, 3)).ErrorCode, kerr.InvalidRequest.Code)
	check("InitProducerId v3 producer id without epoch", initCode(3, initReq(str("bi-a"), 1000, 77, -1)).ErrorCode, kerr.InvalidRequest.Code)
	// No transactional id: idempotent, the timeout is not looked at.
	if r := initCode(4, initReq(nil, 0, -1, -1)); r.ErrorCode != 0 || r.ProducerID < 0 || r.ProducerEpoch != 0 {
		t.Errorf("idempotent InitProducerId with timeout 0: %s %d/%d", errName(r.ErrorCode), r.ProducerID, r.ProducerEpoch)
	}
	// KIP-360 on an id never seen: the fresh metadata has no epoch, so the
	// producer's stale id and epoch are accepted and a new id handed out.
	if r := initCode(3, initReq(str("bi-fresh"), 1000, 123456, 7)); r.ErrorCode != 0 || r.ProducerID == 123456 || r.ProducerEpoch != 0 {
		t.Errorf("InitProducerId v3 of a new id with a producer id and epoch: %s %d/%d, want a new id at epoch 0", errName(r.ErrorCode), r.ProducerID, r.ProducerEpoch)
	}
	first := initCode(4, initReq(str("bi-a"), 30000, -1, -1))
	if first.ErrorCode != 0 {
		t.Fatalf("InitProducerId bi-a: %s", errName(first.ErrorCode))
	}
	a := initCode(4, initReq(str("bi-a"), 30000, -1, -1)) // epoch 1, so epoch-1 markers are stale
	if a.ErrorCode != 0 || a.ProducerID != first.ProducerID || a.ProducerEpoch != first.ProducerEpoch+1 {
		t.Fatalf("InitProducerId bi-a again: %s %d/%d", errName(a.ErrorCode), a.ProducerID, a.ProducerEpoch)
	}
	pid, epoch := a.ProducerID, a.ProducerEpoch
	// Another producer id for a known transactional id: fenced.
	check("InitProducerId v4 with another producer id", initCode(4, initReq(str("bi-a"), 30000, pid+1000, epoch)).ErrorCode, kerr.ProducerFenced.Code)
	check("InitProducerId v3 with another producer id", initCode(3, initReq(str("bi-a"), 30000, pid+1000, epoch)).ErrorCode, kerr.InvalidProducerEpoch.Code)
	// Its own id with an epoch it never had (neither current nor last).
	check("InitProducerId v4 with a stale epoch", initCode(4, initReq(str("bi-a"), 30000, pid, epoch+5)).ErrorCode, kerr.ProducerFenced.Code)

	// --- EndTxn (26) before anything / in Empty ---
	endReq := func(id string, p int64, e int16, commit bool) *kmsg.EndTxnRequest {
		r := kmsg.NewPtrEndTxnRequest()
		r.TransactionalID, r.ProducerID, r.ProducerEpoch, r.Commit = id, p, e, commit
		return r
	}
	endCode := func(v int16, r *kmsg.EndTxnRequest) int16 { return raw.call(v, r).(*kmsg.EndTxnResponse).ErrorCode }
	check("EndTxn before InitProducerId", endCode(3, endReq("bi-never", 5, 0, true)), kerr.InvalidProducerIDMapping.Code)
	check("EndTxn empty transactional id", endCode(3, endReq("", pid, epoch, true)), kerr.InvalidRequest.Code)
	check("EndTxn commit with no transaction", endCode(3, endReq("bi-a", pid, epoch, true)), kerr.InvalidTxnState.Code)
	check("EndTxn abort with no transaction", endCode(3, endReq("bi-a", pid, epoch, false)), kerr.InvalidTxnState.Code)
	check("EndTxn another producer id", endCode(3, endReq("bi-a", pid+1000, epoch, false)), kerr.InvalidProducerIDMapping.Code)
	check("EndTxn v3 wrong epoch", endCode(3, endReq("bi-a", pid, epoch-1, false)), kerr.ProducerFenced.Code)
	check("EndTxn v1 wrong epoch", endCode(1, endReq("bi-a", pid, epoch-1, false)), kerr.InvalidProducerEpoch.Code)

	// --- AddPartitionsToTxn (24) ---
	addReq := func(id string, p int64, e int16, parts ...int32) *kmsg.AddPartitionsToTxnRequest {
		r := kmsg.NewPtrAddPartitionsToTxnRequest()
		r.TransactionalID, r.ProducerID, r.ProducerEpoch = id, p, e
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = "bad", parts
		r.Topics = append(r.Topics, rt)
		return r
	}
	addCodes := func(v int16, r *kmsg.AddPartitionsToTxnRequest) []int16 {
		resp := raw.call(v, r).(*kmsg.AddPartitionsToTxnResponse)
		var out []int16
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				out = append(out, p.ErrorCode)
			}
		}
		return out
	}
	addCheck := func(what string, v int16, r *kmsg.AddPartitionsToTxnRequest, want int16) {
		t.Helper()
		got := addCodes(v, r)
		if len(got) != len(r.Topics[0].Partitions) {
			t.Errorf("%s: %d partition results for %d partitions", what, len(got), len(r.Topics[0].Partitions))
		}
		for _, c := range got {
			check(what, c, want)
		}
	}
	addCheck("AddPartitionsToTxn unknown transactional id", 3, addReq("bi-never", 5, 0, 0, 1), kerr.InvalidProducerIDMapping.Code)
	addCheck("AddPartitionsToTxn another producer id", 3, addReq("bi-a", pid+1000, epoch, 0), kerr.InvalidProducerIDMapping.Code)
	addCheck("AddPartitionsToTxn v3 wrong epoch", 3, addReq("bi-a", pid, epoch-1, 0), kerr.ProducerFenced.Code)
	addCheck("AddPartitionsToTxn v1 wrong epoch", 1, addReq("bi-a", pid, epoch-1, 0), kerr.InvalidProducerEpoch.Code)
	addCheck("AddPartitionsToTxn empty transactional id", 3, addReq("", pid, epoch, 0), kerr.InvalidRequest.Code)
	// v4 (broker to broker, batched): each transaction answered on its own.
	{
		r := kmsg.NewPtrAddPartitionsToTxnRequest()
		for _, tx := range []struct {
			id    string
			epoch int16
		}{{"bi-never", 0}, {"bi-a", epoch - 1}} {
			rt := kmsg.NewAddPartitionsToTxnRequestTransaction()
			rt.TransactionalID, rt.ProducerID, rt.ProducerEpoch, rt.VerifyOnly = tx.id, pid, tx.epoch, true
			tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
			tt.Topic, tt.Partitions = "bad", []int32{0}
			rt.Topics = append(rt.Topics, tt)
			r.Transactions = append(r.Transactions, rt)
		}
		resp := raw.call(4, r).(*kmsg.AddPartitionsToTxnResponse)
		got := map[string]int16{}
		for _, tr := range resp.Transactions {
			for _, tt := range tr.Topics {
				for _, p := range tt.Partitions {
					got[tr.TransactionalID] = p.ErrorCode
				}
			}
		}
		check("AddPartitionsToTxn v4 verify unknown id", got["bi-never"], kerr.InvalidProducerIDMapping.Code)
		check("AddPartitionsToTxn v4 verify wrong epoch", got["bi-a"], kerr.ProducerFenced.Code)
		if resp.ErrorCode != 0 || len(got) != 2 {
			t.Errorf("AddPartitionsToTxn v4: top-level %s, %d transactions answered", errName(resp.ErrorCode), len(got))
		}
	}

	// --- AddOffsetsToTxn (25) ---
	offReq := func(id string, p int64, e int16, group string) *kmsg.AddOffsetsToTxnRequest {
		r := kmsg.NewPtrAddOffsetsToTxnRequest()
		r.TransactionalID, r.ProducerID, r.ProducerEpoch, r.Group = id, p, e, group
		return r
	}
	offCode := func(v int16, r *kmsg.AddOffsetsToTxnRequest) int16 {
		return raw.call(v, r).(*kmsg.AddOffsetsToTxnResponse).ErrorCode
	}
	check("AddOffsetsToTxn unknown transactional id", offCode(3, offReq("bi-never", 5, 0, "g")), kerr.InvalidProducerIDMapping.Code)
	check("AddOffsetsToTxn empty transactional id", offCode(3, offReq("", pid, epoch, "g")), kerr.InvalidRequest.Code)
	check("AddOffsetsToTxn v3 wrong epoch", offCode(3, offReq("bi-a", pid, epoch-1, "g")), kerr.ProducerFenced.Code)
	check("AddOffsetsToTxn v1 wrong epoch", offCode(1, offReq("bi-a", pid, epoch-1, "g")), kerr.InvalidProducerEpoch.Code)

	// --- TxnOffsetCommit (28), checked against the transaction ---
	tocReq := func(id, group string, p int64, e int16) *kmsg.TxnOffsetCommitRequest {
		r := kmsg.NewPtrTxnOffsetCommitRequest()
		r.TransactionalID, r.Group, r.ProducerID, r.ProducerEpoch, r.Generation, r.MemberID = id, group, p, e, -1, ""
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "bad"
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = 0, 1, -1
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		return r
	}
	tocCode := func(v int16, r *kmsg.TxnOffsetCommitRequest) int16 {
		resp := raw.call(v, r).(*kmsg.TxnOffsetCommitResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Errorf("TxnOffsetCommit: %d topics answered", len(resp.Topics))
			return -1
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	// The group's coordinator (creating __consumer_offsets), as a client
	// finds it before TxnOffsetCommit.
	gfc := kmsg.NewPtrFindCoordinatorRequest()
	gfc.CoordinatorKeys = []string{"g"}
	request(t, cl, gfc, func(r *kmsg.FindCoordinatorResponse) int16 { return r.Coordinators[0].ErrorCode })
	check("TxnOffsetCommit empty group", tocCode(3, tocReq("bi-a", "", pid, epoch)), kerr.InvalidGroupID.Code)
	// With no transaction ongoing, __consumer_offsets is not in one:
	// verification (KIP-890) answers INVALID_TXN_STATE.
	check("TxnOffsetCommit before AddOffsetsToTxn", tocCode(3, tocReq("bi-a", "g", pid, epoch)), kerr.InvalidTxnState.Code)
	check("TxnOffsetCommit unknown transactional id", tocCode(3, tocReq("bi-never", "g", 5, 0)), kerr.InvalidProducerIDMapping.Code)
	check("TxnOffsetCommit wrong epoch", tocCode(3, tocReq("bi-a", "g", pid, epoch-1)), kerr.InvalidProducerEpoch.Code)
	check("TxnOffsetCommit v1 wrong epoch", tocCode(1, tocReq("bi-a", "g", pid, epoch-1)), kerr.InvalidProducerEpoch.Code)
	// v4 clients understand TRANSACTION_ABORTABLE (KIP-890).
	check("TxnOffsetCommit v4 before AddOffsetsToTxn", tocCode(4, tocReq("bi-a", "g", pid, epoch)), kerr.TransactionAbortable.Code)

	// --- A transaction, then its markers held back (PrepareCommit) ---
	addCheck("AddPartitionsToTxn", 3, addReq("bi-a", pid, epoch, 0, 1), 0)
	check("AddOffsetsToTxn", offCode(3, offReq("bi-a", pid, epoch, "g")), 0)
	// Verified now: the group's partition is in the transaction.
	check("TxnOffsetCommit in the transaction", tocCode(3, tocReq("bi-a", "g", pid, epoch)), 0)
	// KIP-447 fencing on the group (Empty, no members): a member id or a
	// generation names a member that is not there.
	stranger := tocReq("bi-a", "g", pid, epoch)
	stranger.MemberID, stranger.Generation = "nobody", 5
	check("TxnOffsetCommit v3 from an unknown member", tocCode(3, stranger), kerr.UnknownMemberID.Code)
	stranger = tocReq("bi-a", "g", pid, epoch)
	stranger.Generation = 5
	check("TxnOffsetCommit v3 with a generation and no member", tocCode(3, stranger), kerr.UnknownMemberID.Code)
	// Hold the next WriteTxnMarkers (the coordinator's, to this broker)
	// for 3 s: the transaction stays in PrepareCommit meanwhile.
	armFault(t, b, `{"request":"WriteTxnMarkers","action":"delay","ms":3000,"count":1}`)
	check("EndTxn commit", endCode(3, endReq("bi-a", pid, epoch, true)), 0)
	check("EndTxn commit retried while the markers are sent", endCode(3, endReq("bi-a", pid, epoch, true)), kerr.ConcurrentTransactions.Code)
	// Kafka moves the metadata to a pending CompleteCommit as soon as the
	// PrepareCommit is written (prepareComplete before the markers go), so
	// any EndTxn meanwhile meets a pending transition first.
	check("EndTxn abort while committing", endCode(3, endReq("bi-a", pid, epoch, false)), kerr.ConcurrentTransactions.Code)
	addCheck("AddPartitionsToTxn while committing", 3, addReq("bi-a", pid, epoch, 1), kerr.ConcurrentTransactions.Code)
	check("AddOffsetsToTxn while committing", offCode(3, offReq("bi-a", pid, epoch, "g")), kerr.ConcurrentTransactions.Code)
	check("InitProducerId while committing", initCode(4, initReq(str("bi-a"), 30000, -1, -1)).ErrorCode, kerr.ConcurrentTransactions.Code)
	// Once committed: a retried commit is NONE, an abort INVALID_TXN_STATE.
	deadline := time.Now().Add(20 * time.Second)
	for {
		c := endCode(3, endReq("bi-a", pid, epoch, true))
		if c == 0 {
			break
		}
		if c != kerr.ConcurrentTransactions.Code || time.Now().After(deadline) {
			t.Fatalf("EndTxn commit retried after the markers: %s", errName(c))
		}
		time.Sleep(50 * time.Millisecond) // the coordinator completes on its own; polled over the wire
	}
	check("EndTxn abort after commit", endCode(3, endReq("bi-a", pid, epoch, false)), kerr.InvalidTxnState.Code)
	// And the reverse: abort, then commit.
	addCheck("AddPartitionsToTxn again", 3, addReq("bi-a", pid, epoch, 0), 0)
	check("EndTxn abort", endCode(3, endReq("bi-a", pid, epoch, false)), 0)
	for {
		c := endCode(3, endReq("bi-a", pid, epoch, false))
		if c == 0 {
			break
		}
		if c != kerr.ConcurrentTransactions.Code || time.Now().After(deadline) {
			t.Fatalf("EndTxn abort retried: %s", errName(c))
		}
		time.Sleep(20 * time.Millisecond)
	}
	check("EndTxn commit after abort", endCode(3, endReq("bi-a", pid, epoch, true)), kerr.InvalidTxnState.Code)

	// --- WriteTxnMarkers (27) from a client ---
	marker := func(p int64, e int16, coordEpoch int32, topic string, parts ...int32) *kmsg.WriteTxnMarkersRequest {
		r := kmsg.NewPtrWriteTxnMarkersRequest()
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = p, e, false, coordEpoch
		mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		mt.Topic, mt.Partitions = topic, parts
		m.Topics = append(m.Topics, mt)
		r.Markers = append(r.Markers, m)
		return r
	}
	markerCodes := func(v int16, r *kmsg.WriteTxnMarkersRequest) map[int32]int16 {
		resp := raw.call(v, r).(*kmsg.WriteTxnMarkersResponse)
		out := map[int32]int16{}
		for _, m := range resp.Markers {
			for _, t := range m.Topics {
				for _, p := range t.Partitions {
					out[p.Partition] = p.ErrorCode
				}
			}
		}
		return out
	}
	if resp := raw.call(1, kmsg.NewPtrWriteTxnMarkersRequest()).(*kmsg.WriteTxnMarkersResponse); len(resp.Markers) != 0 {
		t.Errorf("WriteTxnMarkers with no markers answered %d", len(resp.Markers))
	}
	for _, v := range []int16{0, 1} {
		got := markerCodes(v, marker(pid, epoch, 0, "no-such-topic", 0))
		check(fmt.Sprintf("WriteTxnMarkers v%d unknown topic", v), got[0], kerr.UnknownTopicOrPartition.Code)
		// An unknown partition next to a known one: the known one gets its
		// marker (the producer's current epoch: appended, as Kafka does).
		got = markerCodes(v, marker(pid, epoch, 0, "bad", 0, 9))
		check(fmt.Sprintf("WriteTxnMarkers v%d unknown partition", v), got[9], kerr.UnknownTopicOrPartition.Code)
		check(fmt.Sprintf("WriteTxnMarkers v%d known partition next to an unknown one", v), got[0], 0)
		// Partition 1 has the producer at epoch `epoch` (its commit
		// marker): an older epoch is refused as ProducerAppendInfo does.
		got = markerCodes(v, marker(pid, epoch-1, 0, "bad", 1))
		check(fmt.Sprintf("WriteTxnMarkers v%d stale producer epoch", v), got[1], kerr.InvalidProducerEpoch.Code)
	}

	// A marker from an older coordinator epoch than the last one written
	// for the producer: TRANSACTION_COORDINATOR_FENCED (ProducerAppendInfo
	// checkCoordinatorEpoch; the coordinator stops sending its markers).
	check("WriteTxnMarkers at coordinator epoch 7", markerCodes(1, marker(pid, epoch, 7, "bad", 0))[0], 0)
	check("WriteTxnMarkers at an older coordinator epoch", markerCodes(1, marker(pid, epoch, 6, "bad", 0))[0], kerr.TransactionCoordinatorFenced.Code)

	// --- DescribeProducers (61) ---
	{
		r := kmsg.NewPtrDescribeProducersRequest()
		for _, tp := range []struct {
			topic string
			parts []int32
		}{{"no-such-topic", []int32{0}}, {"bad", []int32{0, 9}}} {
			rt := kmsg.NewDescribeProducersRequestTopic()
			rt.Topic, rt.Partitions = tp.topic, tp.parts
			r.Topics = append(r.Topics, rt)
		}
		resp := raw.call(0, r).(*kmsg.DescribeProducersResponse)
		got := map[string]int16{}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				got[fmt.Sprintf("%s-%d", t.Topic, p.Partition)] = p.ErrorCode
			}
		}
		check("DescribeProducers unknown topic", got["no-such-topic-0"], kerr.UnknownTopicOrPartition.Code)
		check("DescribeProducers unknown partition", got["bad-9"], kerr.UnknownTopicOrPartition.Code)
		if c, ok := got["bad-0"]; !ok || c != 0 {
			t.Errorf("DescribeProducers bad-0 next to bad input: %s (answered %t)", errName(c), ok)
		}
	}

	// --- DescribeTransactions (65) ---
	{
		r := kmsg.NewPtrDescribeTransactionsRequest()
		r.TransactionalIDs = []string{"bi-never", "", "bi-a"}
		resp := raw.call(0, r).(*kmsg.DescribeTransactionsResponse)
		got := map[string]int16{}
		for _, s := range resp.TransactionStates {
			got[s.TransactionalID] = s.ErrorCode
		}
		check("DescribeTransactions unknown id", got["bi-never"], kerr.TransactionalIDNotFound.Code)
		check("DescribeTransactions empty id", got[""], kerr.InvalidRequest.Code)
		if c, ok := got["bi-a"]; !ok || c != 0 || len(resp.TransactionStates) != 3 {
			t.Errorf("DescribeTransactions bi-a: %s (answered %t), %d states", errName(c), ok, len(resp.TransactionStates))
		}
	}

	// --- ListTransactions (66) ---
	{
		r := kmsg.NewPtrListTransactionsRequest()
		r.StateFilters = []string{"Bogus", "CompleteAbort"}
		resp := raw.call(0, r).(*kmsg.ListTransactionsResponse)
		if resp.ErrorCode != 0 || len(resp.UnknownStateFilters) != 1 || resp.UnknownStateFilters[0] != "Bogus" {
			t.Errorf("ListTransactions with an unknown state: %s, unknown %v", errName(resp.ErrorCode), resp.UnknownStateFilters)
		}
		if len(resp.TransactionStates) != 1 || resp.TransactionStates[0].TransactionalID != "bi-a" {
			t.Errorf("ListTransactions CompleteAbort: %+v, want bi-a", resp.TransactionStates)
		}
		r = kmsg.NewPtrListTransactionsRequest()
		r.StateFilters = []string{"Bogus"}
		if resp := raw.call(0, r).(*kmsg.ListTransactionsResponse); resp.ErrorCode != 0 || len(resp.TransactionStates) != 0 {
			t.Errorf("ListTransactions with only an unknown state: %s, %d listed", errName(resp.ErrorCode), len(resp.TransactionStates))
		}
	}

	// The one connection answered everything: still open and serving.
	av := kmsg.NewPtrApiVersionsRequest()
	av.ClientSoftwareName, av.ClientSoftwareVersion = "gregor-test", "1"
	if resp := raw.call(3, av).(*kmsg.ApiVersionsResponse); resp.ErrorCode != 0 {
		t.Errorf("ApiVersions at the end: %s", errName(resp.ErrorCode))
	}
}

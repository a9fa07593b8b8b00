package integration

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage/record"
	"gregor/test/harness"
)

// TestTxnVerificationPipelined: a transactional producer with several
// requests in flight (kgo and the Java producer send up to 5) pipelines
// produces of consecutive sequences to a partition whose transaction is
// not verified yet. Each of them waits for the verification, and they are
// appended in the order sent: all succeed at consecutive offsets, none is
// refused OUT_OF_ORDER_SEQUENCE_NUMBER because a later one overtook the
// first after the coordinator's answers. Several transactions, so that
// the coordinator's answers have a chance to come back out of order.
func TestTxnVerificationPipelined(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{"transaction.state.log.num.partitions": "2"})
	createTopic(t, b, "tvp", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r := newTxnRaw(t, ctx, b, "tvp-txn", "tvp")

	conn, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(15 * time.Second)); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(conn)
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("pipelined"))
	const inflight, perBatch, rounds = 5, 2, 10
	var corr int32
	var next int64 // the partition's next offset
	for round := 0; round < rounds; round++ {
		r.addPartitions(0)
		var frames []byte
		first := corr
		for i := 0; i < inflight; i++ {
			recs := []record.BatchRecord{{Value: []byte("a")}, {Value: []byte("b"), TimestampDelta: 1}}
			batch, err := record.BuildBatch(record.BatchOptions{PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli(), Transactional: true,
				Producer: &record.Producer{ID: r.pid, Epoch: r.epoch, BaseSequence: r.nextSeq[0]}}, recs)
			if err != nil {
				t.Fatal(err)
			}
			r.nextSeq[0] += perBatch
			req := harness.ProduceRequest("tvp", 0, batch, -1, 10*time.Second)
			req.TransactionID, req.Version = &r.id, 8 // v8: a response header without tagged fields
			frames = append(frames, f.AppendRequest(nil, req, corr)...)
			corr++
		}
		if _, err := conn.Write(frames); err != nil { // all sent before any answer is read
			t.Fatal(err)
		}
		for i := 0; i < inflight; i++ {
			var size [4]byte
			if _, err := io.ReadFull(rd, size[:]); err != nil {
				t.Fatal(err)
			}
			body := make([]byte, binary.BigEndian.Uint32(size[:]))
			if _, err := io.ReadFull(rd, body); err != nil {
				t.Fatal(err)
			}
			if got := int32(binary.BigEndian.Uint32(body)); got != first+int32(i) {
				t.Fatalf("round %d produce %d: response correlation %d, want %d", round, i, got, first+int32(i))
			}
			resp := kmsg.NewPtrProduceResponse()
			resp.Version = 8
			if err := resp.ReadFrom(body[4:]); err != nil {
				t.Fatal(err)
			}
			p := resp.Topics[0].Partitions[0]
			if p.ErrorCode != 0 || p.BaseOffset != next {
				t.Fatalf("round %d produce %d: %v at %d, want offset %d", round, i, kerr.ErrorForCode(p.ErrorCode), p.BaseOffset, next)
			}
			next += perBatch
		}
		r.abort()
		next++ // the marker
		if lso, hw := r.offsets(0); lso != next || hw != next {
			t.Fatalf("round %d after the abort: lso %d hw %d, want %d", round, lso, hw, next)
		}
	}
}

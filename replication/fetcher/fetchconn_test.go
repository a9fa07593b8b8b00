package fetcher

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire/security/clientsec"
)

// fakeLeader accepts one connection on 127.0.0.1 and answers each Fetch
// request with the next of answers: a record-batches payload to put in a
// v12 response for partition 0 (the correlation id is the request's,
// plus corrDelta). A nil entry means: read the request, answer nothing.
type fakeLeader struct {
	ln        net.Listener
	answers   chan []byte
	corrDelta int32
	stop      chan struct{} // closed by the test's cleanup
	done      chan struct{} // closed when serve returns
}

func startFakeLeader(t *testing.T, corrDelta int32) *fakeLeader {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &fakeLeader{ln: ln, answers: make(chan []byte, 8), corrDelta: corrDelta, stop: make(chan struct{}), done: make(chan struct{})}
	go fl.serve()
	t.Cleanup(func() { close(fl.stop); ln.Close(); <-fl.done })
	return fl
}

func (fl *fakeLeader) serve() {
	defer close(fl.done)
	c, err := fl.ln.Accept()
	if err != nil {
		return
	}
	defer c.Close()
	go func() {
		select {
		case <-fl.stop:
			c.Close() // ends a read blocked below
		case <-fl.done:
		}
	}()
	for {
		var size [4]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return
		}
		req := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(c, req); err != nil {
			return
		}
		if key, version := binary.BigEndian.Uint16(req), binary.BigEndian.Uint16(req[2:]); key != 1 || version != fetchVersion {
			return
		}
		corr := int32(binary.BigEndian.Uint32(req[4:]))
		batches, ok := <-fl.answers
		if !ok {
			return
		}
		if batches == nil {
			continue
		}
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = fetchVersion
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = "t"
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.RecordBatches = batches
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		body := binary.BigEndian.AppendUint32(nil, uint32(corr+fl.corrDelta))
		body = append(body, 0) // no tagged fields in the header
		body = resp.AppendTo(body)
		if _, err := c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)); err != nil {
			return
		}
	}
}

func fetchReq() *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis = 2, 500
	return req
}

func batchesOf(t *testing.T, resp *kmsg.FetchResponse) []byte {
	t.Helper()
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("response %+v", resp)
	}
	return resp.Topics[0].Partitions[0].RecordBatches
}

// The response buffer is reused by the next fetch until detach gives it
// away; a detached response keeps its bytes while later ones are read.
func TestFetchConnReusesItsBufferUntilDetached(t *testing.T) {
	fl := startFakeLeader(t, 0)
	fc := newFetchConn(fl.ln.Addr().String(), "test", clientsec.Client{}, 5*time.Second, -1)
	defer fc.close()
	ctx := context.Background()
	one, two, three := bytes.Repeat([]byte{1}, 1000), bytes.Repeat([]byte{2}, 1000), bytes.Repeat([]byte{3}, 1000)
	fl.answers <- one
	fl.answers <- two
	fl.answers <- three
	r1, err := fc.fetch(ctx, fetchReq())
	if err != nil {
		t.Fatal(err)
	}
	b1 := batchesOf(t, r1)
	if !bytes.Equal(b1, one) {
		t.Fatalf("first response batches % x…", b1[:4])
	}
	r2, err := fc.fetch(ctx, fetchReq())
	if err != nil {
		t.Fatal(err)
	}
	b2 := batchesOf(t, r2)
	if &b2[0] != &b1[0] || !bytes.Equal(b1, two) {
		t.Fatal("second response not read into the first one's buffer")
	}
	fc.detach()
	r3, err := fc.fetch(ctx, fetchReq())
	if err != nil {
		t.Fatal(err)
	}
	if b3 := batchesOf(t, r3); &b3[0] == &b2[0] || !bytes.Equal(b3, three) {
		t.Fatal("after detach the response reused the detached buffer")
	}
	if !bytes.Equal(b2, two) {
		t.Fatal("a detached response's batches changed")
	}
}

// A response for another correlation id is an error and drops the
// connection.
func TestFetchConnRejectsAnotherCorrelationID(t *testing.T) {
	fl := startFakeLeader(t, 7)
	fc := newFetchConn(fl.ln.Addr().String(), "test", clientsec.Client{}, 5*time.Second, -1)
	defer fc.close()
	fl.answers <- []byte{}
	if _, err := fc.fetch(context.Background(), fetchReq()); err == nil {
		t.Fatal("mismatched correlation id accepted")
	}
	if fc.conn != nil {
		t.Fatal("connection kept after a protocol error")
	}
}

// Cancelling the context ends a fetch the leader never answers.
func TestFetchConnCancel(t *testing.T) {
	fl := startFakeLeader(t, 0)
	fc := newFetchConn(fl.ln.Addr().String(), "test", clientsec.Client{}, 5*time.Second, -1)
	defer fc.close()
	fl.answers <- nil // read the request, never answer
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := fc.fetch(ctx, fetchReq())
		errc <- err
	}()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("fetch did not end on cancel")
	}
}

func TestSkipTags(t *testing.T) {
	b := []byte{2, 0, 1, 0xAA, 5, 2, 0xBB, 0xCC, 0x42}
	rest, err := skipTags(b)
	if err != nil || !bytes.Equal(rest, []byte{0x42}) {
		t.Fatalf("skipTags = % x, %v", rest, err)
	}
	if _, err := skipTags([]byte{1, 0, 3, 0xAA}); err == nil {
		t.Fatal("truncated tag accepted")
	}
}

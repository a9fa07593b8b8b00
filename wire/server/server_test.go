package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestKgoApiVersionsAndMetadata(t *testing.T) {
	e := startServer(t, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.addr), kgo.ClientID("server-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	avResp, err := cl.Request(ctx, kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		t.Fatal(err)
	}
	av := avResp.(*kmsg.ApiVersionsResponse)
	if av.ErrorCode != 0 || len(av.ApiKeys) != len(e.d.Supported()) {
		t.Fatalf("ApiVersions: error %d, %d keys", av.ErrorCode, len(av.ApiKeys))
	}

	mdResp, err := cl.Request(ctx, metadataReq(0, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	md := mdResp.(*kmsg.MetadataResponse)
	if md.Version != 12 { // kgo picks the max we advertise
		t.Errorf("Metadata served at v%d; want v12", md.Version)
	}
	if len(md.Brokers) != 1 || md.Brokers[0].Port != e.d.port || len(md.Topics) != 1 || *md.Topics[0].Topic != "orders" {
		t.Fatalf("unexpected metadata: %+v", md)
	}
	if e.srv.Stats.Requests.Load() < 2 || e.srv.Stats.BytesIn.Load() == 0 || e.srv.Stats.BytesOut.Load() == 0 {
		t.Errorf("stats not counted: %d requests, %d in, %d out",
			e.srv.Stats.Requests.Load(), e.srv.Stats.BytesIn.Load(), e.srv.Stats.BytesOut.Load())
	}
}

// Every version of Metadata and ApiVersions we serve round-trips over a raw
// connection, flexible and not (response header v0 vs v1).
func TestRawRoundTripEveryVersion(t *testing.T) {
	e := startServer(t, nil)
	c := dialRaw(t, e.addr)
	for v := int16(0); v <= 12; v++ {
		md := c.roundTrip(metadataReq(v, "t1", "t2")).(*kmsg.MetadataResponse)
		if len(md.Topics) != 2 || len(md.Brokers) != 1 {
			t.Fatalf("v%d: %d topics %d brokers", v, len(md.Topics), len(md.Brokers))
		}
	}
	for v := int16(0); v <= 4; v++ {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = v
		req.ClientSoftwareName, req.ClientSoftwareVersion = "raw", "1.0"
		av := c.roundTrip(req).(*kmsg.ApiVersionsResponse)
		if av.ErrorCode != 0 || len(av.ApiKeys) == 0 {
			t.Fatalf("ApiVersions v%d: error %d", v, av.ErrorCode)
		}
	}
}

// KIP-511: ApiVersions above what we serve gets a v0 response with
// UNSUPPORTED_VERSION and our ranges, and the connection stays usable.
func TestApiVersionsUnsupportedVersion(t *testing.T) {
	e := startServer(t, nil)
	c := dialRaw(t, e.addr)
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 5
	corr := c.send(req)
	v0 := kmsg.NewPtrApiVersionsRequest()
	v0.Version = 0
	got, resp, err := c.recv(v0) // the answer is encoded at v0
	if err != nil || got != corr {
		t.Fatalf("recv: corr %d, %v", got, err)
	}
	av := resp.(*kmsg.ApiVersionsResponse)
	if av.ErrorCode != kerr.UnsupportedVersion.Code || len(av.ApiKeys) != len(e.d.Supported()) {
		t.Fatalf("error %d, %d keys", av.ErrorCode, len(av.ApiKeys))
	}
	var found bool
	for _, k := range av.ApiKeys {
		found = found || (k.ApiKey == 18 && k.MaxVersion == 4)
	}
	if !found {
		t.Fatal("ApiVersions range missing from the error response")
	}
	c.roundTrip(metadataReq(1))
}

// Another key at a version we don't serve closes the connection, even
// when the response type has a top-level ErrorCode: at many versions that
// field is not encoded, so an answer would decode as success.
func TestUnsupportedVersionOtherKeys(t *testing.T) {
	e := startServer(t, nil)
	for _, req := range []kmsg.Request{
		func() kmsg.Request {
			fc := kmsg.NewPtrFindCoordinatorRequest()
			fc.Version, fc.CoordinatorKey = 3, "g"
			return fc
		}(),
		kmsg.NewPtrCreateTopicsRequest(), // not served at all
	} {
		c := dialRaw(t, e.addr)
		c.send(req)
		c.expectClosed()
	}
	if !e.logged("unsupported API version") {
		t.Error("no log line for the unsupported version")
	}
}

// Later replies resolved in reverse order still leave in request order.
func TestResponsesInRequestOrder(t *testing.T) {
	e := startServer(t, nil)
	const n = 16
	e.d.setLaterBatch(n)
	c := dialRaw(t, e.addr)
	var reqs []*kmsg.HeartbeatRequest
	for i := 0; i < n; i++ {
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Version = int16(i % 5) // mix flexible (v4) and not
		hb.Group, hb.MemberID = "g", fmt.Sprintf("m-%d", i)
		reqs = append(reqs, hb)
		c.send(hb)
	}
	for i := 0; i < n; i++ {
		corr, resp, err := c.recv(reqs[i])
		if err != nil {
			t.Fatal(err)
		}
		if corr != int32(i+1) {
			t.Fatalf("response %d has correlation id %d; want %d", i, corr, i+1)
		}
		if th := resp.(*kmsg.HeartbeatResponse).ThrottleMillis; reqs[i].Version >= 1 && th != int32(i) {
			t.Fatalf("response %d carries member %d", i, th)
		}
	}
}

func TestProduceAliasesFrameAndAcksZeroSendsNothing(t *testing.T) {
	e := startServer(t, nil)
	c := dialRaw(t, e.addr)
	mk := func(acks int16) *kmsg.ProduceRequest {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 9, acks, 1000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = bytes.Repeat([]byte{0xAB}, 100)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return req
	}
	c.send(mk(0)) // no response at all
	md := metadataReq(4)
	corr := c.send(md)
	got, _, err := c.recv(md)
	if err != nil || got != corr {
		t.Fatalf("after acks=0: next response has corr %d (want %d), %v", got, corr, err)
	}
	pr := c.roundTrip(mk(1)).(*kmsg.ProduceResponse)
	if pr.ThrottleMillis != 1 {
		t.Fatal("Produce RecordBatches do not alias the request frame")
	}
}

// A panic inside the dispatcher closes that connection only.
func TestHandlerPanicClosesOnlyThatConnection(t *testing.T) {
	e := startServer(t, nil)
	good := dialRaw(t, e.addr)
	good.roundTrip(metadataReq(1))
	bad := dialRaw(t, e.addr)
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorKey = 2, "panic"
	bad.send(fc)
	bad.expectClosed()
	good.roundTrip(metadataReq(1))
	fc.CoordinatorKey = "ok"
	if r := good.roundTrip(fc).(*kmsg.FindCoordinatorResponse); r.NodeID != 1 {
		t.Fatalf("FindCoordinator NodeID %d", r.NodeID)
	}
	var stack bool
	for _, l := range e.logs.All() {
		if l.Message == "panic while handling request; closing connection" {
			_, stack = l.ContextMap()["stack"]
		}
	}
	if !stack {
		t.Fatal("panic not logged with its stack")
	}
	waitFor(t, "one open connection", func() bool { return e.srv.Stats.ConnectionsOpen.Load() == 1 })
}

// Bad frames close their own connection only, with a log line that says why.
func TestBadFramesCloseOnlyTheirConnection(t *testing.T) {
	e := startServer(t, func(c *Config) { c.SocketRequestMaxBytes = 1 << 20 })
	good := dialRaw(t, e.addr)
	good.roundTrip(metadataReq(1))

	frame := func(size int32, body []byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(size)), body...)
	}
	validHeader := func(key, version int16) []byte {
		b := binary.BigEndian.AppendUint16(nil, uint16(key))
		b = binary.BigEndian.AppendUint16(b, uint16(version))
		b = binary.BigEndian.AppendUint32(b, 1)
		return binary.BigEndian.AppendUint16(b, 0) // client id ""
	}
	cases := []struct {
		name     string
		bytes    []byte
		closeW   bool
		logMatch string
	}{
		{"garbage", []byte("this is not kafka at all\r\n\r\n"), false, "outside [0, socket.request.max.bytes"},
		{"negative length", frame(-5, nil), false, "request size -5 outside"},
		{"oversized length", frame(1<<20+1, nil), false, "request size 1048577 outside"},
		{"truncated frame", frame(100, []byte{0, 3, 0, 1}), true, "truncated request frame"},
		{"short header", frame(3, []byte{0, 3, 0}), false, "malformed request header"},
		{"unknown key", frame(10, append(validHeader(9999, 0), 0, 0)[:10]), false, "unknown API key"},
		{"undecodable body", frame(int32(len(validHeader(3, 1))+2), append(validHeader(3, 1), 0x7f, 0x7f)), false, "cannot decode request body"},
		{"bad client id", frame(10, []byte{0, 3, 0, 1, 0, 0, 0, 1, 0x7f, 0x7f}), false, "malformed request header"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := dialRaw(t, e.addr)
			if _, err := bad.c.Write(tc.bytes); err != nil {
				t.Fatal(err)
			}
			if tc.closeW {
				bad.c.(*net.TCPConn).CloseWrite()
			}
			bad.expectClosed()
			if !e.logged(tc.logMatch) {
				t.Errorf("no log line containing %q", tc.logMatch)
			}
			good.roundTrip(metadataReq(1, "still-served"))
		})
	}
	waitFor(t, "only the good connection open", func() bool { return e.srv.Stats.ConnectionsOpen.Load() == 1 })
}

func fetchReq(version int16, parts [][2]int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxBytes = version, 1<<30
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "seg"
	rt.TopicID[0] = 7
	for i, p := range parts {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = int32(i), p[0], int32(p[1])
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// checkFetch verifies every partition's records are exactly the file range asked for.
func checkFetch(e *testEnv, req *kmsg.FetchRequest, resp *kmsg.FetchResponse) error {
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != len(req.Topics[0].Partitions) {
		return fmt.Errorf("response shape: %d topics", len(resp.Topics))
	}
	for i, rp := range req.Topics[0].Partitions {
		got := resp.Topics[0].Partitions[i].RecordBatches
		want := e.data[rp.FetchOffset : rp.FetchOffset+int64(rp.PartitionMaxBytes)]
		if !bytes.Equal(got, want) {
			return fmt.Errorf("partition %d: %d bytes, content differs from file range [%d,+%d)", i, len(got), rp.FetchOffset, rp.PartitionMaxBytes)
		}
	}
	return nil
}

// Many connections fetch overlapping regions of ONE shared *os.File through
// the writer's sendfile path; every byte is checked.
func TestConcurrentFetchesShareOneFile(t *testing.T) {
	e := startServer(t, nil)
	const conns, rounds = 12, 4
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := 0; i < conns; i++ {
		c := dialRaw(t, e.addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var reqs []*kmsg.FetchRequest
			for r := 0; r < rounds; r++ { // pipelined
				v := int16(4 + (i+r)%13) // v4..v16, flexible and not
				off := int64(i*100_000 + r*7_777)
				req := fetchReq(v, [][2]int64{{off, 300_000}, {off + 1, 1}, {off / 2, 0}, {int64(r) * 50_000, 123_457}})
				reqs = append(reqs, req)
				c.corr++
				if _, err := c.c.Write(c.fmtr.AppendRequest(nil, req, c.corr)); err != nil {
					errs <- err
					return
				}
			}
			for r, req := range reqs {
				corr, resp, err := c.recv(req)
				if err == nil && corr != int32(r+1) {
					err = fmt.Errorf("correlation id %d; want %d", corr, r+1)
				}
				if err == nil {
					err = checkFetch(e, req, resp.(*kmsg.FetchResponse))
				}
				if err != nil {
					errs <- fmt.Errorf("conn %d round %d (v%d): %w", i, r, req.Version, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Closing the server releases abandoned bodies and stops every goroutine
// (goleak in TestMain checks the latter), including while a Later reply is
// outstanding.
func TestCloseWithOutstandingLaterReply(t *testing.T) {
	e := startServer(t, nil)
	e.d.setLaterBatch(1000) // never answered
	c := dialRaw(t, e.addr)
	hb := kmsg.NewPtrHeartbeatRequest()
	c.send(hb)
	waitFor(t, "heartbeat dispatched", func() bool {
		e.d.mu.Lock()
		defer e.d.mu.Unlock()
		return len(e.d.laters) == 1
	})
	done := make(chan error, 1)
	go func() { done <- e.srv.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close blocked on an unanswered Later reply")
	}
	c.expectClosed()
	if n := e.srv.Stats.ConnectionsOpen.Load(); n != 0 {
		t.Fatalf("%d connections open after Close", n)
	}
}

// Back-pressure: with MaxInFlightPerConn=2 and replies withheld, the reader
// stops after filling the queue (2) plus the one it holds.
func TestInFlightBound(t *testing.T) {
	e := startServer(t, func(c *Config) { c.MaxInFlightPerConn = 2 })
	e.d.setLaterBatch(6)
	c := dialRaw(t, e.addr)
	var reqs []*kmsg.HeartbeatRequest
	for i := 0; i < 6; i++ {
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Version, hb.MemberID = 4, fmt.Sprintf("m-%d", i)
		reqs = append(reqs, hb)
		c.send(hb)
	}
	// The writer holds one (waiting on it), the queue two, the reader blocks
	// enqueueing a fourth: at most 4 dispatched, so none answered yet.
	waitFor(t, "4 dispatched", func() bool {
		e.d.mu.Lock()
		defer e.d.mu.Unlock()
		return len(e.d.laters) == 4
	})
	if got := e.srv.Stats.Requests.Load(); got != 4 {
		t.Fatalf("%d requests read with the queue full; want 4", got)
	}
	// Release them by lowering the batch: the next arrival answers all.
	e.d.mu.Lock()
	for i := len(e.d.laters) - 1; i >= 0; i-- {
		resp := kmsg.NewPtrHeartbeatResponse()
		resp.ThrottleMillis = e.d.memberNums[i]
		e.d.laters[i] <- wireResp(resp)
	}
	e.d.laters, e.d.memberNums = nil, nil
	e.d.laterBatch = 2
	e.d.mu.Unlock()
	for i := 0; i < 6; i++ {
		_, resp, err := c.recv(reqs[i])
		if err != nil {
			t.Fatal(err)
		}
		if th := resp.(*kmsg.HeartbeatResponse).ThrottleMillis; th != int32(i) {
			t.Fatalf("response %d carries member %d", i, th)
		}
	}
}

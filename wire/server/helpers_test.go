package server

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"gregor/config"
	"gregor/storage"
	"gregor/wire"
	"gregor/wire/fetchresp"
	"gregor/wire/security"
)

// fakeDispatcher serves a handful of APIs the way real handlers would shape
// their replies:
//   - Metadata (3): a fixed response naming this broker and the requested topics.
//   - ApiVersions (18): our ranges.
//   - Fetch (1): for each partition, the region [FetchOffset, FetchOffset+PartitionMaxBytes)
//     of the shared file, as a wire.Body built by fetchresp (so sendfile is used).
//   - Heartbeat (12): Later replies, answered in REVERSE order once
//     laterBatch of them are outstanding; ThrottleMillis echoes the number in
//     MemberID ("m-<n>").
//   - Produce (0): acks=0 → None; else a response whose ThrottleMillis is 1
//     when the first partition's records alias RequestContext.Raw.
//   - FindCoordinator (10) v0-2: Key "panic" panics; otherwise NodeID 1.
type fakeDispatcher struct {
	host string
	port int32
	file *os.File // shared segment for Fetch

	laterBatch int
	mu         sync.Mutex
	laters     []chan wire.Response
	memberNums []int32

	released sync.WaitGroup // one Add per Fetch body, Done in Release
	fetches  int64

	principals []security.Principal // of every Metadata request, in order (under mu)
}

func (d *fakeDispatcher) Supported() []wire.ApiRange {
	return []wire.ApiRange{
		{Key: 0, MinVersion: 3, MaxVersion: 9},
		{Key: 1, MinVersion: 4, MaxVersion: 16},
		{Key: 3, MinVersion: 0, MaxVersion: 12},
		{Key: 10, MinVersion: 0, MaxVersion: 2},
		{Key: 12, MinVersion: 0, MaxVersion: 4},
		{Key: 17, MinVersion: 0, MaxVersion: 1},
		{Key: 18, MinVersion: 0, MaxVersion: 4},
		{Key: 36, MinVersion: 0, MaxVersion: 2},
	}
}

func (d *fakeDispatcher) Handle(rc *wire.RequestContext, req kmsg.Request) wire.Reply {
	switch r := req.(type) {
	case *kmsg.MetadataRequest:
		d.mu.Lock()
		d.principals = append(d.principals, rc.Principal)
		d.mu.Unlock()
		if len(r.Topics) == 1 && r.Topics[0].Topic != nil && *r.Topics[0].Topic == "panic-encode" {
			return wire.Now(wire.Response{Msg: panicOnEncode{r.ResponseKind().(*kmsg.MetadataResponse)}})
		}
		if len(r.Topics) == 1 && r.Topics[0].Topic != nil && *r.Topics[0].Topic == "wrong-key" {
			return wire.Now(wire.Response{Msg: kmsg.NewPtrHeartbeatResponse()})
		}
		resp := r.ResponseKind().(*kmsg.MetadataResponse)
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = 1, d.host, d.port
		resp.Brokers = append(resp.Brokers, b)
		resp.ControllerID = 1
		who := rc.Principal.String() + " " + string(rc.Protocol) // what the TLS tests check
		resp.ClusterID = &who
		for _, rt := range r.Topics {
			t := kmsg.NewMetadataResponseTopic()
			t.Topic = rt.Topic
			p := kmsg.NewMetadataResponseTopicPartition()
			p.Leader, p.Replicas, p.ISR = 1, []int32{1}, []int32{1}
			t.Partitions = append(t.Partitions, p)
			resp.Topics = append(resp.Topics, t)
		}
		return wire.Now(wire.Response{Msg: resp})
	case *kmsg.ApiVersionsRequest:
		resp := r.ResponseKind().(*kmsg.ApiVersionsResponse)
		for _, s := range d.Supported() {
			k := kmsg.NewApiVersionsResponseApiKey()
			k.ApiKey, k.MinVersion, k.MaxVersion = s.Key, s.MinVersion, s.MaxVersion
			resp.ApiKeys = append(resp.ApiKeys, k)
		}
		return wire.Now(wire.Response{Msg: resp})
	case *kmsg.FetchRequest:
		resp := r.ResponseKind().(*kmsg.FetchResponse)
		var regions [][]storage.Region
		for _, rt := range r.Topics {
			t := kmsg.NewFetchResponseTopic()
			t.Topic, t.TopicID = rt.Topic, rt.TopicID
			var rs []storage.Region
			for _, rp := range rt.Partitions {
				p := kmsg.NewFetchResponseTopicPartition()
				p.Partition, p.HighWatermark = rp.Partition, rp.FetchOffset+int64(rp.PartitionMaxBytes)
				t.Partitions = append(t.Partitions, p)
				rs = append(rs, storage.Region{File: d.file, Pos: rp.FetchOffset, Len: int64(rp.PartitionMaxBytes)})
			}
			resp.Topics = append(resp.Topics, t)
			regions = append(regions, rs)
		}
		d.released.Add(1)
		var once sync.Once
		body := fetchresp.Build(rc.Version, resp, func(t, p int) []storage.Region {
			return []storage.Region{regions[t][p]}
		}, func() { once.Do(d.released.Done) })
		return wire.Now(wire.Response{Body: body})
	case *kmsg.HeartbeatRequest:
		n, _ := strconv.Atoi(strings.TrimPrefix(r.MemberID, "m-"))
		ch := make(chan wire.Response, 1)
		d.mu.Lock()
		d.laters = append(d.laters, ch)
		d.memberNums = append(d.memberNums, int32(n))
		if len(d.laters) == d.laterBatch {
			for i := len(d.laters) - 1; i >= 0; i-- { // reverse order
				resp := kmsg.NewPtrHeartbeatResponse()
				resp.ThrottleMillis = d.memberNums[i]
				d.laters[i] <- wire.Response{Msg: resp}
			}
			d.laters, d.memberNums = nil, nil
		}
		d.mu.Unlock()
		return wire.Later(ch)
	case *kmsg.ProduceRequest:
		if r.Acks == 0 {
			return wire.Now(wire.Response{None: true})
		}
		resp := r.ResponseKind().(*kmsg.ProduceResponse)
		if len(r.Topics) > 0 && len(r.Topics[0].Partitions) > 0 {
			rb := r.Topics[0].Partitions[0].Records
			if len(rb) > 0 && aliases(rc.Raw, rb) {
				resp.ThrottleMillis = 1
			}
		}
		return wire.Now(wire.Response{Msg: resp})
	case *kmsg.FindCoordinatorRequest:
		if r.CoordinatorKey == "panic" {
			panic("handler exploded")
		}
		resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.NodeID, resp.Host, resp.Port = 1, d.host, d.port
		// "close": answer, then close the connection (Response.CloseConn).
		return wire.Now(wire.Response{Msg: resp, CloseConn: r.CoordinatorKey == "close"})
	case *kmsg.SASLHandshakeRequest: // after authentication, as the handlers answer
		resp := r.ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	panic(fmt.Sprintf("fake dispatcher: unexpected %T", req))
}

// aliases reports whether sub lies inside buf's memory.
func aliases(buf, sub []byte) bool {
	if len(buf) == 0 || len(sub) == 0 {
		return false
	}
	for i := range buf {
		if &buf[i] == &sub[0] {
			return true
		}
	}
	return false
}

// pattern is deterministic file content where every range is distinct.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte((i*7 + i/251) % 256)
	}
	return b
}

type testEnv struct {
	srv  *Server
	d    *fakeDispatcher
	addr string
	data []byte // the shared file's content
	logs *observer.ObservedLogs
}

// startServer runs a Server on 127.0.0.1:0 with a fake dispatcher; it is
// closed (and every goroutine awaited) at test cleanup.
func startServer(t testing.TB, mod func(*Config)) *testEnv {
	t.Helper()
	data := pattern(4 << 20)
	p := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	d := &fakeDispatcher{file: f, laterBatch: 1}
	cfg := Config{Listeners: []config.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 0}}}
	if mod != nil {
		mod(&cfg)
	}
	srv := New(cfg, d, zap.New(core))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	addr := srv.Addrs()[0].(*net.TCPAddr)
	d.host, d.port = "127.0.0.1", int32(addr.Port)
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
		d.released.Wait() // every Fetch body released
		f.Close()
	})
	return &testEnv{srv: srv, d: d, addr: addr.String(), data: data, logs: logs}
}

// rawClient speaks the protocol over a plain TCP connection.
type rawClient struct {
	t    testing.TB
	c    net.Conn
	fmtr *kmsg.RequestFormatter
	corr int32
}

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawClient{t: t, c: c, fmtr: kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw-test"))}
}

// send writes one request and returns its correlation id.
func (r *rawClient) send(req kmsg.Request) int32 {
	r.t.Helper()
	r.corr++
	if _, err := r.c.Write(r.fmtr.AppendRequest(nil, req, r.corr)); err != nil {
		r.t.Fatal(err)
	}
	return r.corr
}

// recv reads one response for req (at req's version) and returns its
// correlation id. flexible response headers are skipped (except ApiVersions).
func (r *rawClient) recv(req kmsg.Request) (int32, kmsg.Response, error) {
	var sz [4]byte
	if _, err := io.ReadFull(r.c, sz[:]); err != nil {
		return 0, nil, err
	}
	frame := make([]byte, binary.BigEndian.Uint32(sz[:]))
	if _, err := io.ReadFull(r.c, frame); err != nil {
		return 0, nil, err
	}
	corr := int32(binary.BigEndian.Uint32(frame))
	body := frame[4:]
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() && req.Key() != 18 {
		if len(body) == 0 || body[0] != 0 {
			return corr, nil, fmt.Errorf("flexible response header: want empty tagged fields, got %x", body[:min(len(body), 1)])
		}
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		return corr, nil, err
	}
	return corr, resp, nil
}

func (r *rawClient) roundTrip(req kmsg.Request) kmsg.Response {
	r.t.Helper()
	corr := r.send(req)
	got, resp, err := r.recv(req)
	if err != nil {
		r.t.Fatal(err)
	}
	if got != corr {
		r.t.Fatalf("correlation id %d; want %d", got, corr)
	}
	return resp
}

// expectClosed waits (bounded) for the server to close the connection.
func (r *rawClient) expectClosed() {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b [1]byte
	n, err := r.c.Read(b[:])
	if err == nil || n != 0 {
		r.t.Fatalf("connection still open (read %d bytes, %v)", n, err)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		r.t.Fatal("connection not closed by the server within 10s")
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// logged reports whether a log line containing substr was written.
func (e *testEnv) logged(substr string) bool {
	for _, l := range e.logs.All() {
		if strings.Contains(l.Message, substr) {
			return true
		}
	}
	return false
}

func metadataReq(version int16, topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = version
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func wireResp(m kmsg.Response) wire.Response { return wire.Response{Msg: m} }

func (d *fakeDispatcher) setLaterBatch(n int) {
	d.mu.Lock()
	d.laterBatch = n
	d.mu.Unlock()
}

// panicOnEncode is a response whose encoding panics (a handler bug).
type panicOnEncode struct{ *kmsg.MetadataResponse }

func (panicOnEncode) AppendTo([]byte) []byte { panic("encoder exploded") }

// outstanding is the number of Heartbeats waiting for their batch.
func (d *fakeDispatcher) outstanding() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.laters)
}

// flushLaters answers every waiting Heartbeat now.
func (d *fakeDispatcher) flushLaters() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, ch := range d.laters {
		resp := kmsg.NewPtrHeartbeatResponse()
		resp.ThrottleMillis = d.memberNums[i]
		ch <- wire.Response{Msg: resp}
	}
	d.laters, d.memberNums = nil, nil
}

package server

import (
	"bufio"
	"bytes"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/config"
	"gregor/wire"
)

func TestFrameClasses(t *testing.T) {
	for _, tc := range []struct{ size, class int }{
		{0, -1}, {1, -1}, {2048, -1}, {2049, 0}, {4095, 0}, {4096, 0}, {4097, 1}, {1 << 20, 20 - minFrameClass},
		{1<<20 + 1, 21 - minFrameClass}, {1 << maxFrameClass, maxFrameClass - minFrameClass}, {1<<maxFrameClass + 1, -1},
	} {
		if got := frameClass(tc.size); got != tc.class {
			t.Errorf("frameClass(%d) = %d, want %d", tc.size, got, tc.class)
		}
	}
}

func TestGetPutFrame(t *testing.T) {
	b, h := getFrame(100)
	if len(b) != 100 || h != nil {
		t.Fatalf("small frame: len %d handle %v", len(b), h)
	}
	putFrame(h) // nil: no-op
	b, h = getFrame(300 << 10)
	if len(b) != 300<<10 || h == nil || cap(*h) != 512<<10 || &(*h)[0] != &b[0] {
		t.Fatalf("pooled frame: len %d cap %d", len(b), cap(b))
	}
	putFrame(h)
	b, h = getFrame(400 << 10) // same class; may or may not be the same buffer
	if len(b) != 400<<10 || h == nil || cap(*h) != 512<<10 {
		t.Fatalf("second frame: len %d", len(b))
	}
	b, h = getFrame(16 << 20)
	if len(b) != 16<<20 || h != nil {
		t.Fatalf("huge frame: len %d handle %v", len(b), h)
	}
}

// produceHolder answers Produce Later, after a delay, checking first that
// the records (which alias the frame) still hold what the client sent:
// the frame must not be recycled while the handler may still read it. It
// records the address of every frame's records to see recycling happen.
type produceHolder struct {
	mu    sync.Mutex
	addrs map[*byte]int
	bad   atomic.Int32
}

func (d *produceHolder) Supported() []wire.ApiRange {
	return []wire.ApiRange{{Key: 0, MinVersion: 3, MaxVersion: 9}}
}

func (d *produceHolder) Handle(rc *wire.RequestContext, req kmsg.Request) wire.Reply {
	r := req.(*kmsg.ProduceRequest)
	rb := r.Topics[0].Partitions[0].Records
	d.mu.Lock()
	d.addrs[&rb[0]]++
	d.mu.Unlock()
	ch := make(chan wire.Response, 1)
	go func() {
		time.Sleep(time.Millisecond)
		if !bytes.Equal(rb, recordsFor(r.TimeoutMillis, len(rb))) {
			d.bad.Add(1)
		}
		resp := r.ResponseKind().(*kmsg.ProduceResponse)
		resp.ThrottleMillis = r.TimeoutMillis
		ch <- wire.Response{Msg: resp}
	}()
	return wire.Later(ch)
}

// recordsFor is request i's distinct "records" content.
func recordsFor(i int32, n int) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(int(i)*31 + j)
	}
	return b
}

// Pipelined Produce requests whose frames come from the pool: every
// handler sees its own bytes until it answers, and frames are reused.
func TestProduceFramesRecycledAfterResponse(t *testing.T) {
	d := &produceHolder{addrs: map[*byte]int{}}
	srv := New(Config{Listeners: []config.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1"}}, MaxInFlightPerConn: 8}, d, nil)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := dialRaw(t, srv.Addrs()[0].String())
	const n, size = 300, 64 << 10
	mk := func(i int32) *kmsg.ProduceRequest {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 9, 1, i
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = recordsFor(i, size)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return req
	}
	errc := make(chan error, 1)
	go func() {
		w := bufio.NewWriter(c.c)
		f := kmsg.NewRequestFormatter()
		for i := int32(1); i <= n; i++ {
			if _, err := w.Write(f.AppendRequest(nil, mk(i), i)); err != nil {
				errc <- err
				return
			}
		}
		errc <- w.Flush()
	}()
	for i := int32(1); i <= n; i++ {
		corr, resp, err := c.recv(mk(0))
		if err != nil {
			t.Fatal(err)
		}
		if corr != i || resp.(*kmsg.ProduceResponse).ThrottleMillis != i {
			t.Fatalf("response %d: correlation id %d", i, corr)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if b := d.bad.Load(); b > 0 {
		t.Fatalf("%d handlers saw their records change before they answered", b)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.addrs) == n {
		t.Fatalf("no frame buffer was reused over %d requests", n)
	}
}

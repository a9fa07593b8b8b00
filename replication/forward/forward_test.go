package forward

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func createReq(name string) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, 1, 1
	req.Topics = append(req.Topics, t)
	return req
}

func notCtl(r kmsg.Response) bool {
	for _, t := range r.(*kmsg.CreateTopicsResponse).Topics {
		if t.ErrorCode == kerr.NotController.Code {
			return true
		}
	}
	return false
}

// fakeController is a kfake broker whose CreateTopics answers
// NOT_CONTROLLER the first `refuse` times, then creates.
func fakeController(t *testing.T, refuse int32) (*kfake.Cluster, *atomic.Int32) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	var calls atomic.Int32
	c.ControlKey(19, func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if calls.Add(1) > refuse {
			return nil, nil, false // kfake creates the topic
		}
		req := kreq.(*kmsg.CreateTopicsRequest)
		resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
		for _, rt := range req.Topics {
			t := kmsg.NewCreateTopicsResponseTopic()
			t.Topic, t.ErrorCode = rt.Topic, kerr.NotController.Code
			resp.Topics = append(resp.Topics, t)
		}
		return resp, nil, true
	})
	return c, &calls
}

func newFwd(t *testing.T, ctrl func() (int32, error), addr string) *Forwarder {
	f := New(Config{Self: 1, Controller: ctrl, Endpoint: func(int32) (string, bool) { return addr, addr != "" },
		ClientID: "test", Backoff: 20 * time.Millisecond})
	t.Cleanup(f.Close)
	return f
}

// A controller that answers NOT_CONTROLLER once (it lost /controller) is
// asked again and its second answer is returned.
func TestSendRetriesNotController(t *testing.T) {
	c, calls := fakeController(t, 1)
	reads := atomic.Int32{}
	f := newFwd(t, func() (int32, error) { reads.Add(1); return 2, nil }, c.ListenAddrs()[0])
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kr, err := f.Send(ctx, createReq("a"), notCtl)
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; code != 0 {
		t.Fatalf("code %d after the retry", code)
	}
	if calls.Load() != 2 || reads.Load() != 2 {
		t.Fatalf("%d sends, %d /controller reads; want 2 and 2", calls.Load(), reads.Load())
	}
}

// A controller that keeps answering NOT_CONTROLLER: its answer is
// returned when the deadline passes (retriable for the client).
func TestSendNotControllerUntilDeadline(t *testing.T) {
	c, calls := fakeController(t, 1<<30)
	f := newFwd(t, func() (int32, error) { return 2, nil }, c.ListenAddrs()[0])
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	kr, err := f.Send(ctx, createReq("a"), notCtl)
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; code != kerr.NotController.Code || calls.Load() < 2 {
		t.Fatalf("code %d after %d sends; want NOT_CONTROLLER after several", code, calls.Load())
	}
}

func TestSendLocalAndNoController(t *testing.T) {
	f := newFwd(t, func() (int32, error) { return 1, nil }, "127.0.0.1:1")
	if _, err := f.Send(context.Background(), createReq("a"), notCtl); !errors.Is(err, ErrLocal) {
		t.Fatalf("controller is self: %v, want ErrLocal", err)
	}
	f = newFwd(t, func() (int32, error) { return -1, nil }, "127.0.0.1:1")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := f.Send(ctx, createReq("a"), notCtl); !errors.Is(err, ErrNoController) {
		t.Fatalf("no controller: %v, want ErrNoController", err)
	}
	// The election ends during the wait: this broker won it.
	var n atomic.Int32
	f = newFwd(t, func() (int32, error) {
		if n.Add(1) < 3 {
			return -1, nil
		}
		return 1, nil
	}, "127.0.0.1:1")
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if _, err := f.Send(ctx2, createReq("a"), notCtl); !errors.Is(err, ErrLocal) {
		t.Fatalf("elected here during the wait: %v, want ErrLocal", err)
	}
}

// An unreachable controller (nothing listens on its port) gives
// ErrTimeout at the deadline, not a hang; a cancelled context gives the
// context's error.
func TestSendUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	f := newFwd(t, func() (int32, error) { return 2, nil }, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := f.Send(ctx, createReq("a"), notCtl); !errors.Is(err, ErrTimeout) {
		t.Fatalf("unreachable controller: %v, want ErrTimeout", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("answered after %v with a 500 ms deadline", took)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := f.Send(ctx, createReq("a"), notCtl); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v, want context.Canceled", err)
	}
}

// TestSendAtTheClientsVersion: the controller receives the request at the
// version it carries (the client's), not the newest both serve, and the
// answer comes back at that version; the timeout still bounds the read.
func TestSendAtTheClientsVersion(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	var seen atomic.Int32
	seen.Store(-1)
	c.ControlKey(19, func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		seen.Store(int32(kreq.GetVersion()))
		return nil, nil, false
	})
	f := newFwd(t, func() (int32, error) { return 2, nil }, c.ListenAddrs()[0])
	for i, v := range []int16{0, 2, 4, 7} {
		req := createReq(fmt.Sprintf("v%d", v))
		req.Version, req.TimeoutMillis = v, 5000
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		kr, err := f.Send(ctx, req, notCtl)
		cancel()
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if got := seen.Load(); got != int32(v) {
			t.Fatalf("send %d at v%d: the controller received v%d", i, v, got)
		}
		if kr.GetVersion() != v || kr.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode != 0 {
			t.Fatalf("v%d: response v%d code %d", v, kr.GetVersion(), kr.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode)
		}
	}
	p := pinned{Request: createReq("x"), max: 3}
	if p.MaxVersion() != 3 || p.Timeout() != 60000 { // kmsg's default timeout_ms
		t.Fatalf("pinned: max %d timeout %d", p.MaxVersion(), p.Timeout())
	}
	if (pinned{Request: createReq("x"), max: 99}).MaxVersion() != kmsg.NewPtrCreateTopicsRequest().MaxVersion() {
		t.Fatal("pinned above kmsg's maximum")
	}
}

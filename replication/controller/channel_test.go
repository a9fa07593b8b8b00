package controller

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"gregor/actors"
	"gregor/wire/connsetup/connsetuptest"
)

// A channel whose peer never answers keeps handling its mailbox: requests
// queued behind the one in flight are taken (not left waiting in the
// mailbox behind a blocked Receive), and removing the peer answers the one
// in flight at once.
func TestChannelMailboxNotBlockedBySilentPeer(t *testing.T) {
	sys := actors.NewSystem(zap.NewNop())
	t.Cleanup(sys.Shutdown)
	m := NewChannelManager(sys, 1, zap.NewNop())
	m.AddBroker(2, connsetuptest.SilentListener(t))
	results := make(chan error, 3)
	for range 3 {
		m.Send(2, kmsg.NewPtrUpdateMetadataRequest(), func(_ kmsg.Response, err error) { results <- err })
	}
	in := actors.InstrumentsOf(sys)
	deadline := time.Now().Add(5 * time.Second)
	for {
		var info actors.ActorInfo
		for _, a := range in.Actors() {
			if a.Kind == "controller-channel" {
				info = a
			}
		}
		if info.Received >= 3 && info.Mailbox == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("channel actor %+v: its mailbox still holds requests behind the one in flight", info)
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-results:
		t.Fatalf("a request to a silent peer was answered: %v", err)
	default:
	}
	closed := make(chan struct{})
	go func() { m.Close(); close(closed) }()
	select {
	case err := <-results:
		if err == nil {
			t.Fatal("the request in flight to a removed peer reported success")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("removing the peer did not end the request in flight")
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
}

// controller.socket.timeout.ms (SetTimeout) bounds one send attempt: to a
// peer that never answers, the first attempt fails after it and is retried
// (logged), where the 30 s default would still be waiting.
func TestChannelAttemptTimeout(t *testing.T) {
	sys := actors.NewSystem(zap.NewNop())
	t.Cleanup(sys.Shutdown)
	core, logs := observer.New(zapcore.WarnLevel)
	m := NewChannelManager(sys, 1, zap.New(core))
	m.SetTimeout(200 * time.Millisecond)
	t.Cleanup(m.Close)
	m.AddBroker(2, connsetuptest.SilentListener(t))
	m.Send(2, kmsg.NewPtrUpdateMetadataRequest(), func(kmsg.Response, error) {})
	deadline := time.Now().Add(5 * time.Second)
	for logs.FilterMessage("controller request failed, retrying").Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no attempt to the silent peer timed out within 5 s with controller.socket.timeout.ms=200")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

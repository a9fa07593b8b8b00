package handlers

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage"
	"gregor/wire"
)

// TestProduceToInternalTopicRefused: a client's Produce to
// __consumer_offsets or __transaction_state is refused
// INVALID_TOPIC_EXCEPTION and appends nothing (Kafka's appendToLocalLog:
// internal topics only for the __admin_client client id), so no client can
// forge a coordinator's records; __admin_client's produce is appended.
func TestProduceToInternalTopicRefused(t *testing.T) {
	offsets := storage.TopicPartition{Topic: "__consumer_offsets", Partition: 0}
	txns := storage.TopicPartition{Topic: "__transaction_state", Partition: 0}
	e := newDataEnv(t, storage.DefaultLogConfig(), offsets, txns)
	send := func(clientID string, tp storage.TopicPartition) kmsg.ProduceResponseTopicPartition {
		t.Helper()
		req := produceReq(1, tp, mkBatch(t, 2, time.Now().UnixMilli(), nil, true))
		req.SetVersion(9)
		rc := &wire.RequestContext{Ctx: context.Background(), Key: 0, Version: 9, ClientID: clientID}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, ok := e.b.Handle(rc, req).Resolve(ctx)
		if !ok {
			t.Fatal("no response")
		}
		return resp.Msg.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	}
	for _, tp := range []storage.TopicPartition{offsets, txns} {
		p := send("rv", tp)
		if p.ErrorCode != kerr.InvalidTopicException.Code || p.BaseOffset != -1 {
			t.Fatalf("%s from a client: %v at %d, want INVALID_TOPIC_EXCEPTION and nothing appended", tp.Topic, kerr.ErrorForCode(p.ErrorCode), p.BaseOffset)
		}
		if p.ErrorMessage == nil || *p.ErrorMessage != "Cannot append to internal topic "+tp.Topic {
			t.Fatalf("%s: message %v", tp.Topic, p.ErrorMessage)
		}
		h, _ := e.m.Get(tp)
		if end := h.View().Log.LogEndOffset(); end != 0 {
			t.Fatalf("%s: log end %d after the refused produce, want 0", tp.Topic, end)
		}
		if p := send(adminClientID, tp); p.ErrorCode != 0 || p.BaseOffset != 0 {
			t.Fatalf("%s from __admin_client: %v at %d, want appended at 0", tp.Topic, kerr.ErrorForCode(p.ErrorCode), p.BaseOffset)
		}
	}
}

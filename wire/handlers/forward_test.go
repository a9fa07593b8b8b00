package handlers

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/config"
	"gregor/replication/controller"
	"gregor/replication/forward"
	"gregor/replication/metadata"
	"gregor/wire/security"
	"gregor/wire/security/acl"
)

// followerTopics is a TopicSource on a broker that is not the controller:
// every controller operation answers NOT_CONTROLLER, unless local is set
// (it was just elected), when creates succeed.
type followerTopics struct {
	TopicSource
	mu    sync.Mutex
	local bool
	calls int
}

func (f *followerTopics) Snapshot() *metadata.Snapshot { return metadata.Empty }

func (f *followerTopics) CreateTopics(ts []controller.NewTopic, _ bool) []controller.CreatedTopic {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	out := make([]controller.CreatedTopic, len(ts))
	for i, t := range ts {
		out[i] = controller.CreatedTopic{Name: t.Name, NumPartitions: -1, ReplicationFactor: -1, Err: controller.ErrNotController}
		if f.local {
			out[i] = controller.CreatedTopic{Name: t.Name, NumPartitions: 7, ReplicationFactor: 1}
		}
	}
	return out
}

func (f *followerTopics) DeleteTopics(names []string) []error {
	out := make([]error, len(names))
	for i := range out {
		out[i] = controller.ErrNotController
	}
	return out
}

// fakeForwarder records what it is asked to send and answers with fn.
type fakeForwarder struct {
	mu   sync.Mutex
	sent []kmsg.Request
	fn   func(kmsg.Request) (kmsg.Response, error)
}

func (f *fakeForwarder) Send(_ context.Context, req kmsg.Request, _ func(kmsg.Response) bool) (kmsg.Response, error) {
	f.mu.Lock()
	f.sent = append(f.sent, req)
	f.mu.Unlock()
	return f.fn(req)
}

func followerBroker(t *testing.T, fn func(kmsg.Request) (kmsg.Response, error)) (*Broker, *followerTopics, *fakeForwarder) {
	t.Helper()
	cfg, err := config.Parse(map[string]string{"broker.id": "2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ft, ff := &followerTopics{}, &fakeForwarder{fn: fn}
	b := &Broker{Config: cfg, Log: zap.NewNop(), Topics: ft, Forward: ff}
	t.Cleanup(b.Close)
	return b, ft, ff
}

// createdByController answers a forwarded CreateTopics as a controller
// that created every topic (id 0x01…, 3 partitions).
func createdByController(kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreateTopicsRequest)
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	for _, rt := range req.Topics {
		t := kmsg.NewCreateTopicsResponseTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor, t.TopicID = rt.Topic, 3, 1, [16]byte{1}
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name, c.Value, c.Source = "cleanup.policy", kmsg.StringPtr("compact"), 1
		t.Configs = append(t.Configs, c)
		resp.Topics = append(resp.Topics, t)
	}
	return resp, nil
}

// Only what the client may create is forwarded (with its partitions,
// replication factor, assignment and configs); the refused topic answers
// TOPIC_AUTHORIZATION_FAILED here and the controller never hears of it;
// the controller's results (id, counts, configs) reach the client.
func TestForwardCreateTopicsOnlyAuthorized(t *testing.T) {
	b, _, ff := followerBroker(t, createdByController)
	b.Authorizer = acl.NewAuthorizer(acl.Config{}, nil)
	ok := acl.ResourcePattern{Type: acl.ResourceTopic, Name: "ok", Pattern: acl.PatternLiteral}
	b.Authorizer.SetSnapshot(acl.NewSnapshot(map[acl.ResourcePattern][]acl.Entry{
		ok: {{Principal: "User:bob", Host: "*", Operation: acl.OpCreate, Permission: acl.Allow},
			{Principal: "User:bob", Host: "*", Operation: acl.OpDescribeConfigs, Permission: acl.Allow}},
	}))
	req := createTopicsReq(7, false, newTopic("denied", 1, 1, nil), newTopic("ok", 3, 1, map[string]string{"cleanup.policy": "compact"}))
	resp := groupCallAs[*kmsg.CreateTopicsResponse](t, b, security.User("bob"), req)
	if len(resp.Topics) != 2 || resp.Topics[0].ErrorCode != kerr.TopicAuthorizationFailed.Code || resp.Topics[1].ErrorCode != 0 ||
		resp.Topics[1].TopicID != ([16]byte{1}) || resp.Topics[1].NumPartitions != 3 || len(resp.Topics[1].Configs) != 1 {
		t.Fatalf("response %+v", resp.Topics)
	}
	if len(ff.sent) != 1 {
		t.Fatalf("%d requests forwarded, want 1", len(ff.sent))
	}
	fr := ff.sent[0].(*kmsg.CreateTopicsRequest)
	if len(fr.Topics) != 1 || fr.Topics[0].Topic != "ok" || fr.Topics[0].NumPartitions != 3 || fr.Topics[0].ReplicationFactor != 1 ||
		len(fr.Topics[0].Configs) != 1 || *fr.Topics[0].Configs[0].Value != "compact" {
		t.Fatalf("forwarded %+v", fr.Topics)
	}
}

// Forwarding failures become the client's retriable errors; a broker
// elected meanwhile creates locally; without a forwarder NOT_CONTROLLER
// stays (Kafka 2.x).
func TestForwardFailures(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int16
	}{
		{forward.ErrTimeout, kerr.RequestTimedOut.Code},
		{forward.ErrNoController, kerr.NotController.Code},
		{context.Canceled, kerr.NotController.Code},
		{errors.New("boom"), kerr.UnknownServerError.Code},
	} {
		b, _, _ := followerBroker(t, func(kmsg.Request) (kmsg.Response, error) { return nil, tc.err })
		resp := call[*kmsg.CreateTopicsResponse](t, b, createTopicsReq(7, false, newTopic("a", 1, 1, nil)), "PLAINTEXT")
		if resp.Topics[0].ErrorCode != tc.want {
			t.Errorf("%v: %d, want %d", tc.err, resp.Topics[0].ErrorCode, tc.want)
		}
		dt := kmsg.NewPtrDeleteTopicsRequest()
		dt.Version, dt.TopicNames = 4, []string{"a"}
		if dr := call[*kmsg.DeleteTopicsResponse](t, b, dt, "PLAINTEXT"); dr.Topics[0].ErrorCode != tc.want {
			t.Errorf("delete, %v: %d, want %d", tc.err, dr.Topics[0].ErrorCode, tc.want)
		}
	}

	b, ft, _ := followerBroker(t, func(kmsg.Request) (kmsg.Response, error) { return nil, forward.ErrLocal })
	ft.local = false
	b.Forward = &fakeForwarder{fn: func(kmsg.Request) (kmsg.Response, error) {
		ft.mu.Lock()
		ft.local = true // elected between the local answer and the forward
		ft.mu.Unlock()
		return nil, forward.ErrLocal
	}}
	resp := call[*kmsg.CreateTopicsResponse](t, b, createTopicsReq(7, false, newTopic("a", 1, 1, nil)), "PLAINTEXT")
	if resp.Topics[0].ErrorCode != 0 || resp.Topics[0].NumPartitions != 7 || ft.calls != 2 {
		t.Fatalf("elected meanwhile: %+v after %d local calls", resp.Topics[0], ft.calls)
	}

	b, _, _ = followerBroker(t, nil)
	b.Forward = nil
	resp = call[*kmsg.CreateTopicsResponse](t, b, createTopicsReq(7, false, newTopic("a", 1, 1, nil)), "PLAINTEXT")
	if resp.Topics[0].ErrorCode != kerr.NotController.Code {
		t.Fatalf("no forwarder: %d, want NOT_CONTROLLER", resp.Topics[0].ErrorCode)
	}
}

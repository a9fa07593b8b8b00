package handlers

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/config"
	"gregor/replication/metadata"
	"gregor/wire"
	"gregor/wire/security"
	"gregor/wire/security/acl"
)

// TestForwardedAtTheClientsVersion: what a non-controller forwards
// carries the client's version (CreateTopics v0 and v4, DeleteTopics v1),
// and the client's answer is at its own version.
func TestForwardedAtTheClientsVersion(t *testing.T) {
	b, _, ff := followerBroker(t, createdByController)
	for i, v := range []int16{0, 4, 7} {
		resp := call[*kmsg.CreateTopicsResponse](t, b, createTopicsReq(v, false, newTopic("t", 1, 1, nil)), "PLAINTEXT")
		if len(ff.sent) != i+1 || ff.sent[i].GetVersion() != v || resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("CreateTopics v%d: forwarded %d requests, the last at v%d; answer %+v", v, len(ff.sent), ff.sent[len(ff.sent)-1].GetVersion(), resp.Topics)
		}
	}
	ff.fn = func(kreq kmsg.Request) (kmsg.Response, error) {
		req := kreq.(*kmsg.DeleteTopicsRequest)
		resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
		for _, n := range req.TopicNames {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic = kmsg.StringPtr(n)
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	b.Config.DeleteTopicEnable = true
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.Version, dt.TopicNames = 1, []string{"t"}
	if resp := call[*kmsg.DeleteTopicsResponse](t, b, dt, "PLAINTEXT"); resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("DeleteTopics v1: %+v", resp.Topics)
	}
	if last := ff.sent[len(ff.sent)-1]; last.Key() != 20 || last.GetVersion() != 1 {
		t.Fatalf("DeleteTopics forwarded as key %d v%d, want 20 v1", last.Key(), last.GetVersion())
	}
}

// liveBrokers is a TopicSource whose snapshot lists brokers ids alone.
type liveBrokers struct {
	TopicSource
	s *metadata.Snapshot
}

func (l liveBrokers) Snapshot() *metadata.Snapshot { return l.s }

// TestForwardedToUs: a request counts as forwarded by another broker, and
// so escapes the controller mutation quota here, only with a live other
// broker's forwarder client.id and, with an authorizer, ClusterAction.
func TestForwardedToUs(t *testing.T) {
	cfg, err := config.Parse(map[string]string{"broker.id": "1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap := &metadata.Snapshot{ControllerID: 1, Brokers: []metadata.Broker{{ID: 1}, {ID: 2}}, Topics: map[string]*metadata.Topic{}}
	b := &Broker{Config: cfg, Log: zap.NewNop(), Topics: liveBrokers{s: snap}}
	rc := func(clientID string, who security.Principal) *wire.RequestContext {
		return &wire.RequestContext{ClientID: clientID, Principal: who, Listener: "PLAINTEXT"}
	}
	for _, tc := range []struct {
		clientID string
		want     bool
	}{
		{"gregor-forward-2", true},
		{"gregor-forward-1", false}, // this broker
		{"gregor-forward-3", false}, // not live
		{"gregor-forward-x", false},
		{"gregor-forward-", false},
		{"cli", false},
	} {
		if got := b.forwardedToUs(rc(tc.clientID, security.Anonymous)); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.clientID, got, tc.want)
		}
	}
	b.Authorizer = acl.NewAuthorizer(acl.Config{SuperUsers: []security.Principal{security.User("broker")}}, nil)
	if b.forwardedToUs(rc("gregor-forward-2", security.User("alice"))) {
		t.Error("a client without ClusterAction counted as a forwarder")
	}
	if !b.forwardedToUs(rc("gregor-forward-2", security.User("broker"))) {
		t.Error("the inter-broker super user not counted as a forwarder")
	}
}

// TestForwardedOnlyOnTheInterBrokerListener: a forwarder reaches the
// controller on the inter-broker listener, so a forwarder's client.id on
// another listener (the clients' one) is a client's and is charged.
func TestForwardedOnlyOnTheInterBrokerListener(t *testing.T) {
	cfg, err := config.Parse(map[string]string{
		"broker.id":                      "1",
		"listeners":                      "INTERNAL://127.0.0.1:0,EXTERNAL://127.0.0.1:0",
		"listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
		"inter.broker.listener.name":     "INTERNAL",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap := &metadata.Snapshot{ControllerID: 1, Brokers: []metadata.Broker{{ID: 1}, {ID: 2}}, Topics: map[string]*metadata.Topic{}}
	b := &Broker{Config: cfg, Log: zap.NewNop(), Topics: liveBrokers{s: snap}}
	for listener, want := range map[string]bool{"INTERNAL": true, "EXTERNAL": false} {
		rc := &wire.RequestContext{ClientID: "gregor-forward-2", Principal: security.Anonymous, Listener: listener}
		if got := b.forwardedToUs(rc); got != want {
			t.Errorf("forwarder client.id on listener %s: forwarded %v, want %v", listener, got, want)
		}
	}
}

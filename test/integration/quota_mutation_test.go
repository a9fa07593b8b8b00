package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"gregor/test/harness"
)

// awaitQuotaLoaded waits (bounded) until the broker's quota watcher has
// applied the quotas of the entity at path ("clients/app", "users/alice").
func awaitQuotaLoaded(t *testing.T, b *harness.Broker, path string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		for _, line := range strings.Split(b.Log(), "\n") {
			if strings.Contains(line, "client quotas updated") && strings.Contains(line, `"`+path+`"`) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broker never applied the quotas of %s", path)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestControllerMutationQuotaPartitions: controller_mutation_rate=1 for
// the client id (a bucket of 11 partitions over the default 11 × 1 s
// window). A CreateTopics that fails validation costs nothing (Kafka
// records after validation); a 10-partition topic and +10 partitions
// (CreatePartitions v3, strict) overdraw the bucket; then CreatePartitions
// and DeleteTopics (v5+) answer THROTTLING_QUOTA_EXCEEDED and change
// nothing, while a DeleteTopics v4 (permissive) deletes and is throttled.
func TestControllerMutationQuotaPartitions(t *testing.T) {
	t.Parallel()
	b := harness.StartBroker(t, nil)
	if out, err := gregorConfigs(t, "--bootstrap-server", b.Addr(), "--alter", "--client", "qmut2", "--add-config", "controller_mutation_rate=1"); err != nil {
		t.Fatalf("alter: %v %s", err, out)
	}
	awaitQuotaLoaded(t, b, "clients/qmut2")
	// A refusal throttles the connection (and the client) until the
	// bucket is back at 0, so each refused request goes on a client of
	// its own, with the same client id and so the same bucket.
	clients := make([]*kgo.Client, 3)
	for i := range clients {
		clients[i] = b.Client(kgo.ClientID("qmut2"))
		defer clients[i].Close()
	}
	cl := clients[0]
	meta := b.Client(kgo.ClientID("qmeta"))
	defer meta.Close()
	old := b.Client(kgo.ClientID("qmut2"), kgo.MaxVersions(kversion.V2_6_0()))
	defer old.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	create := func(topic string, parts int32, rf int16) *kmsg.CreateTopicsResponse {
		t.Helper()
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, parts, rf
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if r := create("qm-bad", 50, 5); r.Topics[0].ErrorCode != kerr.InvalidReplicationFactor.Code || r.ThrottleMillis != 0 {
		t.Fatalf("invalid topic: code %d throttle %d, want INVALID_REPLICATION_FACTOR unthrottled", r.Topics[0].ErrorCode, r.ThrottleMillis)
	}
	if r := create("qm-1", 10, 1); r.Topics[0].ErrorCode != 0 {
		t.Fatalf("qm-1 (10 of 11 tokens; the invalid topic must not have counted): code %d", r.Topics[0].ErrorCode)
	}
	grow := func(c *kgo.Client, count int32) *kmsg.CreatePartitionsResponse {
		t.Helper()
		req := kmsg.NewPtrCreatePartitionsRequest()
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = "qm-1", count
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if r := grow(cl, 20); r.Topics[0].ErrorCode != 0 || r.Version < 3 || r.ThrottleMillis != 0 {
		t.Fatalf("+10 partitions (v%d): code %d throttle %d, want created and (strict) not throttled", r.Version, r.Topics[0].ErrorCode, r.ThrottleMillis)
	}
	r := grow(clients[1], 21)
	if r.Topics[0].ErrorCode != kerr.ThrottlingQuotaExceeded.Code || r.ThrottleMillis <= 0 {
		t.Fatalf("+1 over the quota: code %d throttle %d, want THROTTLING_QUOTA_EXCEEDED throttled", r.Topics[0].ErrorCode, r.ThrottleMillis)
	}
	partitions := func() int {
		t.Helper()
		req := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		topic := "qm-1"
		mt.Topic = &topic
		req.Topics = append(req.Topics, mt)
		resp, err := req.RequestWith(ctx, meta)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Topics[0].ErrorCode != 0 {
			return -1
		}
		return len(resp.Topics[0].Partitions)
	}
	if n := partitions(); n != 20 {
		t.Fatalf("qm-1 has %d partitions after the refused increase, want 20", n)
	}
	del := func(c *kgo.Client) *kmsg.DeleteTopicsResponse {
		t.Helper()
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.TopicNames = []string{"qm-1"}
		topic := "qm-1"
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.Topic = &topic
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if r := del(clients[2]); r.Version < 5 || r.Topics[0].ErrorCode != kerr.ThrottlingQuotaExceeded.Code || r.ThrottleMillis <= 0 {
		t.Fatalf("DeleteTopics v%d over the quota: code %d throttle %d", r.Version, r.Topics[0].ErrorCode, r.ThrottleMillis)
	}
	if n := partitions(); n != 20 {
		t.Fatalf("qm-1 has %d partitions after the refused delete, want 20", n)
	}
	if r := del(old); r.Version != 4 || r.Topics[0].ErrorCode != 0 || r.ThrottleMillis <= 0 {
		t.Fatalf("DeleteTopics v%d (permissive): code %d throttle %d, want deleted and throttled", r.Version, r.Topics[0].ErrorCode, r.ThrottleMillis)
	}
	if n := partitions(); n != -1 {
		t.Fatalf("qm-1 still has %d partitions after the permissive delete", n)
	}
}

// TestControllerMutationQuotaAutoCreate: a topic auto-created by a
// Metadata request (num.partitions=12) is recorded against the client's
// controller_mutation_rate=1 (a bucket of 11), permissively, as Kafka:
// the Metadata response is not throttled, but the next CreateTopics of
// the client id finds the bucket overdrawn and is refused.
func TestControllerMutationQuotaAutoCreate(t *testing.T) {
	t.Parallel()
	b := harness.StartBroker(t, map[string]string{"auto.create.topics.enable": "true", "num.partitions": "12"})
	if out, err := gregorConfigs(t, "--bootstrap-server", b.Addr(), "--alter", "--client", "qauto", "--add-config", "controller_mutation_rate=1"); err != nil {
		t.Fatalf("alter: %v %s", err, out)
	}
	awaitQuotaLoaded(t, b, "clients/qauto")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	md := kmsg.NewPtrMetadataRequest()
	md.AllowAutoTopicCreation = true
	topic := "qa-auto"
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = &topic
	md.Topics = append(md.Topics, mt)
	mresp, err := md.RequestWith(ctx, b.Client(kgo.ClientID("qauto")))
	if err != nil {
		t.Fatal(err)
	}
	if mresp.ThrottleMillis != 0 {
		t.Fatalf("auto-creating Metadata throttled %d ms, want 0 (permissive, not throttled)", mresp.ThrottleMillis)
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "qa-next", 1, 1
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, b.Client(kgo.ClientID("qauto")))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Topics[0].ErrorCode != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("CreateTopics after 12 auto-created partitions: code %d, want THROTTLING_QUOTA_EXCEEDED", resp.Topics[0].ErrorCode)
	}
}

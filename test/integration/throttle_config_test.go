package integration

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/test/harness"
)

// TestThrottledReplicasBadInput: a malformed
// leader./follower.replication.throttled.replicas list is refused with
// INVALID_CONFIG and Kafka's ThrottledReplicaListValidator message, by
// IncrementalAlterConfigs and CreateTopics, and nothing of the request is
// applied (the valid key beside it neither); "*" and "p:b" lists are taken.
func TestThrottledReplicasBadInput(t *testing.T) {
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "thr", 1, nil)
	adm := kadm.NewClient(b.Client())
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	str := func(s string) *string { return &s }

	bad := []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "retention.ms", Value: str("1234")},
		{Op: kadm.SetConfig, Name: "leader.replication.throttled.replicas", Value: str("0:1,0-2")},
	}
	rs, err := adm.AlterTopicConfigs(ctx, bad, "thr")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := rs.On("thr", nil)
	want := "Invalid value [0:1, 0-2] for configuration leader.replication.throttled.replicas: leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."
	if !errors.Is(r.Err, kerr.InvalidConfig) || r.ErrMessage != want {
		t.Fatalf("alter: err %v message %q, want INVALID_CONFIG %q", r.Err, r.ErrMessage, want)
	}
	described := func() map[string]string {
		t.Helper()
		rc, err := adm.DescribeTopicConfigs(ctx, "thr")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, c := range rc[0].Configs {
			if c.Source == 1 { // DYNAMIC_TOPIC_CONFIG
				out[c.Key] = c.MaybeValue()
			}
		}
		return out
	}
	if got := described(); len(got) != 0 {
		t.Fatalf("a refused alter applied %v", got)
	}

	cr, err := adm.CreateTopics(ctx, 1, 1, map[string]*string{"follower.replication.throttled.replicas": str("*,0:1")}, "thr2")
	if err != nil {
		t.Fatal(err)
	}
	if c := cr["thr2"]; !errors.Is(c.Err, kerr.InvalidConfig) || !strings.Contains(c.ErrMessage, "follower.replication.throttled.replicas must be the literal '*'") {
		t.Fatalf("create: err %v message %q, want INVALID_CONFIG", c.Err, c.ErrMessage)
	}

	good := []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "leader.replication.throttled.replicas", Value: str("*")},
		{Op: kadm.SetConfig, Name: "follower.replication.throttled.replicas", Value: str("0:0, 1:0")},
	}
	if rs, err := adm.AlterTopicConfigs(ctx, good, "thr"); err != nil || rs[0].Err != nil {
		t.Fatalf("valid lists refused: %v %v", err, rs)
	}
	if got := described(); got["leader.replication.throttled.replicas"] != "*" || got["follower.replication.throttled.replicas"] != "0:0, 1:0" {
		t.Fatalf("described %v", got)
	}
}

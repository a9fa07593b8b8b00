package integration

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// gregorConfigs runs `gregor configs` (kafka-configs.sh) and returns its
// combined output and exit error.
func gregorConfigs(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, harness.Binary(t), append([]string{"configs"}, args...)...).CombinedOutput()
	return string(out), err
}

// TestClientQuotaProducerRate: a franz-go producer with 64 KiB batches
// whose client id has producer_byte_rate=1048576 (set with
// kafka-configs --entity-type clients, 3 × 1 s windows) produces as fast
// as it can for 14 s: after 4 s its acknowledged rate, averaged over
// where the measurement begins (phaseRate, quota_rate_test.go), is
// 1 MiB/s ±20%, and the broker's throttle times reach it
// (OnBrokerThrottle). TestClientQuotaRateTable measures more batch sizes.
func TestClientQuotaProducerRate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ~15 s")
	}
	t.Parallel()
	r := measureQuotaProducer(t, 64<<10, 4*time.Second, 5*time.Second)
	r.log(t, "producer, 64 KiB batches")
	if x := r.rate() / quotaRate; x < 0.8 || x > 1.2 {
		t.Fatalf("producer rate %.3f× the quota, want 1 ±20%%", x)
	}
	if r.throttles == 0 {
		t.Fatalf("no throttle time reached the producer")
	}
}

type throttleHook struct{ n *atomic.Int64 }

func (h throttleHook) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	if d > 0 {
		h.n.Add(1)
	}
}

// TestClientQuotaBadInput: AlterClientQuotas with an unknown key, a
// negative rate or a fractional byte rate answers INVALID_REQUEST with
// Kafka's message for that entry and writes nothing for it, while a good
// entry in the same request is applied; the CLI refuses the same with a
// non-zero exit.
func TestClientQuotaBadInput(t *testing.T) {
	t.Parallel()
	b := harness.StartBroker(t, nil)
	adm := kadm.NewClient(b.Client())
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := func(s string) *string { return &s }
	entity := func(c string) kadm.ClientQuotaEntity {
		return kadm.ClientQuotaEntity{{Type: "client-id", Name: name(c)}}
	}
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{
		{Entity: entity("bad1"), Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1000}, {Key: "bogus_rate", Value: 1}}},
		{Entity: entity("bad2"), Ops: []kadm.AlterClientQuotaOp{{Key: "consumer_byte_rate", Value: -5}}},
		{Entity: entity("bad3"), Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1.5}}},
		{Entity: entity("good"), Ops: []kadm.AlterClientQuotaOp{{Key: "request_percentage", Value: 50}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"bad1": "Invalid configuration key bogus_rate",
		"bad2": "Quota consumer_byte_rate must be greater than 0",
		"bad3": "Configuration producer_byte_rate must be a LONG value",
		"good": "",
	}
	for _, r := range res {
		n := *r.Entity[0].Name
		if want[n] == "" {
			if r.Err != nil {
				t.Fatalf("%s: %v %s", n, r.Err, r.ErrMessage)
			}
			continue
		}
		if !errors.Is(r.Err, kerr.InvalidRequest) || r.ErrMessage != want[n] {
			t.Fatalf("%s: %v %q, want INVALID_REQUEST %q", n, r.Err, r.ErrMessage, want[n])
		}
	}
	all, err := adm.DescribeClientQuotas(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || *all[0].Entity[0].Name != "good" || all[0].Values[0].Key != "request_percentage" || all[0].Values[0].Value != 50 {
		t.Fatalf("described %+v, want only good request_percentage=50", all)
	}
	out, err := gregorConfigs(t, "--bootstrap-server", b.Addr(), "--alter", "--entity-type", "users", "--entity-name", "u", "--add-config", "producer_byte_rate=-1")
	if err == nil || !strings.Contains(out, "Quota producer_byte_rate must be greater than 0") {
		t.Fatalf("negative via CLI: %v %q", err, out)
	}
	out, _ = gregorConfigs(t, "--bootstrap-server", b.Addr(), "--describe", "--entity-type", "users")
	if strings.TrimSpace(out) != "" {
		t.Fatalf("users quotas after refused alter: %q", out)
	}
}

// TestControllerMutationQuota: with controller_mutation_rate=1 for the
// client (a burst of 11 partitions over the default 11 × 1 s window), a
// CreateTopics of 20 partitions overdraws the bucket and the next one
// gets THROTTLING_QUOTA_EXCEEDED (CreateTopics v6+ is strict) and
// creates nothing.
func TestControllerMutationQuota(t *testing.T) {
	t.Parallel()
	b := harness.StartBroker(t, nil)
	out, err := gregorConfigs(t, "--bootstrap-server", b.Addr(), "--alter", "--client", "qmut", "--add-config", "controller_mutation_rate=1")
	if err != nil || !strings.Contains(out, "Completed updating config for client qmut.") {
		t.Fatalf("alter: %v %q", err, out)
	}
	adm := kadm.NewClient(b.Client(kgo.ClientID("qmut")))
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The quota reaches the broker through /config/changes: poll until
	// a creation is refused, bounded.
	deadline := time.Now().Add(10 * time.Second)
	var refused bool
	for i := 0; time.Now().Before(deadline) && !refused; i++ {
		topic := "mut-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		r, err := adm.CreateTopic(ctx, 20, 1, nil, topic)
		switch {
		case errors.Is(err, kerr.ThrottlingQuotaExceeded) || errors.Is(r.Err, kerr.ThrottlingQuotaExceeded):
			refused = true
			md, merr := adm.ListTopics(ctx, topic)
			if merr != nil {
				t.Fatal(merr)
			}
			if md.Has(topic) {
				t.Fatalf("throttled topic %s was created", topic)
			}
		case err != nil:
			t.Fatalf("create %s: %v", topic, err)
		}
	}
	if !refused {
		t.Fatal("no CreateTopics was refused with THROTTLING_QUOTA_EXCEEDED")
	}
}

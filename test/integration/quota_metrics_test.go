package integration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// TestClientQuotaMetrics: after a produce throttled by its client id's
// producer_byte_rate, the admin listener shows that entity's byte rate,
// throttle time and limit under Kafka's names with user="" (a client-id
// quota measures all users together), and the request_percentage of the
// <default> user is measured under user="ANONYMOUS", client_id="".
func TestClientQuotaMetrics(t *testing.T) {
	t.Parallel()
	adminPort := harness.FreePort(t)
	admin := fmt.Sprintf("http://127.0.0.1:%d", adminPort)
	b := harness.StartBroker(t, map[string]string{"admin.listener": fmt.Sprintf("127.0.0.1:%d", adminPort),
		"quota.window.num": "3", "quota.window.size.seconds": "1"})
	createTopic(t, b, "quota-m", 1, nil)
	for _, args := range [][]string{
		{"--entity-type", "clients", "--entity-name", "qmetrics", "--add-config", "producer_byte_rate=20000"},
		{"--entity-type", "users", "--entity-default", "--add-config", "request_percentage=1000"},
	} {
		if out, err := gregorConfigs(t, append([]string{"--bootstrap-server", b.Addr(), "--alter"}, args...)...); err != nil {
			t.Fatalf("%v: %v %s", args, err, out)
		}
	}
	var throttles atomic.Int64
	cl := b.Client(kgo.ClientID("qmetrics"), kgo.WithHooks(throttleHook{&throttles}), kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	value := []byte(strings.Repeat("m", 50_000))
	// The quota reaches the broker through /config/changes: produce until
	// a response carries a throttle, bounded.
	for i := 0; throttles.Load() == 0; i++ {
		if i == 50 || ctx.Err() != nil {
			t.Fatal("no produce was throttled")
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "quota-m", Value: value}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("throttled after %d produces", throttles.Load())
	client := map[string]string{"user": "", "client_id": "qmetrics"}
	get := func(name string, labels map[string]string) float64 {
		t.Helper()
		v, ok, err := harness.MetricValue(http.DefaultClient, admin, name, labels)
		if err != nil || !ok {
			t.Fatalf("%s%v: found %v, %v", name, labels, ok, err)
		}
		return v
	}
	if v := get("kafka_server_produce_byte_rate", client); v < 20000 {
		t.Fatalf("produce byte rate %v, want above the 20000 B/s quota that throttled it", v)
	}
	if v := get("kafka_server_produce_throttle_time", client); v <= 0 {
		t.Fatalf("produce throttle time %v, want > 0", v)
	}
	if v := get("gregor_client_quota_limit", map[string]string{"quota_type": "produce", "user": "", "client_id": "qmetrics"}); v != 20000 {
		t.Fatalf("produce limit %v, want 20000", v)
	}
	anon := map[string]string{"user": "ANONYMOUS", "client_id": ""}
	if v := get("kafka_server_request_request_time", anon); v <= 0 {
		t.Fatalf("request time %v, want > 0", v)
	}
	if v := get("gregor_client_quota_limit", map[string]string{"quota_type": "request", "user": "ANONYMOUS", "client_id": ""}); v != 1000 {
		t.Fatalf("request limit %v, want 1000", v)
	}
	if _, ok, _ := harness.MetricValue(http.DefaultClient, admin, "kafka_server_fetch_byte_rate", client); ok {
		t.Fatal("a fetch sensor exists without a consumer_byte_rate quota")
	}
}

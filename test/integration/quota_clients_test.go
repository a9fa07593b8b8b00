package integration

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"gregor/test/harness"
)

// Real clients under client quotas (issue 14 point 5). Every test has a
// broker of its own with a short quota window (3 × 1 s), so the burst a
// fresh sensor allows is over within seconds.
var shortQuotaWindow = map[string]string{"quota.window.num": "3", "quota.window.size.seconds": "1"}

func withProps(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// mustConfigs runs kafka-configs against b and fails the test on error.
func mustConfigs(t *testing.T, b *harness.Broker, args ...string) {
	t.Helper()
	if out, err := gregorConfigs(t, append([]string{"--bootstrap-server", b.Addr()}, args...)...); err != nil {
		t.Fatalf("configs %v: %v %s", args, err, out)
	}
}

// produceTimed produces n records of value synchronously (one
// ProduceSync of them all) and returns how long the acknowledgement
// took.
func produceTimed(t *testing.T, cl *kgo.Client, topic string, value []byte, n int) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Value: value}
	}
	start := time.Now()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
	return time.Since(start)
}

// produceUntilThrottled produces value one record at a time until the
// client's throttle hook has fired, at most max records.
func produceUntilThrottled(t *testing.T, cl *kgo.Client, throttles *atomic.Int64, topic string, value []byte, max int) {
	t.Helper()
	for i := 0; throttles.Load() == 0; i++ {
		if i == max {
			t.Fatalf("%d records of %d bytes to %s and no throttle", max, len(value), topic)
		}
		produceTimed(t, cl, topic, value, 1)
	}
}

// TestClientQuotaKcatProducer: kcat (librdkafka) with client.id=qkcat
// and producer_byte_rate=1048576 for that client id: after a first 4 MiB
// file that uses up the sensor's burst and outlasts its first
// (quota.window.num − 1) windows (while a sensor is younger, Kafka's
// window size jumps down at each window boundary and throttles about a
// second extra), a 6 MiB file takes 6 s ±25% (128 KiB batches, so the
// measurement's ends decide little), and the broker's throttle time for
// the client id shows on the admin listener.
func TestClientQuotaKcatProducer(t *testing.T) {
	t.Parallel()
	adminPort := harness.FreePort(t)
	b := harness.StartBroker(t, withProps(shortQuotaWindow, "admin.listener", fmt.Sprintf("127.0.0.1:%d", adminPort)))
	createTopic(t, b, "quota-kcat", 1, nil)
	mustConfigs(t, b, "--alter", "--entity-type", "clients", "--entity-name", "qkcat", "--add-config", "producer_byte_rate=1048576")
	awaitQuotaLoaded(t, b, "clients/qkcat")
	line := strings.Repeat("k", 10_239) + "\n" // 10 KiB with the delimiter
	file := func(name string, mib int) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(strings.Repeat(line, mib*1024/10)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	kcat := func(path string) time.Duration {
		start := time.Now()
		run(t, 2*time.Minute, "", "kcat", "-P", "-b", b.Addr(), "-t", "quota-kcat", "-X", "client.id=qkcat",
			"-X", "linger.ms=5", "-X", "batch.size=131072", "-z", "none", "-l", path)
		return time.Since(start)
	}
	warm := kcat(file("warm", 4))
	d := kcat(file("main", 6))
	sent := float64(6 * 1024 / 10 * len(line))
	rate := sent / d.Seconds()
	t.Logf("warm-up %v; %.0f bytes in %v: %.0f B/s", warm, sent, d, rate)
	if rate < 0.75*1048576 || rate > 1.25*1048576 {
		t.Fatalf("kcat produced at %.0f B/s, want 1048576 ±25%%", rate)
	}
	v, ok, err := harness.MetricValue(http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d", adminPort),
		"kafka_server_produce_throttle_time", map[string]string{"user": "", "client_id": "qkcat"})
	if err != nil || !ok || v <= 0 {
		t.Fatalf("kafka_server_produce_throttle_time{client_id=qkcat} = %v (found %v, %v), want > 0", v, ok, err)
	}
}

// TestClientQuotaConsumerRate: a franz-go consumer with 64 KiB fetches
// whose client id has consumer_byte_rate=1048576 reads a backlog larger
// than it may read in 11 s: after the first 3 s its rate, averaged over
// where the measurement begins (phaseRate, quota_rate_test.go), is
// 1 MiB/s ±25%, and it sees throttle times.
func TestClientQuotaConsumerRate(t *testing.T) {
	t.Parallel()
	r := measureQuotaConsumer(t, 64<<10, 3*time.Second, 4*time.Second)
	r.log(t, "consumer, 64 KiB fetches")
	if x := r.rate() / quotaRate; x < 0.75 || x > 1.25 {
		t.Fatalf("consumer rate %.3f× the quota, want 1 ±25%%", x)
	}
	if r.throttles == 0 {
		t.Fatal("no throttle time reached the consumer")
	}
}

// TestClientQuotaUserPrecedence: for a SCRAM user the user's quota
// (/config/users/quser, sharing the znode with its credentials) applies
// before its client id's (Kafka's order): the SCRAM client with
// client.id=qapp is throttled at the user's 20000 B/s, while an
// ANONYMOUS plaintext client with the same client id, under the client
// id's 1 GB/s, is not.
func TestClientQuotaUserPrecedence(t *testing.T) {
	t.Parallel()
	b := startSASLBroker(t)
	gregorTool(t, "configs", "--bootstrap-server", b.Addr(), "--entity-type", "users", "--entity-name", "quser", "--alter",
		"--add-config", "SCRAM-SHA-256=[password=quser-pw]")
	mustConfigs(t, b.Broker, "--alter", "--entity-type", "users", "--entity-name", "quser", "--add-config", "producer_byte_rate=20000")
	mustConfigs(t, b.Broker, "--alter", "--entity-type", "clients", "--entity-name", "qapp", "--add-config", "producer_byte_rate=1000000000")
	awaitQuotaLoaded(t, b.Broker, "users/quser")
	awaitQuotaLoaded(t, b.Broker, "clients/qapp")
	createTopic(t, b.Broker, "quota-u", 1, nil)
	value := make([]byte, 50_000)

	var anonThrottles atomic.Int64
	anon := b.Client(kgo.ClientID("qapp"), kgo.WithHooks(throttleHook{&anonThrottles}), kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if d := produceTimed(t, anon, "quota-u", value, 20); anonThrottles.Load() != 0 || d > 10*time.Second {
		t.Fatalf("ANONYMOUS qapp: 1 MB in %v with %d throttles, want the client id's 1 GB/s", d, anonThrottles.Load())
	}
	var userThrottles atomic.Int64
	user := b.Client(kgo.SeedBrokers(b.sasl), kgo.SASL(scram.Auth{User: "quser", Pass: "quser-pw"}.AsSha256Mechanism()),
		kgo.ClientID("qapp"), kgo.WithHooks(throttleHook{&userThrottles}), kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	produceUntilThrottled(t, user, &userThrottles, "quota-u", value, 5)
	// Measured under the user's tags (client_id="": a user quota
	// measures all the user's client ids together).
	v, ok, err := harness.MetricValue(http.DefaultClient, b.admin, "gregor_client_quota_limit",
		map[string]string{"quota_type": "produce", "user": "quser", "client_id": ""})
	if err != nil || !ok || v != 20000 {
		t.Fatalf("quser's produce limit %v (found %v, %v), want 20000", v, ok, err)
	}
	out := gregorTool(t, "configs", "--bootstrap-server", b.Addr(), "--entity-type", "users", "--entity-name", "quser", "--describe")
	want := "Quota configs for user-principal 'quser' are producer_byte_rate=20000.0\n" +
		"SCRAM credential configs for user-principal 'quser' are SCRAM-SHA-256=iterations=4096\n"
	if out != want {
		t.Fatalf("describe quser: %q, want %q (ConfigCommand: quotas, then credentials)", out, want)
	}
}

// TestClientQuotaDefaultClientID: a <default> client-id quota throttles
// a client id without a quota of its own and not one with its own;
// removing it with --delete-config lifts the throttle at run time.
func TestClientQuotaDefaultClientID(t *testing.T) {
	t.Parallel()
	b := harness.StartBroker(t, shortQuotaWindow)
	createTopic(t, b, "quota-d", 1, nil)
	mustConfigs(t, b, "--alter", "--entity-type", "clients", "--entity-name", "qdef-own", "--add-config", "producer_byte_rate=1000000000")
	mustConfigs(t, b, "--alter", "--entity-type", "clients", "--entity-default", "--add-config", "producer_byte_rate=20000")
	awaitQuotaLoaded(t, b, "clients/qdef-own")
	awaitQuotaLoaded(t, b, "clients/<default>")
	value := make([]byte, 50_000)
	client := func(id string, n *atomic.Int64) *kgo.Client {
		return b.Client(kgo.ClientID(id), kgo.WithHooks(throttleHook{n}), kgo.ProducerLinger(0),
			kgo.ProducerBatchCompression(kgo.NoCompression()))
	}
	var own, plain atomic.Int64
	if d := produceTimed(t, client("qdef-own", &own), "quota-d", value, 20); own.Load() != 0 || d > 10*time.Second {
		t.Fatalf("qdef-own: 1 MB in %v with %d throttles, want its own 1 GB/s", d, own.Load())
	}
	cl := client("qdef-any", &plain)
	produceUntilThrottled(t, cl, &plain, "quota-d", value, 5)

	mustConfigs(t, b, "--alter", "--entity-type", "clients", "--entity-default", "--delete-config", "producer_byte_rate")
	// Under 20000 B/s 1 MB takes 50 s: once the removal has reached the
	// broker it goes in seconds, unthrottled. Poll, bounded.
	deadline := time.Now().Add(30 * time.Second)
	for {
		before := plain.Load()
		d := produceTimed(t, cl, "quota-d", value, 20)
		if plain.Load() == before && d < 5*time.Second {
			t.Logf("1 MB in %v unthrottled after the removal", d)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still throttled after removing the <default> quota (last 1 MB in %v)", d)
		}
	}
}

// TestClientQuotaRequestPercentage: request_percentage=0.01 for a client
// id that sends Metadata requests back to back: their responses carry
// throttle_time_ms (at most one quota window, 1 s here, as Kafka bounds
// the request quota's throttle), while another client id is never
// throttled.
func TestClientQuotaRequestPercentage(t *testing.T) {
	t.Parallel()
	b := harness.StartBroker(t, shortQuotaWindow)
	createTopic(t, b, "quota-r", 1, nil)
	mustConfigs(t, b, "--alter", "--entity-type", "clients", "--entity-name", "qreq", "--add-config", "request_percentage=0.01")
	awaitQuotaLoaded(t, b, "clients/qreq")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	metadata := func(cl *kgo.Client) int32 {
		t.Helper()
		req := kmsg.NewPtrMetadataRequest()
		topic := "quota-r"
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = &topic
		req.Topics = append(req.Topics, mt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.ThrottleMillis
	}
	free := b.Client(kgo.ClientID("qreq-free"))
	for i := range 50 {
		if ms := metadata(free); ms != 0 {
			t.Fatalf("qreq-free Metadata %d: throttle_time_ms %d, want 0", i, ms)
		}
	}
	cl := b.Client(kgo.ClientID("qreq"))
	var throttled int32
	for i := 0; throttled == 0; i++ {
		if i == 2000 {
			t.Fatal("2000 Metadata requests and none throttled")
		}
		throttled = metadata(cl)
	}
	if throttled > 1000 {
		t.Fatalf("throttle_time_ms %d, want at most one quota window (1000)", throttled)
	}
	t.Logf("Metadata throttle_time_ms %d", throttled)
}

package integration

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"gregor/test/harness"
)

// saslBroker is a single node with a SASL_PLAINTEXT listener next to its
// PLAINTEXT one: PLAIN users admin and alice from the listener's JAAS
// config, SCRAM-SHA-256/512 users from /config/users, and an admin
// listener for the authentication metrics.
type saslBroker struct {
	*harness.Broker
	sasl  string // SASL_PLAINTEXT listener address
	admin string // http://host:port of the admin listener
}

func startSASLBroker(t *testing.T) *saslBroker {
	t.Helper()
	saslPort, adminPort := harness.FreePort(t), harness.FreePort(t)
	b := harness.StartBroker(t, map[string]string{
		"listeners":               fmt.Sprintf("SASL_PLAINTEXT://127.0.0.1:%d", saslPort),
		"sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required ` +
			`username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`,
		"admin.listener": fmt.Sprintf("127.0.0.1:%d", adminPort),
	})
	return &saslBroker{Broker: b, sasl: fmt.Sprintf("127.0.0.1:%d", saslPort), admin: fmt.Sprintf("http://127.0.0.1:%d", adminPort)}
}

// gregorTool runs a gregor subcommand and returns its stdout.
func gregorTool(t *testing.T, args ...string) string {
	t.Helper()
	return run(t, time.Minute, "", harness.Binary(t), args...)
}

func wantAuthFailed(t *testing.T, who string, err error) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "SASL_AUTHENTICATION_FAILED") {
		t.Fatalf("%s: want SASL_AUTHENTICATION_FAILED, got %v", who, err)
	}
}

// TestSASLFranzGo: franz-go PLAIN and SCRAM (SHA-256 and SHA-512) log in,
// produce and consume on the SASL listener; a wrong password gets
// SASL_AUTHENTICATION_FAILED; the PLAINTEXT listener stays open; the
// admin listener counts successes and failures.
func TestSASLFranzGo(t *testing.T) {
	b := startSASLBroker(t)
	gregorTool(t, "configs", "--bootstrap-server", b.Addr(), "--entity-type", "users", "--entity-name", "carol", "--alter",
		"--add-config", "SCRAM-SHA-256=[iterations=8192,password=carol-secret],SCRAM-SHA-512=[password=carol-512]")
	out := gregorTool(t, "configs", "--bootstrap-server", b.Addr(), "--entity-type", "users", "--entity-name", "carol", "--describe")
	if want := "SCRAM credential configs for user-principal 'carol' are SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n"; out != want {
		t.Fatalf("describe printed %q, want %q", out, want)
	}
	good := map[string]sasl.Mechanism{
		"plain":   plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism(),
		"sha256":  scram.Auth{User: "carol", Pass: "carol-secret"}.AsSha256Mechanism(),
		"sha512":  scram.Auth{User: "carol", Pass: "carol-512"}.AsSha512Mechanism(),
		"admin":   plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism(),
		"produce": plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism(),
	}
	for name, m := range good {
		if err := harness.SASLLogin(b.sasl, m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	wantAuthFailed(t, "plain wrong password", harness.SASLLogin(b.sasl, plain.Auth{User: "alice", Pass: "nope"}.AsMechanism()))
	wantAuthFailed(t, "scram wrong password", harness.SASLLogin(b.sasl, scram.Auth{User: "carol", Pass: "nope"}.AsSha256Mechanism()))
	wantAuthFailed(t, "scram unknown user", harness.SASLLogin(b.sasl, scram.Auth{User: "dave", Pass: "x"}.AsSha512Mechanism()))

	// Produce and consume over SASL/SCRAM.
	createTopic(t, b.Broker, "sasl", 1, nil)
	cl := b.Client(kgo.SeedBrokers(b.sasl), kgo.SASL(good["sha512"]), kgo.ConsumeTopics("sasl"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 10; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "sasl", Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	pollRecords(ctx, t, cl, 10, "scram consumer")

	// A deleted credential stops working.
	gregorTool(t, "configs", "--bootstrap-server", b.Addr(), "--entity-type", "users", "--entity-name", "carol", "--alter", "--delete-config", "SCRAM-SHA-256")
	harness.WaitSASL(t, "deleted SCRAM-SHA-256 credential refused", []string{b.sasl}, good["sha256"], false)

	hc := &http.Client{Timeout: 5 * time.Second}
	if n, _, err := harness.MetricSum(hc, b.admin, "kafka_server_socket_server_metrics_failed_authentication_total"); err != nil || n < 4 {
		t.Fatalf("failed authentications counted %v (%v), want ≥ 4", n, err)
	}
	if n, _, err := harness.MetricSum(hc, b.admin, "kafka_server_socket_server_metrics_successful_authentication_total"); err != nil || n < 6 {
		t.Fatalf("successful authentications counted %v (%v), want ≥ 6", n, err)
	}
	if strings.Contains(b.Log(), "nope") || strings.Contains(b.Log(), "carol-secret") {
		t.Fatal("a password reached the broker log")
	}
}

// TestSASLKcat: librdkafka (kcat) with PLAIN and SCRAM-SHA-256; a wrong
// password is reported as an authentication error.
func TestSASLKcat(t *testing.T) {
	_, err := exec.LookPath("kcat")
	harness.NeedTool(t, err == nil, "kcat")
	b := startSASLBroker(t)
	gregorTool(t, "configs", "--bootstrap-server", b.Addr(), "--entity-type", "users", "--entity-name", "carol", "--alter",
		"--add-config", "SCRAM-SHA-256=[iterations=4096,password=carol-secret]")
	createTopic(t, b.Broker, "kc", 1, nil)
	kcat := func(mech, user, pass string, extra ...string) []string {
		return append([]string{"-b", b.sasl, "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=" + mech,
			"-X", "sasl.username=" + user, "-X", "sasl.password=" + pass}, extra...)
	}
	kcatRoundTrip(t, "kc", "k:v1\nk:v2\n", kcat("PLAIN", "alice", "alice-secret"), kcat("SCRAM-SHA-256", "carol", "carol-secret"))
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256"} {
		cmd := exec.Command("kcat", kcat(mech, "alice", "wrong", "-L", "-m", "1")...)
		got, _ := cmd.CombinedOutput()
		want := "Authentication failed: Invalid username or password"
		if mech != "PLAIN" {
			want = "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"
		}
		if cmd.ProcessState.ExitCode() == 0 || !strings.Contains(string(got), "SASL authentication error: "+want) {
			t.Fatalf("kcat %s with a wrong password: exit %d, %s", mech, cmd.ProcessState.ExitCode(), got)
		}
	}
}

// TestSASLPythonClients: kafka-python (PLAIN and SCRAM-SHA-512, both over
// SaslHandshake v0 raw tokens) and confluent-kafka-python
// (SCRAM-SHA-512) produce and consume; a wrong password raises the
// client's authentication error.
func TestSASLPythonClients(t *testing.T) {
	py := "/usr/bin/python3"
	harness.NeedTool(t, exec.Command(py, "-c", "import kafka, confluent_kafka").Run() == nil, "kafka-python and confluent-kafka-python")
	b := startSASLBroker(t)
	gregorTool(t, "configs", "--bootstrap-server", b.Addr(), "--entity-type", "users", "--entity-name", "carol", "--alter",
		"--add-config", "SCRAM-SHA-512=[password=carol-secret]")
	createTopic(t, b.Broker, "py", 1, nil)
	script := `
import sys
addr, which = sys.argv[1], sys.argv[2]
if which.startswith("kafka-python"):
    import logging
    from kafka import KafkaProducer, KafkaConsumer
    from kafka.errors import KafkaError
    # kafka-python 2.0 authenticates with SaslHandshake v0 and raw tokens:
    # as with Kafka, a failed PLAIN exchange is a closed connection, which
    # it logs from its PLAIN authenticator.
    seen = []
    class H(logging.Handler):
        def emit(self, r):
            seen.append(r.getMessage())
    logging.getLogger("kafka.conn").addHandler(H())
    logging.getLogger("kafka.conn").setLevel(logging.INFO)
    pw = "alice-secret" if which == "kafka-python" else "wrong"
    kw = dict(bootstrap_servers=addr, security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
              sasl_plain_username="alice", sasl_plain_password=pw)
    if which == "kafka-python-scram":  # SCRAM over SaslHandshake v0 raw tokens
        pw = "carol-secret"
        kw.update(sasl_mechanism="SCRAM-SHA-512", sasl_plain_username="carol", sasl_plain_password=pw)
    if pw == "wrong":
        kw["api_version_auto_timeout_ms"] = 3000
    try:
        p = KafkaProducer(acks="all", **kw)
        p.send("py", b"from-kafka-python").get(timeout=30)
        p.close()
        c = KafkaConsumer("py", auto_offset_reset="earliest", consumer_timeout_ms=3000, **kw)
        print("ok", sorted(m.value.decode() for m in c))
        c.close()
    except KafkaError as e:
        plainFailed = any("Error receiving reply from server" in m for m in seen)
        print("error", type(e).__name__, "plain-exchange-failed" if plainFailed else "?")
else:
    from confluent_kafka import Producer, Consumer
    pw = "carol-secret" if which == "confluent" else "wrong"
    conf = {"bootstrap.servers": addr, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "SCRAM-SHA-512",
            "sasl.username": "carol", "sasl.password": pw}
    errs = []
    conf["error_cb"] = lambda e: errs.append(e)
    p = Producer(conf)
    delivered = []
    p.produce("py", b"from-confluent", on_delivery=lambda err, msg: delivered.append(err))
    import time
    deadline = time.time() + 15
    while not delivered and not errs and time.time() < deadline:
        p.poll(0.1)
    if errs:
        print("error", errs[0].name(), errs[0].str())
    else:
        print("ok", delivered)
`
	f := filepath.Join(t.TempDir(), "sasl.py")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := run(t, 2*time.Minute, "", py, f, b.sasl, "confluent"); strings.TrimSpace(out) != "ok [None]" {
		t.Fatalf("confluent-kafka over SCRAM: %q", out)
	}
	if out := run(t, 2*time.Minute, "", py, f, b.sasl, "kafka-python"); strings.TrimSpace(out) != "ok ['from-confluent', 'from-kafka-python']" {
		t.Fatalf("kafka-python over PLAIN: %q", out)
	}
	if out := run(t, 2*time.Minute, "", py, f, b.sasl, "kafka-python-scram"); strings.TrimSpace(out) != "ok ['from-confluent', 'from-kafka-python', 'from-kafka-python']" {
		t.Fatalf("kafka-python over SCRAM-SHA-512: %q", out)
	}
	out := run(t, 2*time.Minute, "", py, f, b.sasl, "kafka-python-wrong")
	if strings.TrimSpace(out) != "error NoBrokersAvailable plain-exchange-failed" {
		t.Fatalf("kafka-python with a wrong password: %q", out)
	}
	if !strings.Contains(b.Log(), `"reason": "Authentication failed: Invalid username or password"`) {
		t.Fatal("the broker did not log the failed PLAIN exchange")
	}
	out = run(t, 2*time.Minute, "", py, f, b.sasl, "confluent-wrong")
	if !strings.HasPrefix(out, "error _AUTHENTICATION") || !strings.Contains(out, "invalid credentials with SASL mechanism SCRAM-SHA-512") {
		t.Fatalf("confluent-kafka with a wrong password: %q", out)
	}
}

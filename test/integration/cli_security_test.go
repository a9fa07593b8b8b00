package integration

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"gregor/wire/security/keystore/keystoretest"
	"gregor/wire/security/tlsconf"
)

// secureCluster is a kfake cluster that requires TLS with client
// certificates and SASL SCRAM-SHA-512 (user "alice"), and the client
// properties that reach it.
type secureCluster struct {
	addr  string
	props map[string]string // SASL_SSL with truststore and keystore
	dir   string
}

func startSecureCluster(t *testing.T) *secureCluster {
	t.Helper()
	dir := t.TempDir()
	ca := keystoretest.NewCA(t, "tools-ca")
	srv := ca.Server(t, "kfake")
	s, err := tlsconf.FromProperties(func(k string) (string, bool) {
		v, ok := map[string]string{
			"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": srv.CertPEM(), "ssl.keystore.key": srv.KeyPEM(),
			"ssl.truststore.type": "PEM", "ssl.truststore.certificates": ca.CertPEM(), "ssl.client.auth": "required",
		}[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := s.Server()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClientAuth != tls.RequireAndVerifyClientCert {
		t.Fatal("server does not require client certificates")
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.TLS(cfg), kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-512", "alice", `alice "secret"`), kfake.SeedTopics(2, "sec-in"), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	client := ca.Client(t, pkix.Name{CommonName: "alice", Organization: []string{"Gregor tests"}})
	return &secureCluster{addr: c.ListenAddrs()[0], dir: dir, props: map[string]string{
		"security.protocol":   "SASL_SSL",
		"sasl.mechanism":      "SCRAM-SHA-512",
		"sasl.jaas.config":    `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice \"secret\"";`,
		"ssl.truststore.type": "JKS", "ssl.truststore.location": ca.WriteJKSTrust(t, dir, "truststore.jks", "trust-pw"), "ssl.truststore.password": "trust-pw",
		"ssl.keystore.type": "PKCS12", "ssl.keystore.location": client.WritePKCS12(t, dir, "alice.p12", "key-pw"), "ssl.keystore.password": "key-pw",
	}}
}

// file writes props (without the keys in drop) as a client.properties
// file in Java properties syntax.
func (c *secureCluster) file(t *testing.T, name string, drop ...string) string {
	t.Helper()
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(c.props)) {
		if !slices.Contains(drop, k) {
			// Java properties: backslashes escape, so they are doubled.
			fmt.Fprintf(&b, "%s=%s\n", k, strings.ReplaceAll(c.props[k], `\`, `\\`))
		}
	}
	p := filepath.Join(c.dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestToolsSecurityConfig: every client tool takes its security from its
// Kafka config flag (--command-config, --producer.config, --consumer.config,
// --admin.config, replay-log's --property) and really presents it: against
// a cluster that requires a client certificate and SCRAM-SHA-512 over TLS
// each tool works with the full client.properties, and fails with a TLS
// error (non-zero exit) when the keystore is left out.
func TestToolsSecurityConfig(t *testing.T) {
	c := startSecureCluster(t)
	full := c.file(t, "client.properties")
	noKeystore := c.file(t, "nokeystore.properties", "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password")
	bs := c.addr

	type run struct {
		name, stdin string
		args        func(cfg string) []string
		want        string // on stdout with the full config
	}
	runs := []run{
		{"topics create", "", func(cfg string) []string {
			return []string{"topics", "--bootstrap-server", bs, "--command-config", cfg, "--create", "--topic", "sec-out", "--partitions", "1", "--replication-factor", "1"}
		}, "Created topic sec-out."},
		{"topics list", "", func(cfg string) []string {
			return []string{"topics", "--bootstrap-server", bs, "--command-config", cfg, "--list"}
		}, "sec-in"},
		{"console-producer", "one\ntwo\nthree\n", func(cfg string) []string {
			return []string{"console-producer", "--bootstrap-server", bs, "--topic", "sec-in", "--producer.config", cfg}
		}, ""},
		{"console-consumer", "", func(cfg string) []string {
			return []string{"console-consumer", "--bootstrap-server", bs, "--topic", "sec-in", "--from-beginning", "--max-messages", "3", "--timeout-ms", "20000", "--group", "sec-g", "--consumer.config", cfg}
		}, "two"},
		{"consumer-groups", "", func(cfg string) []string {
			return []string{"consumer-groups", "--bootstrap-server", bs, "--command-config", cfg, "--list"}
		}, "sec-g"},
		{"configs", "", func(cfg string) []string {
			return []string{"configs", "--bootstrap-server", bs, "--command-config", cfg, "--describe", "--entity-type", "topics", "--entity-name", "sec-in"}
		}, "sec-in"},
		{"producer-perf-test", "", func(cfg string) []string {
			return []string{"producer-perf-test", "--topic", "sec-in", "--num-records", "20", "--record-size", "10", "--throughput", "-1", "--producer-props", "bootstrap.servers=" + bs, "--producer.config", cfg}
		}, "20 records sent"},
		{"consumer-perf-test", "", func(cfg string) []string {
			return []string{"consumer-perf-test", "--bootstrap-server", bs, "--topic", "sec-in", "--messages", "20", "--timeout", "20000", "--consumer.config", cfg}
		}, "start.time"},
		{"reassign-partitions", "", func(cfg string) []string {
			return []string{"reassign-partitions", "--bootstrap-server", bs, "--command-config", cfg, "--list"}
		}, "No partition reassignments found."},
		{"leader-election", "", func(cfg string) []string {
			return []string{"leader-election", "--bootstrap-server", bs, "--admin.config", cfg, "--election-type", "preferred", "--topic", "sec-in", "--partition", "0"}
		}, ""},
		{"transactions", "", func(cfg string) []string {
			return []string{"transactions", "--bootstrap-server", bs, "--command-config", cfg, "list"}
		}, "TransactionalId"},
	}
	for _, r := range runs {
		code, out, errs := cliRunIn(t, nil, r.stdin, "", r.args(full)...)
		if r.name == "leader-election" {
			// kfake answers ElectLeaders with its own verdict; what matters
			// here is that the tool authenticated and got an answer.
			if strings.Contains(errs, "tls") || strings.Contains(errs, "SASL") {
				t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", r.name, code, out, errs)
			}
			continue
		}
		if code != 0 || !strings.Contains(out, r.want) {
			t.Errorf("%s with the full config: exit %d, want %q on stdout\nstdout:\n%s\nstderr:\n%s", r.name, code, r.want, out, errs)
		}
		for _, secret := range []string{"alice \"secret\"", "key-pw", "trust-pw"} {
			if strings.Contains(out+errs, secret) {
				t.Errorf("%s printed a secret", r.name)
			}
		}
	}
	// replay-log takes producer properties only as --property; the
	// security applies to all its clients.
	var replay []string
	for _, k := range slices.Sorted(maps.Keys(c.props)) {
		replay = append(replay, "--property", k+"="+c.props[k])
	}
	code, out, errs := cliRunIn(t, nil, "", "", append([]string{"replay-log-producer", "--broker-list", bs, "--inputtopic", "sec-in", "--outputtopic", "sec-replayed", "--messages", "3"}, replay...)...)
	if code != 0 {
		t.Errorf("replay-log-producer: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}

	// Without the keystore the TLS handshake fails (the cluster requires a
	// certificate): a readable error and a non-zero exit, no hang.
	for _, r := range runs {
		switch r.name {
		case "topics list", "console-producer", "configs", "transactions", "producer-perf-test":
		default:
			continue
		}
		args := r.args(noKeystore)
		switch r.name { // bounded retries: the failure is the point
		case "producer-perf-test":
			args = append(args, "--producer-props", "delivery.timeout.ms=2000")
		case "console-producer":
			args = append(args, "--producer-property", "delivery.timeout.ms=2000")
		}
		code, out, errs := cliRunIn(t, nil, r.stdin, "", args...)
		if r.name == "producer-perf-test" && strings.Contains(errs, "tls: certificate required") {
			continue // as Kafka's ProducerPerformance, failed sends are reported, the exit stays 0
		}
		if code == 0 || !strings.Contains(strings.ToLower(out+errs), "certificate") && !strings.Contains(strings.ToLower(out+errs), "tls") {
			t.Errorf("%s without the keystore: exit %d, want a TLS failure\nstdout:\n%s\nstderr:\n%s", r.name, code, out, errs)
		}
	}

	// Bad values fail before any connection, naming the key, never a secret.
	bad := c.file(t, "bad.properties", "sasl.jaas.config")
	code, _, errs = cliRunIn(t, nil, "", "", "topics", "--bootstrap-server", bs, "--command-config", bad, "--list")
	if code == 0 || !strings.Contains(errs, "needs sasl.jaas.config") || strings.Contains(errs, "key-pw") {
		t.Errorf("no sasl.jaas.config: exit %d %q", code, errs)
	}
}

package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/scram"

	"gregor/replication/zkmeta"
	"gregor/test/harness"
	"gregor/test/zkharness"
)

// gregorTool runs `gregor <args>` and returns its combined output,
// failing the test on a non-zero exit.
func gregorTool(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, harness.Binary(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("gregor %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func configsTool(t *testing.T, args ...string) string {
	t.Helper()
	return gregorTool(t, append([]string{"configs"}, args...)...)
}

// TestSCRAMUsersAcrossCluster: SCRAM credentials created with
// kafka-configs --zookeeper (straight into /config/users) and with
// --bootstrap-server (AlterUserScramCredentials through one broker) log
// in on both brokers of a ZooKeeper cluster without a restart; the znode
// has Kafka's layout; a deleted credential stops working everywhere.
func TestSCRAMUsersAcrossCluster(t *testing.T) {
	saslAddr := map[int32]string{}
	c := startClusterEach(t, zkharness.Options{}, 2, map[string]string{
		"sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
	}, nil, func(id int32) map[string]string {
		saslAddr[id] = fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
		return map[string]string{"listeners": "SASL_PLAINTEXT://" + saslAddr[id]}
	})
	addrs := []string{saslAddr[1], saslAddr[2]}
	alice := scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism()
	alice512 := scram.Auth{User: "alice", Pass: "alice-512"}.AsSha512Mechanism()

	out := configsTool(t, "--zookeeper", c.connect, "--entity-type", "users", "--entity-name", "alice", "--alter",
		"--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-512]")
	if out != "Completed updating config for entity: user-principal 'alice'.\n" {
		t.Fatalf("alter printed %q", out)
	}
	data, _, err := c.store.Get("/config/users/alice")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := zkmeta.DecodeConfig(data)
	if err != nil || !strings.HasPrefix(cfg["SCRAM-SHA-256"], "salt=") || !strings.HasSuffix(cfg["SCRAM-SHA-256"], ",iterations=8192") ||
		!strings.Contains(cfg["SCRAM-SHA-512"], ",stored_key=") || !strings.HasSuffix(cfg["SCRAM-SHA-512"], ",iterations=4096") {
		t.Fatalf("/config/users/alice = %s (%v)", data, err)
	}
	harness.WaitSASL(t, "alice (SHA-256, --zookeeper)", addrs, alice, true)
	harness.WaitSASL(t, "alice (SHA-512, --zookeeper)", addrs, alice512, true)
	out = configsTool(t, "--zookeeper", c.connect, "--entity-type", "users", "--entity-name", "alice", "--describe")
	if !strings.HasPrefix(out, "Configs for user-principal 'alice' are SCRAM-SHA-256=salt=") {
		t.Fatalf("describe printed %q", out)
	}

	// Through the API of broker 2; logs in on broker 1 too.
	configsTool(t, "--bootstrap-server", c.brokers[2].Addr(), "--entity-type", "users", "--entity-name", "bob", "--alter",
		"--add-config", "SCRAM-SHA-512=[iterations=4096,password=bob-secret]")
	bob := scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha512Mechanism()
	harness.WaitSASL(t, "bob (--bootstrap-server)", addrs, bob, true)
	out = configsTool(t, "--bootstrap-server", c.brokers[1].Addr(), "--entity-type", "users", "--describe")
	want := "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n" +
		"SCRAM credential configs for user-principal 'bob' are SCRAM-SHA-512=iterations=4096\n"
	if out != want {
		t.Fatalf("describe all printed\n%s\nwant\n%s", out, want)
	}

	// Deleted: refused on both brokers, the other mechanism still works.
	configsTool(t, "--zookeeper", c.connect, "--entity-type", "users", "--entity-name", "alice", "--alter", "--delete-config", "SCRAM-SHA-256")
	harness.WaitSASL(t, "alice SHA-256 deleted", addrs, alice, false)
	harness.WaitSASL(t, "alice SHA-512 kept", addrs, alice512, true)
	configsTool(t, "--bootstrap-server", c.brokers[1].Addr(), "--entity-type", "users", "--entity-name", "bob", "--alter", "--delete-config", "SCRAM-SHA-512")
	harness.WaitSASL(t, "bob deleted", addrs, bob, false)
}

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gregor/replication/zkstore"
	"gregor/test/harness"
	"gregor/test/zkharness"
)

// aclsBlock is one "Current ACLs for resource" block of kafka-acls.sh's
// --list output, for a resource and its entries in the tool's order.
func aclsBlock(resource string, entries ...string) string {
	return "Current ACLs for resource `" + resource + "`: \n \t" + strings.Join(entries, "\n\t") + " \n\n"
}

func aclEntry(principal, host, op, perm string) string {
	return "(principal=" + principal + ", host=" + host + ", operation=" + op + ", permissionType=" + perm + ")"
}

// TestAclsTool runs bin/kafka-acls.sh against a broker process on a real
// ZooKeeper with the AclAuthorizer on, in both of its forms: through the
// broker (--bootstrap-server, CreateAcls/DescribeAcls/DeleteAcls) and
// straight into ZooKeeper (--authorizer-properties zookeeper.connect=…).
// ACLs written one way are read the other way (the broker sees the
// ZooKeeper writes through its change-notification watcher), the
// --producer/--consumer shortcuts store exactly Kafka's ACLs, and --remove
// with a confirmation and with --force takes them away.
func TestAclsTool(t *testing.T) {
	zk := zkharness.Start(t, zkharness.Options{})
	connect := zk.Addr() + "/gregor"
	b := harness.StartBroker(t, map[string]string{
		"zookeeper.connect":     connect,
		"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
		"super.users":           "User:ANONYMOUS", // the tool connects over PLAINTEXT
	})
	cfg := filepath.Join(t.TempDir(), "admin.properties")
	if err := os.WriteFile(cfg, []byte("client.id=acl-tool\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	viaBroker := []string{"--bootstrap-server", b.Addr(), "--command-config", cfg}
	viaZK := []string{"--authorizer-properties", "zookeeper.connect=" + connect}
	const warning = "Warning: support for ACL configuration directly through the authorizer is deprecated and will be removed in a future release. Please use --bootstrap-server instead to set ACLs through the admin client.\n"
	acls := func(stdin string, via []string, args ...string) string {
		t.Helper()
		code, out, errs := cliRunIn(t, nil, stdin, "kafka-acls.sh", append(append([]string{}, via...), args...)...)
		wantErr := ""
		if via[0] != "--bootstrap-server" {
			wantErr = warning
		}
		if code != 0 || errs != wantErr {
			t.Fatalf("kafka-acls.sh %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errs)
		}
		return out
	}
	// eventually polls the broker's listing until it is want: the broker
	// learns of ZooKeeper writes from a notification, asynchronously.
	eventually := func(args []string, want string) {
		t.Helper()
		var out string
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if out = acls("", viaBroker, args...); out == want {
				return
			}
		}
		t.Fatalf("broker listing %q:\n%s\nwant\n%s", args, out, want)
	}
	topic := func(n, pt string) string {
		return "ResourcePattern(resourceType=TOPIC, name=" + n + ", patternType=" + pt + ")"
	}

	// Through the broker: add, then read from ZooKeeper.
	out := acls("", viaBroker, "--add", "--topic", "t1", "--allow-principal", "User:alice", "--operation", "Read", "--allow-host", "10.0.0.1")
	alice := aclEntry("User:alice", "10.0.0.1", "READ", "ALLOW")
	if want := "Adding ACLs for resource `" + topic("t1", "LITERAL") + "`: \n \t" + alice + " \n\n"; out != want {
		t.Fatalf("add printed\n%q\nwant\n%q", out, want)
	}
	if out := acls("", viaZK, "--list", "--topic", "t1"); out != aclsBlock(topic("t1", "LITERAL"), alice) {
		t.Fatalf("ZooKeeper listing after a broker add:\n%s", out)
	}

	// In ZooKeeper: the producer shortcut, stored in Kafka's layout, then
	// seen by the broker.
	acls("", viaZK, "--add", "--producer", "--topic", "t2", "--transactional-id", "tx", "--idempotent", "--allow-principal", "User:p")
	s, err := zkstore.Open(connect, zkstore.Config{SessionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := s.Get("/kafka-acl/TransactionalId/tx")
	s.Close()
	if err != nil || !strings.Contains(string(data), `"operation":"Write"`) || !strings.Contains(string(data), `"principal":"User:p"`) {
		t.Fatalf("/kafka-acl/TransactionalId/tx = %s, %v", data, err)
	}
	p := func(op string) string { return aclEntry("User:p", "*", op, "ALLOW") }
	producerList := aclsBlock(topic("t1", "LITERAL"), alice) +
		aclsBlock(topic("t2", "LITERAL"), p("WRITE"), p("CREATE"), p("DESCRIBE")) +
		aclsBlock("ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)", p("IDEMPOTENT_WRITE")) +
		aclsBlock("ResourcePattern(resourceType=TRANSACTIONAL_ID, name=tx, patternType=LITERAL)", p("WRITE"), p("DESCRIBE"))
	eventually([]string{"--list"}, producerList)

	// Through the broker: the consumer shortcut on a prefixed topic, seen
	// in ZooKeeper; --principal narrows the listing.
	acls("", viaBroker, "--add", "--consumer", "--topic", "logs-", "--group", "g", "--resource-pattern-type", "prefixed", "--allow-principal", "User:c")
	c := func(op string) string { return aclEntry("User:c", "*", op, "ALLOW") }
	consumerList := "ACLs for principal `User:c`\n" +
		aclsBlock(topic("logs-", "PREFIXED"), c("READ"), c("DESCRIBE")) +
		aclsBlock("ResourcePattern(resourceType=GROUP, name=g, patternType=PREFIXED)", c("READ"))
	if out := acls("", viaZK, "--list", "--principal", "User:c"); out != consumerList {
		t.Fatalf("ZooKeeper listing of User:c:\n%s\nwant\n%s", out, consumerList)
	}
	if out := acls("", viaBroker, "--list", "--topic", "logs-app", "--resource-pattern-type", "match"); out != aclsBlock(topic("logs-", "PREFIXED"), c("READ"), c("DESCRIBE")) {
		t.Fatalf("broker MATCH listing:\n%s", out)
	}

	// Remove in ZooKeeper after a "y", then through the broker with --force.
	q := "Are you sure you want to delete all ACLs for resource filter `" + topic("t1", "LITERAL") + "`? (y/n)\n"
	if out := acls("y\n", viaZK, "--remove", "--topic", "t1"); out != q {
		t.Fatalf("remove asked %q, want %q", out, q)
	}
	eventually([]string{"--list", "--topic", "t1"}, "")
	acls("", viaBroker, "--remove", "--force", "--producer", "--topic", "t2", "--transactional-id", "tx", "--idempotent", "--allow-principal", "User:p")
	acls("", viaBroker, "--remove", "--force", "--consumer", "--topic", "logs-", "--group", "g", "--resource-pattern-type", "prefixed", "--allow-principal", "User:c")
	if out := acls("", viaZK, "--list"); out != "" {
		t.Fatalf("ZooKeeper still lists\n%s", out)
	}
}

// TestAclsToolWithoutAuthorizer: a broker with no authorizer answers the
// ACL requests SECURITY_DISABLED (with AclApis' two messages), which the
// tool reports as Kafka's does.
func TestAclsToolWithoutAuthorizer(t *testing.T) {
	b := harness.StartBroker(t, nil)
	code, out, errs := cliRun(t, nil, "kafka-acls.sh", "--bootstrap-server", b.Addr(), "--add", "--topic", "t", "--allow-principal", "User:a")
	want := "Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`: \n \t" +
		aclEntry("User:a", "*", "ALL", "ALLOW") + " \n\n" +
		"Error while executing ACL command: org.apache.kafka.common.errors.SecurityDisabledException: No Authorizer is configured.\n"
	if code != 1 || out != want || errs != "" {
		t.Fatalf("exit %d\nstdout:\n%q\nwant\n%q\nstderr:\n%s", code, out, want, errs)
	}
	code, out, errs = cliRun(t, nil, "kafka-acls.sh", "--bootstrap-server", b.Addr(), "--list")
	want = "Error while executing ACL command: org.apache.kafka.common.errors.SecurityDisabledException: No Authorizer is configured on the broker\n"
	if code != 1 || out != want || errs != "" {
		t.Fatalf("--list: exit %d\nstdout:\n%q\nwant\n%q\nstderr:\n%s", code, out, want, errs)
	}
}

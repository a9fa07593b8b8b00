package acls

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

const bs = "--bootstrap-server"

// TestUsageErrors runs command lines that AclCommand refuses before
// touching any cluster (the port is closed: reaching it would fail the
// test differently) and checks the exit status and the message, the last
// line on stderr, in Kafka's words (AclCommandTest's cases and more; the
// trailing space of Kafka's "exactly one action" message is trimmed, as
// every tool's one-line error is).
func TestUsageErrors(t *testing.T) {
	const zk = "--authorizer-properties"
	const zkc = "zookeeper.connect=127.0.0.1:1"
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "This tool helps to manage acls on kafka."},
		{[]string{bs, "h:1", "--authorizer", "kafka.security.authorizer.AclAuthorizer"}, "Only one of --bootstrap-server or --authorizer must be specified"},
		{[]string{"--authorizer", "kafka.security.authorizer.AclAuthorizer"}, `Missing required argument "[authorizer-properties]"`},
		{[]string{"--command-config", "cfg.properties", "--authorizer", "kafka.security.authorizer.AclAuthorizer", zk, zkc}, "The --command-config option can only be used with --bootstrap-server option"},
		{[]string{bs, "h:1", zk, zkc}, "The --authorizer-properties option can only be used with --authorizer option"},
		{[]string{bs, "h:1"}, "Command must include exactly one action: --list, --add, --remove. "},
		{[]string{bs, "h:1", "--add", "--list"}, "Command must include exactly one action: --list, --add, --remove. "},
		{[]string{bs, "h:1", "--add", "--list", "--remove"}, "Command must include exactly one action: --list, --add, --remove. "},
		{[]string{bs, "h:1", "--add", "--principal", "User:CN=client"}, "The --principal option is only available if --list is set"},
		{[]string{bs, "h:1", "--add", "--producer"}, "With --producer you must specify a --topic"},
		{[]string{bs, "h:1", "--add", "--idempotent"}, "The --idempotent option is only available if --producer is set"},
		{[]string{bs, "h:1", "--add", "--consumer"}, "With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should be specified."},
		{[]string{bs, "h:1", "--add", "--consumer", "--topic", "t", "--group", "g", "--cluster"}, "With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should be specified."},
		{[]string{bs, "h:1", "--add", "--consumer", "--topic", "t", "--group", "g", "--transactional-id", "x"}, "With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should be specified."},
		{[]string{bs, "h:1", "--list", "--producer"}, `Option "[list]" can't be used with option "[producer]"`},
		{[]string{bs, "h:1", "--list", "--allow-principal", "User:a"}, `Option "[list]" can't be used with option "[allow-principal]"`},
		{[]string{bs, "h:1", "--add", "--producer", "--operation", "Read"}, `Option "[producer]" can't be used with option "[operation]"`},
		{[]string{bs, "h:1", "--add", "--producer", "--topic", "t", "--deny-principal", "User:a"}, `Option "[producer]" can't be used with option "[deny-principal]"`},
		{[]string{bs, "h:1", "--add", "--consumer", "--operation", "Read", "--topic", "test-topic", "--group", "test-group"}, `Option "[consumer]" can't be used with option "[operation]"`},
		// Built while computing the ACLs (getResourceToAcls and friends).
		{[]string{bs, "h:1", "--add", "--topic", "t", "--allow-principal", "User:a", "--resource-pattern-type", "any"}, "A '--resource-pattern-type' value of 'ANY' is not valid when adding acls."},
		{[]string{bs, "h:1", "--add", "--topic", "t", "--allow-principal", "User:a", "--resource-pattern-type", "match"}, "A '--resource-pattern-type' value of 'MATCH' is not valid when adding acls."},
		{[]string{bs, "h:1", "--add", "--topic", "t", "--resource-pattern-type", "foo"}, "Cannot parse argument 'foo' of option resource-pattern-type: Value [foo] is not one of [ANY|MATCH|LITERAL|PREFIXED]"},
		{[]string{bs, "h:1", "--list", "--resource-pattern-type", "unknown"}, "Cannot parse argument 'unknown' of option resource-pattern-type: Unknown resource-pattern-type: unknown"},
		{[]string{bs, "h:1", "--add", "--topic", "t"}, "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs."},
		{[]string{bs, "h:1", "--add", "--allow-principal", "User:a"}, "You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --delegation-token <Delegation Token ID>"},
		{[]string{bs, "h:1", "--remove", "--force"}, "You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --delegation-token <Delegation Token ID>"},
		{[]string{bs, "h:1", "--add", "--cluster", "--allow-principal", "User:a", "--operation", "Read"}, "ResourceType CLUSTER only supports operations Create, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, Alter, Describe, All"},
		{[]string{bs, "h:1", "--add", "--group", "g", "--allow-principal", "User:a", "--operation", "Write"}, "ResourceType GROUP only supports operations Read, Describe, Delete, All"},
		{[]string{bs, "h:1", "--add", "--transactional-id", "x", "--allow-principal", "User:a", "--operation", "Bogus"}, "ResourceType TRANSACTIONAL_ID only supports operations Describe, Write, All"},
		{[]string{bs, "h:1", "--add", "--delegation-token", "tok", "--allow-principal", "User:a", "--operation", "Read"}, "ResourceType DELEGATION_TOKEN only supports operations Describe, All"},
		{[]string{bs, "h:1", "--add", "--user-principal", "User:u", "--allow-principal", "User:a", "--operation", "Read"}, "ResourceType USER only supports operations CreateTokens, DescribeTokens, All"},
		// Gregor's refusals instead of silently ignoring.
		{[]string{zk, zkc, "--zk-tls-config-file", "tls.properties", "--list"}, "--zk-tls-config-file is not supported: the ZooKeeper client here has no TLS"},
		{[]string{zk, zkc, zk, "zookeeper.max.in.flight.requests=10", "--list"}, "Unsupported authorizer property zookeeper.max.in.flight.requests: kafka-acls.sh takes zookeeper.connect, authorizer.zookeeper.url, zookeeper.session.timeout.ms, zookeeper.connection.timeout.ms and zookeeper.set.acl=false"},
		{[]string{zk, zkc, zk, "zookeeper.set.acl=true", "--list"}, "zookeeper.set.acl=true is not supported: Gregor writes ZooKeeper nodes open to all (world:anyone), as Kafka does without it"},
	} {
		o, err := ParseArgs(c.args)
		if err != nil {
			t.Fatalf("%q: parse: %v", c.args, err)
		}
		var out, errb bytes.Buffer
		code := Main(context.Background(), o, strings.NewReader(""), &out, &errb)
		lines := strings.Split(strings.TrimRight(errb.String(), "\n"), "\n")
		if code != 1 || lines[len(lines)-1] != strings.TrimSpace(c.want) || out.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want exit 1 and %q", c.args, code, errb.String(), out.String(), c.want)
		}
		if warn := !slices.Contains(c.args, bs) && slices.Contains(c.args, zk); warn != (lines[0] == deprecationWarning) {
			t.Errorf("%q: stderr %q: deprecation warning first = %v, want %v", c.args, errb.String(), !warn, warn)
		}
	}
}

// TestCommandErrors are failures AclCommand reports from inside its try
// block: "Error while executing ACL command: …" on stdout, exit 1.
func TestCommandErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{bs, "h:1", "--add", "--topic", "t", "--allow-principal", "alice"}, "Error while executing ACL command: expected a string in format principalType:principalName but got alice"},
		{[]string{bs, "h:1", "--list", "--principal", "bob"}, "Error while executing ACL command: expected a string in format principalType:principalName but got bob"},
		{[]string{"--authorizer-properties", "zookeeper.connect 127.0.0.1:1", "--list"}, "Error while executing ACL command: Missing value for key zookeeper.connect 127.0.0.1:1}"},
		{[]string{"--authorizer-properties", "authorizer.zookeeper.url=127.0.0.1:1", "--list"}, `Error while executing ACL command: Missing required configuration "zookeeper.connect" which has no default value.`},
		{[]string{"--authorizer", "com.example.Nope", "--authorizer-properties", "zookeeper.connect=127.0.0.1:1", "--list"}, "Error while executing ACL command: authorizer class com.example.Nope is not available: kafka-acls.sh here works with kafka.security.authorizer.AclAuthorizer or kafka.security.auth.SimpleAclAuthorizer (ZooKeeper ACLs)"},
		{[]string{bs, "h:1", "--command-config", "/nonexistent/acl.properties", "--list"}, "Error while executing ACL command: reading /nonexistent/acl.properties: open /nonexistent/acl.properties: no such file or directory"},
	} {
		o, err := ParseArgs(c.args)
		if err != nil {
			t.Fatalf("%q: parse: %v", c.args, err)
		}
		var out, errb bytes.Buffer
		code := Main(context.Background(), o, strings.NewReader(""), &out, &errb)
		if code != 1 || strings.TrimRight(out.String(), "\n") != c.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 1 and %q", c.args, code, out.String(), errb.String(), c.want)
		}
	}
}

func TestAuthorizerProperties(t *testing.T) {
	cfg, err := parseAuthorizerProperties([]string{"zookeeper.connect=a:2181/k", "zookeeper.session.timeout.ms=6000",
		"super.users=User:admin;User:ops", "allow.everyone.if.no.acl.found=TRUE", "zookeeper.set.acl=false"})
	if err != nil || cfg.connect != "a:2181/k" || cfg.sessionTimeout != 6*time.Second || cfg.connectionTimeout != 6*time.Second {
		t.Fatalf("%+v %v", cfg, err)
	}
	cfg, err = parseAuthorizerProperties([]string{"zookeeper.connect=a:2181", "authorizer.zookeeper.url=b:2181/acl",
		"zookeeper.session.timeout.ms=6000", "authorizer.zookeeper.session.timeout.ms=9000", "zookeeper.connection.timeout.ms=1500"})
	if err != nil || cfg.connect != "b:2181/acl" || cfg.sessionTimeout != 9*time.Second || cfg.connectionTimeout != 1500*time.Millisecond {
		t.Fatalf("%+v %v", cfg, err)
	}
	if cfg, err := parseAuthorizerProperties([]string{"zookeeper.connect=a:2181"}); err != nil || cfg.sessionTimeout != DefaultZooKeeperSessionTimeout {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	for _, bad := range [][]string{
		{"zookeeper.connect=a:2181", "zookeeper.session.timeout.ms=soon"},
		{"zookeeper.connect=a:2181", "allow.everyone.if.no.acl.found=yes"},
		{"zookeeper.connect=a:2181", "super.users=admin"},
		{"zookeeper.connect=a:2181", "zookeeper.clientCnxnSocket=x"},
	} {
		if _, err := parseAuthorizerProperties(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

package acls

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"gregor/replication/metastore"
	"gregor/wire/security/acl"
)

// keepOpen is a backend whose close leaves the store open for the test.
type keepOpen struct{ backend }

func (keepOpen) close() {}

// embeddedACLs is the AclAuthorizer storage over an embedded store, as
// the single node keeps it (the same code as over ZooKeeper).
func embeddedACLs(t *testing.T) metastore.Store {
	t.Helper()
	s, err := metastore.OpenEmbeddedDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := acl.EnsurePaths(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// runOn runs a command line against store s with stdin; the command
// lines use the authorizer form (the store stands in for ZooKeeper).
func runOn(t *testing.T, s metastore.Store, stdin string, args ...string) (int, string, string) {
	t.Helper()
	o, err := ParseArgs(append([]string{"--authorizer-properties", "zookeeper.connect=127.0.0.1:1"}, args...))
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), o, keepOpen{newAuthorizerBackend(s)}, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), strings.TrimPrefix(errb.String(), deprecationWarning+"\n")
}

func mustRun(t *testing.T, s metastore.Store, stdin string, args ...string) string {
	t.Helper()
	code, out, errs := runOn(t, s, stdin, args...)
	if code != 0 || errs != "" {
		t.Fatalf("%q: exit %d, stderr %q, stdout %q", args, code, errs, out)
	}
	return out
}

// stored lists every stored binding as "TYPE:name:PATTERN principal host OP PERM" lines.
func stored(t *testing.T, s metastore.Store) string {
	t.Helper()
	bs, err := acl.List(s, acl.AnyFilter)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, g := range group(bs, func(acl.Entry) bool { return true }) {
		for _, e := range g.entries {
			lines = append(lines, fmt.Sprintf("%s:%s:%s %s %s %s %s", g.pattern.Type.EnumName(), g.pattern.Name, g.pattern.Pattern,
				e.Principal, e.Host, e.Operation.EnumName(), e.Permission.EnumName()))
		}
	}
	return strings.Join(lines, "\n")
}

func topicText(name string) string {
	return "ResourcePattern(resourceType=TOPIC, name=" + name + ", patternType=LITERAL)"
}

func TestAddListRemoveOutput(t *testing.T) {
	s := embeddedACLs(t)
	out := mustRun(t, s, "", "--add", "--topic", "test", "--allow-principal", "User:alice", "--allow-host", "10.0.0.1",
		"--operation", "Read", "--operation", "Write", "--deny-principal", "User:bob")
	acls := " \n" +
		" \t(principal=User:alice, host=10.0.0.1, operation=READ, permissionType=ALLOW)\n" +
		"\t(principal=User:alice, host=10.0.0.1, operation=WRITE, permissionType=ALLOW)\n" +
		"\t(principal=User:bob, host=*, operation=READ, permissionType=DENY)\n" +
		"\t(principal=User:bob, host=*, operation=WRITE, permissionType=DENY) \n\n"
	if want := "Adding ACLs for resource `" + topicText("test") + "`:" + acls; out != want {
		t.Fatalf("add printed\n%q\nwant\n%q", out, want)
	}
	// Another resource, so the listing has two.
	mustRun(t, s, "", "--add", "--group", "g1", "--allow-principal", "User:alice", "--operation", "read")
	groupBlock := "Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=g1, patternType=LITERAL)`: \n" +
		" \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW) \n\n"
	out = mustRun(t, s, "", "--list")
	if want := "Current ACLs for resource `" + topicText("test") + "`:" + acls + groupBlock; out != want {
		t.Fatalf("list printed\n%q\nwant\n%q", out, want)
	}
	out = mustRun(t, s, "", "--list", "--topic", "test")
	if want := "Current ACLs for resource `" + topicText("test") + "`:" + acls; out != want {
		t.Fatalf("list --topic printed\n%q\nwant\n%q", out, want)
	}
	out = mustRun(t, s, "", "--list", "--principal", "User:bob", "--principal", "User:alice")
	want := "ACLs for principal `User:bob`\n" +
		"Current ACLs for resource `" + topicText("test") + "`: \n" +
		" \t(principal=User:bob, host=*, operation=READ, permissionType=DENY)\n" +
		"\t(principal=User:bob, host=*, operation=WRITE, permissionType=DENY) \n\n" +
		"ACLs for principal `User:alice`\n" +
		"Current ACLs for resource `" + topicText("test") + "`: \n" +
		" \t(principal=User:alice, host=10.0.0.1, operation=READ, permissionType=ALLOW)\n" +
		"\t(principal=User:alice, host=10.0.0.1, operation=WRITE, permissionType=ALLOW) \n\n" + groupBlock
	if out != want {
		t.Fatalf("list --principal printed\n%q\nwant\n%q", out, want)
	}

	// --remove of one entry, confirmed on stdin.
	out = mustRun(t, s, "y\n", "--remove", "--topic", "test", "--allow-principal", "User:alice", "--allow-host", "10.0.0.1", "--operation", "Read")
	if want := "Are you sure you want to remove ACLs: \n" +
		" \t(principal=User:alice, host=10.0.0.1, operation=READ, permissionType=ALLOW) \n" +
		" from resource filter `" + topicText("test") + "`? (y/n)\n"; out != want {
		t.Fatalf("remove asked\n%q\nwant\n%q", out, want)
	}
	if got, want := stored(t, s), "TOPIC:test:LITERAL User:alice 10.0.0.1 WRITE ALLOW\n"+
		"TOPIC:test:LITERAL User:bob * READ DENY\n"+
		"TOPIC:test:LITERAL User:bob * WRITE DENY\n"+
		"GROUP:g1:LITERAL User:alice * READ ALLOW"; got != want {
		t.Fatalf("after removing one ACL:\n%s\nwant\n%s", got, want)
	}
	// All of the topic's, answered "n" (nothing happens), then "Y".
	q := "Are you sure you want to delete all ACLs for resource filter `" + topicText("test") + "`? (y/n)\n"
	if out := mustRun(t, s, "n\n", "--remove", "--topic", "test"); out != q {
		t.Fatalf("remove asked %q, want %q", out, q)
	}
	if got := stored(t, s); !strings.Contains(got, "TOPIC:test") {
		t.Fatalf("answer n removed ACLs:\n%s", got)
	}
	if out := mustRun(t, s, "Y\n", "--remove", "--topic", "test"); out != q {
		t.Fatalf("remove asked %q, want %q", out, q)
	}
	if got, want := stored(t, s), "GROUP:g1:LITERAL User:alice * READ ALLOW"; got != want {
		t.Fatalf("after removing the topic's ACLs:\n%s\nwant\n%s", got, want)
	}
	// No answer at all: an error, nothing removed.
	code, out, _ := runOn(t, s, "", "--remove", "--group", "g1")
	if code != 1 || !strings.HasSuffix(out, "Error while executing ACL command: no answer to the confirmation on standard input (use --force to remove without asking)\n") {
		t.Fatalf("remove without an answer: exit %d, %q", code, out)
	}
	if out := mustRun(t, s, "", "--remove", "--group", "g1", "--force"); out != "" {
		t.Fatalf("remove --force printed %q", out)
	}
	if got := stored(t, s); got != "" {
		t.Fatalf("left after removing everything:\n%s", got)
	}
	if out := mustRun(t, s, "", "--list"); out != "" {
		t.Fatalf("empty list printed %q", out)
	}
}

// TestShortcuts checks that --producer and --consumer store exactly the
// ACLs Kafka's AclCommand creates for them.
func TestShortcuts(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--producer", "--topic", "t1", "--topic", "t2"},
			"TOPIC:t1:LITERAL User:p * WRITE ALLOW\nTOPIC:t1:LITERAL User:p * CREATE ALLOW\nTOPIC:t1:LITERAL User:p * DESCRIBE ALLOW\n" +
				"TOPIC:t2:LITERAL User:p * WRITE ALLOW\nTOPIC:t2:LITERAL User:p * CREATE ALLOW\nTOPIC:t2:LITERAL User:p * DESCRIBE ALLOW"},
		{[]string{"--producer", "--topic", "t1", "--transactional-id", "tx", "--idempotent"},
			"TOPIC:t1:LITERAL User:p * WRITE ALLOW\nTOPIC:t1:LITERAL User:p * CREATE ALLOW\nTOPIC:t1:LITERAL User:p * DESCRIBE ALLOW\n" +
				"CLUSTER:kafka-cluster:LITERAL User:p * IDEMPOTENT_WRITE ALLOW\n" +
				"TRANSACTIONAL_ID:tx:LITERAL User:p * WRITE ALLOW\nTRANSACTIONAL_ID:tx:LITERAL User:p * DESCRIBE ALLOW"},
		// Kafka's producer shortcut ignores --group and, without --idempotent, --cluster.
		{[]string{"--producer", "--topic", "t1", "--group", "g", "--cluster"},
			"TOPIC:t1:LITERAL User:p * WRITE ALLOW\nTOPIC:t1:LITERAL User:p * CREATE ALLOW\nTOPIC:t1:LITERAL User:p * DESCRIBE ALLOW"},
		{[]string{"--consumer", "--topic", "t1", "--group", "g", "--allow-host", "10.0.0.9"},
			"TOPIC:t1:LITERAL User:p 10.0.0.9 READ ALLOW\nTOPIC:t1:LITERAL User:p 10.0.0.9 DESCRIBE ALLOW\nGROUP:g:LITERAL User:p 10.0.0.9 READ ALLOW"},
		{[]string{"--producer", "--consumer", "--topic", "t1", "--group", "g"},
			"TOPIC:t1:LITERAL User:p * READ ALLOW\nTOPIC:t1:LITERAL User:p * WRITE ALLOW\nTOPIC:t1:LITERAL User:p * CREATE ALLOW\nTOPIC:t1:LITERAL User:p * DESCRIBE ALLOW\n" +
				"GROUP:g:LITERAL User:p * READ ALLOW"},
		{[]string{"--producer", "--topic", "Test-", "--resource-pattern-type", "Prefixed", "--idempotent"},
			"TOPIC:Test-:PREFIXED User:p * WRITE ALLOW\nTOPIC:Test-:PREFIXED User:p * CREATE ALLOW\nTOPIC:Test-:PREFIXED User:p * DESCRIBE ALLOW\n" +
				"CLUSTER:kafka-cluster:LITERAL User:p * IDEMPOTENT_WRITE ALLOW"},
	} {
		s := embeddedACLs(t)
		args := append([]string{"--add", "--allow-principal", "User:p"}, c.args...)
		mustRun(t, s, "", args...)
		if got := stored(t, s); got != c.want {
			t.Errorf("%q stored\n%s\nwant\n%s", c.args, got, c.want)
		}
		// The same shortcut with --remove takes exactly those away.
		args[0] = "--remove"
		mustRun(t, s, "", append(args, "--force")...)
		if got := stored(t, s); got != "" {
			t.Errorf("%q: --remove left\n%s", c.args, got)
		}
	}
}

// TestPatternTypes: prefixed ACLs are found by MATCH and ANY filters and
// removed only by a filter that selects their pattern.
func TestPatternTypes(t *testing.T) {
	s := embeddedACLs(t)
	mustRun(t, s, "", "--add", "--topic", "Test-", "--resource-pattern-type", "PREFIXED", "--allow-principal", "User:a", "--operation", "Read")
	mustRun(t, s, "", "--add", "--topic", "*", "--allow-principal", "User:b", "--operation", "Describe")
	mustRun(t, s, "", "--add", "--topic", "Test-1", "--allow-principal", "User:c", "--operation", "Write")
	prefixed := "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=Test-, patternType=PREFIXED)`: \n" +
		" \t(principal=User:a, host=*, operation=READ, permissionType=ALLOW) \n\n"
	star := "Current ACLs for resource `" + topicText("*") + "`: \n" +
		" \t(principal=User:b, host=*, operation=DESCRIBE, permissionType=ALLOW) \n\n"
	lit := "Current ACLs for resource `" + topicText("Test-1") + "`: \n" +
		" \t(principal=User:c, host=*, operation=WRITE, permissionType=ALLOW) \n\n"
	if out := mustRun(t, s, "", "--list", "--topic", "Test-1", "--resource-pattern-type", "match"); out != star+lit+prefixed {
		t.Fatalf("match listing\n%q\nwant\n%q", out, star+lit+prefixed)
	}
	if out := mustRun(t, s, "", "--list", "--topic", "Test-", "--resource-pattern-type", "any"); out != prefixed {
		t.Fatalf("any listing\n%q\nwant\n%q", out, prefixed)
	}
	if out := mustRun(t, s, "", "--list", "--topic", "Test-"); out != "" {
		t.Fatalf("literal listing of a prefixed name printed %q", out)
	}
	mustRun(t, s, "", "--remove", "--force", "--topic", "Test-")
	if got := stored(t, s); !strings.Contains(got, "Test-:PREFIXED") {
		t.Fatalf("a literal --remove took the prefixed ACL:\n%s", got)
	}
	mustRun(t, s, "", "--remove", "--force", "--topic", "Test-1", "--resource-pattern-type", "match")
	if got := stored(t, s); got != "" {
		t.Fatalf("--remove MATCH left\n%s", got)
	}
}

// TestTokenAndUserResources: --delegation-token and --user-principal name
// resources of their own types, stored like any other (the AclAuthorizer
// keeps them too).
func TestTokenAndUserResources(t *testing.T) {
	s := embeddedACLs(t)
	mustRun(t, s, "", "--add", "--delegation-token", " tok1 ", "--allow-principal", "User:a", "--operation", "Describe")
	mustRun(t, s, "", "--add", "--user-principal", "User:u", "--allow-principal", "User:a", "--operation", "CreateTokens", "--operation", "describetokens")
	if got, want := stored(t, s), "DELEGATION_TOKEN:tok1:LITERAL User:a * DESCRIBE ALLOW\n"+
		"USER:User:u:LITERAL User:a * CREATE_TOKENS ALLOW\nUSER:User:u:LITERAL User:a * DESCRIBE_TOKENS ALLOW"; got != want {
		t.Fatalf("stored\n%s\nwant\n%s", got, want)
	}
	out := mustRun(t, s, "", "--list", "--user-principal", "User:u")
	if want := "Current ACLs for resource `ResourcePattern(resourceType=USER, name=User:u, patternType=LITERAL)`: \n" +
		" \t(principal=User:a, host=*, operation=CREATE_TOKENS, permissionType=ALLOW)\n" +
		"\t(principal=User:a, host=*, operation=DESCRIBE_TOKENS, permissionType=ALLOW) \n\n"; out != want {
		t.Fatalf("list printed\n%q\nwant\n%q", out, want)
	}
}

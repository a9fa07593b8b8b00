package configs

import (
	"strings"
	"testing"

	"gregor/replication/usercreds"
	"gregor/wire/security/sasl"
)

// TestZooKeeperUsers: --zookeeper users --alter writes Kafka's credential
// format (checked by logging in against it), --describe prints it as
// stored, --delete-config removes a mechanism and refuses an absent one.
func TestZooKeeperUsers(t *testing.T) {
	s := zkStore(t)
	out, err := runZk(t, s, Options{EntityType: Users, EntityName: "alice", Alter: true,
		AddConfig: "SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=p,w=x]"})
	if err != nil || out != "Completed updating config for entity: user-principal 'alice'.\n" {
		t.Fatalf("alter: %q %v", out, err)
	}
	cfg, _, err := usercreds.ReadConfig(s, "alice")
	if err != nil {
		t.Fatal(err)
	}
	creds, bad := usercreds.Credentials(cfg)
	if len(bad) != 0 || creds[sasl.ScramSHA256].Iterations != 8192 || creds[sasl.ScramSHA512].Iterations != 4096 {
		t.Fatalf("stored %v (bad %v)", cfg, bad)
	}
	// The stored credential verifies the password (SaltedPassword with the stored salt).
	m, _ := sasl.ScramByName(sasl.ScramSHA512)
	c := creds[sasl.ScramSHA512]
	salted, _ := m.SaltedPassword("p,w=x", c.Salt, c.Iterations) // the password keeps its comma and '='
	if got := m.CredentialFromSalted(salted, c.Salt, c.Iterations); got.String() != c.String() {
		t.Fatal("stored SCRAM-SHA-512 credential does not match its password")
	}
	out, err = runZk(t, s, Options{EntityType: Users, EntityName: "alice", Describe: true})
	if err != nil || !strings.HasPrefix(out, "Configs for user-principal 'alice' are SCRAM-SHA-256=salt=") ||
		!strings.Contains(out, ",iterations=8192,SCRAM-SHA-512=salt=") {
		t.Fatalf("describe: %q %v", out, err)
	}
	if _, err := runZk(t, s, Options{EntityType: Users, EntityName: "alice", Alter: true, AddConfig: "SCRAM-SHA-256=[iterations=100,password=x]"}); err == nil ||
		err.Error() != "Iterations 100 is less than the minimum 4096 required for SCRAM-SHA-256" {
		t.Fatalf("low iterations: %v", err)
	}
	if _, err := runZk(t, s, Options{EntityType: Users, EntityName: "alice", Alter: true, AddConfig: "SCRAM-SHA-256=[secret=x]"}); err == nil ||
		!strings.HasPrefix(err.Error(), "Invalid credential property SCRAM-SHA-256=") {
		t.Fatalf("bad credential: %v", err)
	}
	if _, err := runZk(t, s, Options{EntityType: Users, EntityName: "alice", Alter: true, DeleteConfig: "SCRAM-SHA-256"}); err != nil {
		t.Fatal(err)
	}
	if _, err := runZk(t, s, Options{EntityType: Users, EntityName: "alice", Alter: true, DeleteConfig: "SCRAM-SHA-256"}); err == nil ||
		err.Error() != "Invalid config(s): SCRAM-SHA-256" {
		t.Fatalf("second delete: %v", err)
	}
	out, err = runZk(t, s, Options{EntityType: Users, Describe: true})
	if err != nil || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "Configs for user-principal 'alice' are SCRAM-SHA-512=") {
		t.Fatalf("describe all: %q %v", out, err)
	}
	// A user name with characters Kafka's Sanitizer encodes.
	if _, err := runZk(t, s, Options{EntityType: Users, EntityName: "CN=a b,O=x", Alter: true, AddConfig: "SCRAM-SHA-256=[password=x]"}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Exists("/config/users/CN%3Da%20b%2CO%3Dx"); !ok {
		t.Fatal("user znode not sanitized as Kafka does")
	}
	if users, _ := usercreds.ListUsers(s); strings.Join(users, "|") != "CN=a b,O=x|alice" {
		t.Fatalf("users %q", users)
	}
}

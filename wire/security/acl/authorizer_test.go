package acl

import (
	"testing"
	"time"

	"gregor/replication/metastore"
	"gregor/wire/security"
)

func TestDecide(t *testing.T) {
	alice, bob, anon := security.User("alice"), security.User("bob"), security.Anonymous
	lit := func(t ResourceType, n string) ResourcePattern { return ResourcePattern{t, n, PatternLiteral} }
	pre := func(t ResourceType, n string) ResourcePattern { return ResourcePattern{t, n, PatternPrefixed} }
	e := func(p string, host string, op Operation, perm PermissionType) Entry { return Entry{p, host, op, perm} }
	snap := NewSnapshot(map[ResourcePattern][]Entry{
		lit(ResourceTopic, "orders"): {
			e("User:alice", "*", OpRead, Allow),
			e("User:alice", "10.0.0.9", OpRead, Deny), // deny beats allow, from that host only
			e("User:bob", "127.0.0.1", OpWrite, Allow),
		},
		lit(ResourceTopic, "*"):           {e("User:*", "*", OpDescribeConfigs, Allow)},
		pre(ResourceTopic, "logs-"):       {e("User:alice", "*", OpAll, Allow)},
		pre(ResourceTopic, "logs-priv"):   {e("User:*", "*", OpAll, Deny)},
		lit(ResourceGroup, "g"):           {e("User:alice", "*", OpAlterConfigs, Allow), e("User:bob", "*", OpRead, Allow)},
		lit(ResourceCluster, ClusterName): {e("User:bob", "*", OpAlterConfigs, Allow)},
	})
	deny := &Config{}
	allowNone := &Config{AllowEveryoneIfNoACLFound: true}
	super := &Config{SuperUsers: []security.Principal{anon}}
	for _, c := range []struct {
		name string
		cfg  *Config
		who  security.Principal
		host string
		op   Operation
		rt   ResourceType
		res  string
		want bool
	}{
		{"literal allow", deny, alice, "127.0.0.1", OpRead, ResourceTopic, "orders", true},
		{"deny beats allow on its host", deny, alice, "10.0.0.9", OpRead, ResourceTopic, "orders", false},
		{"allow is per operation", deny, alice, "127.0.0.1", OpWrite, ResourceTopic, "orders", false},
		{"host matches", deny, bob, "127.0.0.1", OpWrite, ResourceTopic, "orders", true},
		{"other host does not", deny, bob, "127.0.0.2", OpWrite, ResourceTopic, "orders", false},
		{"write implies describe", deny, bob, "127.0.0.1", OpDescribe, ResourceTopic, "orders", true},
		{"read implies describe", deny, alice, "127.0.0.1", OpDescribe, ResourceTopic, "orders", true},
		{"deny read does not block describe", deny, alice, "10.0.0.9", OpDescribe, ResourceTopic, "orders", true},
		{"wildcard resource, wildcard principal", deny, anon, "1.2.3.4", OpDescribeConfigs, ResourceTopic, "anything", true},
		{"wildcard resource only that op", deny, anon, "1.2.3.4", OpRead, ResourceTopic, "anything", false},
		{"prefixed All", deny, alice, "1.1.1.1", OpDelete, ResourceTopic, "logs-app", true},
		{"prefix must match", deny, alice, "1.1.1.1", OpDelete, ResourceTopic, "log", false},
		{"longer prefixed deny wins", deny, alice, "1.1.1.1", OpRead, ResourceTopic, "logs-private", false},
		{"alter configs implies describe configs", deny, alice, "1.1.1.1", OpDescribeConfigs, ResourceGroup, "g", true},
		{"read does not imply write", deny, bob, "1.1.1.1", OpDelete, ResourceGroup, "g", false},
		{"cluster", deny, bob, "1.1.1.1", OpDescribeConfigs, ResourceCluster, ClusterName, true},
		{"no acl: deny by default", deny, alice, "1.1.1.1", OpRead, ResourceGroup, "none", false},
		{"no acl: allow.everyone.if.no.acl.found", allowNone, alice, "1.1.1.1", OpRead, ResourceGroup, "none", true},
		{"acls exist: allow.everyone does not apply", allowNone, anon, "1.1.1.1", OpRead, ResourceGroup, "g", false},
		{"super user", super, anon, "9.9.9.9", OpRead, ResourceTopic, "logs-private", true},
		{"super user is exact", super, alice, "9.9.9.9", OpRead, ResourceGroup, "none", false},
	} {
		if got := Decide(snap, c.cfg, c.who, c.host, c.op, c.rt, c.res); got != c.want {
			t.Errorf("%s: Decide(%s@%s %s %s:%s) = %v, want %v", c.name, c.who, c.host, c.op, c.rt, c.res, got, c.want)
		}
	}

	// By resource type (InitProducerId's Write on any topic).
	for _, c := range []struct {
		name string
		snap map[ResourcePattern][]Entry
		cfg  *Config
		want bool
	}{
		{"an allowed literal", map[ResourcePattern][]Entry{lit(ResourceTopic, "t"): {e("User:alice", "*", OpWrite, Allow)}}, deny, true},
		{"denied on that literal", map[ResourcePattern][]Entry{lit(ResourceTopic, "t"): {e("User:alice", "*", OpWrite, Allow), e("User:*", "*", OpWrite, Deny)}}, deny, false},
		{"dominated by a prefixed deny", map[ResourcePattern][]Entry{
			pre(ResourceTopic, "ab"): {e("User:alice", "*", OpWrite, Allow)},
			pre(ResourceTopic, "a"):  {e("User:alice", "*", OpAll, Deny)}}, deny, false},
		{"wildcard deny", map[ResourcePattern][]Entry{lit(ResourceTopic, "*"): {e("User:alice", "*", OpWrite, Deny)}}, allowNone, false},
		{"nothing", map[ResourcePattern][]Entry{}, deny, false},
		{"nothing, allow.everyone", map[ResourcePattern][]Entry{}, allowNone, true},
	} {
		if got := DecideByResourceType(NewSnapshot(c.snap), c.cfg, alice, "1.1.1.1", OpWrite, ResourceTopic); got != c.want {
			t.Errorf("by type, %s: %v, want %v", c.name, got, c.want)
		}
	}

	a := NewAuthorizer(Config{}, nil)
	a.SetSnapshot(snap)
	req := Request{Principal: bob, Host: "127.0.0.1", API: "METADATA"}
	if got, want := a.AuthorizedOperations(req, ResourceTopic, "orders"), int32(1<<OpWrite|1<<OpDescribe|1<<OpDescribeConfigs); got != want {
		t.Errorf("AuthorizedOperations = %b, want %b", got, want)
	}
}

func TestParseSuperUsers(t *testing.T) {
	got, err := ParseSuperUsers(" User:admin ;User:CN=broker,O=x;; ")
	if err != nil || len(got) != 2 || got[0] != security.User("admin") || got[1] != security.User("CN=broker,O=x") {
		t.Errorf("ParseSuperUsers = %v, %v", got, err)
	}
	if _, err := ParseSuperUsers("admin"); err == nil {
		t.Error("principal without type accepted")
	}
}

// Two brokers' authorizers over one store: an ACL added through one is
// enforced by the other once its watcher sees the notification; ACLs
// written directly in Kafka's layout are read at start.
func TestWatcherFollowsNotifications(t *testing.T) {
	m := metastore.NewMemory()
	s1, s2 := m.Open(), m.Open()
	defer s1.Close()
	defer s2.Close()
	// Written as Kafka's kafka-acls.sh --authorizer-properties would, before any broker starts.
	if err := metastore.CreateAll(s1, "/kafka-acl/Group/g1", []byte(`{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}`), false); err != nil {
		t.Fatal(err)
	}
	a1, a2 := NewAuthorizer(Config{}, nil), NewAuthorizer(Config{}, nil)
	w1, err := StartWatcher(s1, a1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Stop()
	w2, err := StartWatcher(s2, a2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	alice := Request{Principal: security.User("alice"), Host: "127.0.0.1"}
	readG1 := Action{Op: OpRead, Type: ResourceGroup, Name: "g1"}
	if !a2.Authorize(alice, readG1) {
		t.Fatal("ACL written in Kafka's layout before start not loaded")
	}
	writeT := Action{Op: OpWrite, Type: ResourceTopic, Name: "t-1"}
	if a2.Authorize(alice, writeT) {
		t.Fatal("allowed before any ACL")
	}
	admin := Admin{Store: s1, Auth: a1}
	errs := admin.Create([]Binding{{ResourcePattern{ResourceTopic, "t-", PatternPrefixed}, Entry{"User:alice", "*", OpWrite, Allow}}})
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	if !a1.Authorize(alice, writeT) {
		t.Fatal("the writing broker's cache did not follow its own write")
	}
	waitFor(t, func() bool { return a2.Authorize(alice, writeT) }, "the other broker to apply the extended notification")
	// A literal change through the other broker, and a delete.
	if errs := (Admin{Store: s2, Auth: a2}).Create([]Binding{{ResourcePattern{ResourceTopic, "t-1", PatternLiteral}, Entry{"User:alice", "*", OpWrite, Deny}}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	waitFor(t, func() bool { return !a1.Authorize(alice, writeT) }, "broker 1 to apply the literal deny")
	if _, err := admin.Delete([]BindingFilter{AnyFilter}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return a2.Snapshot().Len() == 0 }, "broker 2 to see every ACL deleted")
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

package acl

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"gregor/replication/metastore"
)

func str(s string) *string { return &s }

func memStore(t *testing.T) metastore.Store {
	t.Helper()
	s := metastore.NewMemory().Open()
	t.Cleanup(func() { s.Close() })
	return s
}

// Kafka's exact forms: paths, resource JSON, change notifications.
func TestCodecKafkaForms(t *testing.T) {
	for _, c := range []struct {
		r    ResourcePattern
		path string
		chg  string
	}{
		{ResourcePattern{ResourceTopic, "orders", PatternLiteral}, "/kafka-acl/Topic/orders", "TOPIC:orders"},
		{ResourcePattern{ResourceCluster, ClusterName, PatternLiteral}, "/kafka-acl/Cluster/kafka-cluster", "CLUSTER:kafka-cluster"},
		{ResourcePattern{ResourceTransactionalID, "tx", PatternLiteral}, "/kafka-acl/TransactionalId/tx", "TRANSACTIONAL_ID:tx"},
		{ResourcePattern{ResourceGroup, "app-", PatternPrefixed}, "/kafka-acl-extended/prefixed/Group/app-",
			`{"version":1,"resourceType":"GROUP","name":"app-","patternType":"PREFIXED"}`},
	} {
		if got := ResourcePath(c.r); got != c.path {
			t.Errorf("ResourcePath(%v) = %q, want %q", c.r, got, c.path)
		}
		if got := string(EncodeChange(c.r)); got != c.chg {
			t.Errorf("EncodeChange(%v) = %q, want %q", c.r, got, c.chg)
		}
		back, err := DecodeChange(ChangesPath(c.r.Pattern), []byte(c.chg))
		if err != nil || back != c.r {
			t.Errorf("DecodeChange(%q) = %v, %v; want %v", c.chg, back, err, c.r)
		}
	}
	want := `{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"},` +
		`{"principal":"User:bob","permissionType":"Deny","operation":"IdempotentWrite","host":"10.0.0.1"}]}`
	es := []Entry{{"User:alice", "*", OpRead, Allow}, {"User:bob", "10.0.0.1", OpIdempotentWrite, Deny}}
	if got := string(EncodeEntries(es)); got != want {
		t.Errorf("EncodeEntries = %s\nwant %s", got, want)
	}
	// Kafka's javadoc example, keys in another order and spaced, and upper-case names.
	kafka := `{"version": 1, "acls": [ { "host":"host1", "permissionType": "Allow","operation": "Read","principal": "User:alice"},
	  {"host":"*","permissionType":"DENY","operation":"DESCRIBE_CONFIGS","principal":"User:*"}]}`
	got, err := DecodeEntries([]byte(kafka))
	wantEs := []Entry{{"User:alice", "host1", OpRead, Allow}, {"User:*", "*", OpDescribeConfigs, Deny}}
	if err != nil || !reflect.DeepEqual(got, wantEs) {
		t.Errorf("DecodeEntries = %v, %v; want %v", got, err, wantEs)
	}
	for _, bad := range []string{`{"version":2,"acls":[]}`, `{"acls":[]}`, `{`, `{"version":1,"acls":[{"principal":"alice"}]}`} {
		if _, err := DecodeEntries([]byte(bad)); err == nil {
			t.Errorf("DecodeEntries(%s) accepted", bad)
		}
	}
	for _, bad := range []string{"nocolon", "BOGUS:x"} {
		if _, err := DecodeChange(LiteralChangesPath, []byte(bad)); err == nil {
			t.Errorf("DecodeChange(literal %q) accepted", bad)
		}
	}
	if _, err := DecodeChange(ExtendedChangesPath, []byte(`{"version":2,"resourceType":"TOPIC","name":"x","patternType":"PREFIXED"}`)); err == nil {
		t.Error("extended change version 2 accepted")
	}
	if ParseResourceType("transactionalid") != ResourceTransactionalID || ParseOperation("CLUSTER_ACTION") != OpClusterAction ||
		ParseOperation("describeConfigs") != OpDescribeConfigs || ParsePatternType("prefixed") != PatternPrefixed {
		t.Error("name parsing does not accept Kafka's forms")
	}
}

func TestStoreAddListRemove(t *testing.T) {
	s := memStore(t)
	if err := EnsurePaths(s); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/kafka-acl/Topic", "/kafka-acl/DelegationToken", "/kafka-acl-extended/prefixed/User", LiteralChangesPath, ExtendedChangesPath} {
		if ok, _ := s.Exists(p); !ok {
			t.Errorf("EnsurePaths did not create %s", p)
		}
	}
	topic := ResourcePattern{ResourceTopic, "orders", PatternLiteral}
	pre := ResourcePattern{ResourceTopic, "ord", PatternPrefixed}
	alice := Entry{"User:alice", "*", OpRead, Allow}
	bob := Entry{"User:bob", "*", OpWrite, Deny}
	errs := Add(s, []Binding{
		{topic, alice}, {topic, bob}, {pre, alice},
		{ResourcePattern{ResourceCluster, "other", PatternLiteral}, alice},
		{ResourcePattern{ResourceTopic, "", PatternLiteral}, alice},
		{ResourcePattern{ResourceTopic, "a/b", PatternLiteral}, alice},
		{ResourcePattern{ResourceTopic, "x", PatternMatch}, alice},
		{topic, Entry{"alice", "*", OpRead, Allow}},
	})
	for i, e := range errs {
		var inv *InvalidError
		if (i < 3) != (e == nil) || (i >= 3 && !errors.As(e, &inv)) {
			t.Errorf("Add[%d] = %v", i, e)
		}
	}
	data, v, err := s.Get("/kafka-acl/Topic/orders")
	if err != nil || v != 0 || string(data) != string(EncodeEntries([]Entry{alice, bob})) {
		t.Fatalf("topic node = %s v%d %v", data, v, err)
	}
	// Adding again changes nothing and writes no notification.
	before, _ := s.Children(LiteralChangesPath)
	if errs := Add(s, []Binding{{topic, alice}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	after, _ := s.Children(LiteralChangesPath)
	if len(before) != 1 || len(after) != 1 || !strings.HasPrefix(after[0], ChangePrefix) {
		t.Errorf("literal notifications %v then %v, want one acl_changes_ node", before, after)
	}
	if kids, _ := s.Children(ExtendedChangesPath); len(kids) != 1 {
		t.Errorf("extended notifications %v", kids)
	} else if d, _, _ := s.Get(ExtendedChangesPath + "/" + kids[0]); string(d) != string(EncodeChange(pre)) {
		t.Errorf("extended notification data %s", d)
	}

	all, err := List(s, AnyFilter)
	if err != nil || len(all) != 3 {
		t.Fatalf("List(any) = %v, %v", all, err)
	}
	match := AnyFilter
	match.Pattern = PatternFilter{ResourceTopic, str("orders-eu"), PatternMatch}
	got, _ := List(s, match)
	if len(got) != 1 || got[0].Pattern != pre {
		t.Errorf("List(MATCH orders-eu) = %v, want the prefixed ord binding", got)
	}
	match.Pattern.Name = str("orders")
	if got, _ := List(s, match); len(got) != 3 {
		t.Errorf("List(MATCH orders) = %v, want literal and prefixed", got)
	}

	del := AnyFilter
	del.Pattern = PatternFilter{ResourceTopic, str("orders"), PatternLiteral}
	del.Entry.Principal = str("User:bob")
	res, err := Remove(s, []BindingFilter{del, AnyFilter})
	if err != nil {
		t.Fatal(err)
	}
	if len(res[0]) != 1 || res[0][0].Binding != (Binding{topic, bob}) || res[0][0].Err != nil {
		t.Errorf("Remove filter 0 = %v", res[0])
	}
	if len(res[1]) != 2 {
		t.Errorf("Remove filter 1 = %v, want the two alice bindings", res[1])
	}
	if ok, _ := s.Exists("/kafka-acl/Topic/orders"); ok {
		t.Error("emptied resource node not deleted")
	}
	if all, _ := List(s, AnyFilter); len(all) != 0 {
		t.Errorf("left %v", all)
	}
}

// A concurrent writer's change between read and write is retried, not lost.
func TestUpdateRetriesOnConflict(t *testing.T) {
	s := memStore(t)
	r := ResourcePattern{ResourceGroup, "g", PatternLiteral}
	a, b := Entry{"User:a", "*", OpRead, Allow}, Entry{"User:b", "*", OpRead, Allow}
	calls := 0
	err := Update(s, r, func(cur []Entry) []Entry {
		calls++
		if calls == 1 { // someone else creates the node first
			if err := metastore.CreateAll(s, ResourcePath(r), EncodeEntries([]Entry{b}), false); err != nil {
				t.Fatal(err)
			}
		}
		return append(append([]Entry{}, cur...), a)
	})
	if err != nil || calls != 2 {
		t.Fatalf("Update = %v after %d calls", err, calls)
	}
	v, _ := Get(s, r)
	if !reflect.DeepEqual(v.Entries, []Entry{b, a}) || v.Version != 1 {
		t.Errorf("stored %v v%d", v.Entries, v.Version)
	}
}

package handlers

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/quota/clientquota"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

func quotaBroker(t *testing.T) (*Broker, metastore.Store) {
	t.Helper()
	s, err := metastore.OpenEmbeddedDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := &Broker{Log: zap.NewNop(), Users: s, QuotaStore: s}
	t.Cleanup(func() { b.Close(); s.Close() })
	return b, s
}

func strp(s string) *string { return &s }

// qent builds an entity: pairs of type and name, "<nil>" for a null name.
func qent(pairs ...string) []kmsg.AlterClientQuotasRequestEntryEntity {
	var out []kmsg.AlterClientQuotasRequestEntryEntity
	for i := 0; i+1 < len(pairs); i += 2 {
		e := kmsg.NewAlterClientQuotasRequestEntryEntity()
		e.Type = pairs[i]
		if pairs[i+1] != "<nil>" {
			e.Name = strp(pairs[i+1])
		}
		out = append(out, e)
	}
	return out
}

func qset(k string, v float64) kmsg.AlterClientQuotasRequestEntryOp {
	op := kmsg.NewAlterClientQuotasRequestEntryOp()
	op.Key, op.Value = k, v
	return op
}

func qremove(k string) kmsg.AlterClientQuotasRequestEntryOp {
	op := kmsg.NewAlterClientQuotasRequestEntryOp()
	op.Key, op.Remove = k, true
	return op
}

type quotaEntry struct {
	ent []kmsg.AlterClientQuotasRequestEntryEntity
	ops []kmsg.AlterClientQuotasRequestEntryOp
}

func alterQuotas(t *testing.T, b *Broker, validateOnly bool, entries ...quotaEntry) []result {
	t.Helper()
	req := kmsg.NewPtrAlterClientQuotasRequest()
	req.ValidateOnly = validateOnly
	for _, e := range entries {
		en := kmsg.NewAlterClientQuotasRequestEntry()
		en.Entity, en.Ops = e.ent, e.ops
		req.Entries = append(req.Entries, en)
	}
	resp := handleNow[*kmsg.AlterClientQuotasResponse](t, b, 49, req)
	if len(resp.Entries) != len(entries) {
		t.Fatalf("%d results for %d entries", len(resp.Entries), len(entries))
	}
	var out []result
	for i, r := range resp.Entries {
		if len(r.Entity) != len(entries[i].ent) {
			t.Fatalf("entry %d: entity %+v not echoed", i, r.Entity)
		}
		m := ""
		if r.ErrorMessage != nil {
			m = *r.ErrorMessage
		}
		out = append(out, result{r.ErrorCode, m})
	}
	return out
}

// storedQuotas reads every entity's znode config (path → key=value
// list); the parents a nested znode's creation leaves empty are skipped.
func storedQuotas(t *testing.T, s metastore.Store) map[string]string {
	t.Helper()
	ents, err := clientquota.List(s)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		cfg, _, err := clientquota.Read(s, e)
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg) == 0 {
			continue
		}
		var kv []string
		for k, v := range cfg {
			kv = append(kv, k+"="+v)
		}
		sort.Strings(kv)
		out[e.Path()] = strings.Join(kv, ",")
	}
	return out
}

// TestAlterClientQuotasValidation: every malformed entry answers
// INVALID_REQUEST with Kafka's message and writes nothing of itself, a
// valid entry next to it is applied, and validate_only writes nothing.
func TestAlterClientQuotasValidation(t *testing.T) {
	b, s := quotaBroker(t)
	inv := kerr.InvalidRequest.Code
	cases := []struct {
		e    quotaEntry
		want result
	}{
		{quotaEntry{nil, []kmsg.AlterClientQuotasRequestEntryOp{qset("producer_byte_rate", 1)}}, result{inv, "Invalid empty client quota entity"}},
		{quotaEntry{qent("user", "a", "user", "b"), []kmsg.AlterClientQuotasRequestEntryOp{qset("producer_byte_rate", 1)}}, result{inv, "Invalid client quota entity, duplicate entity entry user"}},
		{quotaEntry{qent("group", "g"), []kmsg.AlterClientQuotasRequestEntryOp{qset("producer_byte_rate", 1)}}, result{inv, "Unhandled client quota entity type: group"}},
		{quotaEntry{qent("user", ""), []kmsg.AlterClientQuotasRequestEntryOp{qset("producer_byte_rate", 1)}}, result{inv, "Empty user not supported"}},
		{quotaEntry{qent("ip", "1.2.3.4", "user", "a"), []kmsg.AlterClientQuotasRequestEntryOp{qset("connection_creation_rate", 1)}}, result{inv, "Invalid quota entity combination, IP entity should not be used with user/client ID entity."}},
		{quotaEntry{qent("ip", "1.2.3.4"), []kmsg.AlterClientQuotasRequestEntryOp{qset("connection_creation_rate", 1)}}, result{inv, errIPQuotas.Error()}},
		// A good op next to a bad one: the entry is refused whole.
		{quotaEntry{qent("client-id", "half"), []kmsg.AlterClientQuotasRequestEntryOp{qset("producer_byte_rate", 1000), qset("bogus", 1)}}, result{inv, "Invalid configuration key bogus"}},
		{quotaEntry{qent("client-id", "dup"), []kmsg.AlterClientQuotasRequestEntryOp{qset("producer_byte_rate", 1000), qremove("producer_byte_rate")}}, result{inv, "Duplicate quota key producer_byte_rate not updating quota for this entity"}},
		{quotaEntry{qent("client-id", "rm"), []kmsg.AlterClientQuotasRequestEntryOp{qremove("bogus")}}, result{inv, "Invalid configuration key bogus"}},
		{quotaEntry{qent("client-id", "neg"), []kmsg.AlterClientQuotasRequestEntryOp{qset("consumer_byte_rate", -1)}}, result{inv, "Quota consumer_byte_rate must be greater than 0"}},
		{quotaEntry{qent("client-id", "zero"), []kmsg.AlterClientQuotasRequestEntryOp{qset("request_percentage", 0)}}, result{inv, "Quota request_percentage must be greater than 0"}},
		{quotaEntry{qent("client-id", "nan"), []kmsg.AlterClientQuotasRequestEntryOp{qset("controller_mutation_rate", math.NaN())}}, result{inv, "Quota controller_mutation_rate must be greater than 0"}},
		{quotaEntry{qent("client-id", "inf"), []kmsg.AlterClientQuotasRequestEntryOp{qset("request_percentage", math.Inf(1))}}, result{inv, "Quota request_percentage must be a finite number"}},
		{quotaEntry{qent("client-id", "frac"), []kmsg.AlterClientQuotasRequestEntryOp{qset("producer_byte_rate", 1.5)}}, result{inv, "Configuration producer_byte_rate must be a LONG value"}},
		{quotaEntry{qent("user", "alice", "client-id", "<nil>"), []kmsg.AlterClientQuotasRequestEntryOp{qset("producer_byte_rate", 1048576), qset("request_percentage", 12.5)}}, result{}},
	}
	var entries []quotaEntry
	for _, c := range cases {
		entries = append(entries, c.e)
	}
	// validate_only: the same answers, nothing written.
	for _, vo := range []bool{true, false} {
		got := alterQuotas(t, b, vo, entries...)
		for i, c := range cases {
			if got[i] != c.want {
				t.Errorf("validate_only=%v entry %d: %+v, want %+v", vo, i, got[i], c.want)
			}
		}
		stored := storedQuotas(t, s)
		if vo && len(stored) != 0 {
			t.Fatalf("validate_only wrote %v", stored)
		}
		if !vo && (len(stored) != 1 || stored["users/alice/clients/<default>"] != "producer_byte_rate=1048576,request_percentage=12.5") {
			t.Fatalf("stored %v, want only users/alice/clients/<default>", stored)
		}
	}
}

// TestAlterClientQuotasKeepsCredentials: a user's quota shares the znode
// with its SCRAM credentials, which setting and removing quotas keep;
// removing an absent key is a no-op; each change is announced in
// /config/changes with the entity path.
func TestAlterClientQuotasKeepsCredentials(t *testing.T) {
	b, s := quotaBroker(t)
	carol := clientquota.Entity{User: "carol"}
	if err := clientquota.Update(s, carol, func(cfg map[string]string) error { cfg["SCRAM-SHA-256"] = "salt=x,iterations=4096"; return nil }); err != nil {
		t.Fatal(err)
	}
	before := changes(t, s)
	for _, ops := range [][]kmsg.AlterClientQuotasRequestEntryOp{
		{qset("consumer_byte_rate", 5000)},
		{qremove("consumer_byte_rate"), qremove("producer_byte_rate")},
	} {
		if got := alterQuotas(t, b, false, quotaEntry{qent("user", "carol"), ops}); got[0] != (result{}) {
			t.Fatalf("%+v", got[0])
		}
		if st := storedQuotas(t, s)["users/carol"]; !strings.Contains(st, "SCRAM-SHA-256=salt=x,iterations=4096") {
			t.Fatalf("credentials lost: %q", st)
		}
	}
	if st := storedQuotas(t, s)["users/carol"]; strings.Contains(st, "byte_rate") {
		t.Fatalf("quota left: %q", st)
	}
	after := changes(t, s)
	if len(after) != len(before)+2 {
		t.Fatalf("%d change notifications, want %d", len(after), len(before)+2)
	}
	data, _, err := s.Get(zkmeta.ConfigChangesPath + "/" + after[len(after)-1])
	if err != nil || !strings.Contains(string(data), `"users/carol"`) {
		t.Fatalf("last notification %s %v", data, err)
	}
	// Described: only quota keys, and a user with only credentials is not listed.
	if d := describeQuotas(t, b, false); len(d.Entries) != 0 {
		t.Fatalf("a credentials-only user is listed: %+v", d.Entries)
	}
}

func changes(t *testing.T, s metastore.Store) []string {
	t.Helper()
	kids, err := s.Children(zkmeta.ConfigChangesPath)
	if err != nil && err != metastore.ErrNoNode {
		t.Fatal(err)
	}
	sort.Strings(kids)
	return kids
}

type qcomp struct {
	typ   string
	match int8
	name  *string
}

func describeQuotas(t *testing.T, b *Broker, strict bool, comps ...qcomp) *kmsg.DescribeClientQuotasResponse {
	t.Helper()
	req := kmsg.NewPtrDescribeClientQuotasRequest()
	req.Strict = strict
	for _, c := range comps {
		rc := kmsg.NewDescribeClientQuotasRequestComponent()
		rc.EntityType, rc.MatchType, rc.Match = c.typ, kmsg.QuotasMatchType(c.match), c.name
		req.Components = append(req.Components, rc)
	}
	return handleNow[*kmsg.DescribeClientQuotasResponse](t, b, 48, req)
}

// described renders the entries as "user=alice,client-id=<default>" lists.
func described(r *kmsg.DescribeClientQuotasResponse) []string {
	var out []string
	for _, e := range r.Entries {
		var parts []string
		for _, p := range e.Entity {
			n := "<default>"
			if p.Name != nil {
				n = *p.Name
			}
			parts = append(parts, p.Type+"="+n)
		}
		out = append(out, strings.Join(parts, ","))
	}
	sort.Strings(out)
	return out
}

// TestDescribeClientQuotasMatrix: exact, default and any matches, strict
// and not, over users, clients and pairs (names with characters that
// need sanitizing), and the filter errors with Kafka's codes.
func TestDescribeClientQuotasMatrix(t *testing.T) {
	b, _ := quotaBroker(t)
	set := func(pairs ...string) quotaEntry {
		return quotaEntry{qent(pairs...), []kmsg.AlterClientQuotasRequestEntryOp{qset("request_percentage", 50)}}
	}
	got := alterQuotas(t, b, false,
		set("user", "alice"), set("user", "alice", "client-id", "app/1"), set("user", "<nil>"),
		set("user", "<nil>", "client-id", "<nil>"), set("client-id", "app/1"), set("client-id", "<nil>"))
	for i, r := range got {
		if r != (result{}) {
			t.Fatalf("setup entry %d: %+v", i, r)
		}
	}
	exact := func(typ, n string) qcomp { return qcomp{typ, 0, strp(n)} }
	def := func(typ string) qcomp { return qcomp{typ, 1, nil} }
	anyOf := func(typ string) qcomp { return qcomp{typ, 2, nil} }
	for _, c := range []struct {
		strict bool
		comps  []qcomp
		want   string
	}{
		{false, nil, "client-id=<default> client-id=app/1 user=<default> user=<default>,client-id=<default> user=alice user=alice,client-id=app/1"},
		{true, nil, ""},
		{false, []qcomp{exact("user", "alice")}, "user=alice user=alice,client-id=app/1"},
		{true, []qcomp{exact("user", "alice")}, "user=alice"},
		{false, []qcomp{def("user")}, "user=<default> user=<default>,client-id=<default>"},
		{true, []qcomp{def("user"), def("client-id")}, "user=<default>,client-id=<default>"},
		{true, []qcomp{anyOf("client-id")}, "client-id=<default> client-id=app/1"},
		{false, []qcomp{anyOf("user"), exact("client-id", "app/1")}, "user=alice,client-id=app/1"},
		{false, []qcomp{exact("client-id", "app/1")}, "client-id=app/1 user=alice,client-id=app/1"},
		{false, []qcomp{exact("user", "nobody")}, ""},
		{false, []qcomp{{"ip", 2, nil}}, ""},
	} {
		r := describeQuotas(t, b, c.strict, c.comps...)
		if r.ErrorCode != 0 {
			t.Fatalf("strict=%v %+v: error %d", c.strict, c.comps, r.ErrorCode)
		}
		if g := strings.Join(described(r), " "); g != c.want {
			t.Errorf("strict=%v %+v:\n got %q\nwant %q", c.strict, c.comps, g, c.want)
		}
	}
	r := describeQuotas(t, b, false, exact("user", "alice"))
	if len(r.Entries) == 0 || len(r.Entries[0].Values) != 1 || r.Entries[0].Values[0].Key != "request_percentage" || r.Entries[0].Values[0].Value != 50 {
		t.Fatalf("values %+v", r.Entries)
	}
	for _, c := range []struct {
		comps []qcomp
		code  int16
		msg   string
	}{
		{[]qcomp{def("user"), exact("user", "a")}, kerr.InvalidRequest.Code, "Duplicate user filter component entity type"},
		{[]qcomp{def("client-id"), def("client-id")}, kerr.InvalidRequest.Code, "Duplicate client filter component entity type"},
		{[]qcomp{{"ip", 2, nil}, {"ip", 1, nil}}, kerr.InvalidRequest.Code, "Duplicate ip filter component entity type"},
		{[]qcomp{{"", 2, nil}}, kerr.InvalidRequest.Code, "Unexpected empty filter component entity type"},
		{[]qcomp{{"group", 2, nil}}, kerr.UnsupportedVersion.Code, "Custom entity type 'group' not supported"},
		{[]qcomp{{"user", 0, nil}}, kerr.InvalidRequest.Code, "Exact match of a filter component needs an entity name"},
		{[]qcomp{{"user", 7, nil}}, kerr.InvalidRequest.Code, "Unexpected match type: 7"},
		{[]qcomp{{"ip", 2, nil}, def("user")}, kerr.InvalidRequest.Code, "Invalid entity filter component combination, IP filter component should not be used with user or clientId filter component."},
	} {
		r := describeQuotas(t, b, false, c.comps...)
		if r.ErrorCode != c.code || r.ErrorMessage == nil || *r.ErrorMessage != c.msg || len(r.Entries) != 0 {
			t.Errorf("%+v: %d %v %d entries, want %d %q", c.comps, r.ErrorCode, r.ErrorMessage, len(r.Entries), c.code, c.msg)
		}
	}
}

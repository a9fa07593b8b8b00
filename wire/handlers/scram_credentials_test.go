package handlers

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/replication/metastore"
	"gregor/replication/usercreds"
	"gregor/wire"
	"gregor/wire/security/sasl"
)

func scramBroker(t *testing.T) *Broker {
	t.Helper()
	s, err := metastore.OpenEmbeddedDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := &Broker{Log: zap.NewNop(), Users: s}
	t.Cleanup(func() { b.Close(); s.Close() })
	return b
}

func handleNow[R kmsg.Response](t *testing.T, b *Broker, key int16, req kmsg.Request) R {
	t.Helper()
	resp, ok := b.Handle(&wire.RequestContext{Key: key}, req).Resolve(t.Context())
	if !ok {
		t.Fatal("no response")
	}
	return resp.Msg.(R)
}

func upsertion(user string, mech int8, iterations int32, password string) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
	u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	u.Name, u.Mechanism, u.Iterations = user, mech, iterations
	u.Salt = []byte("salt-of-" + user)
	if m, ok := sasl.ScramByType(mech); ok && iterations >= 1 {
		u.SaltedPassword, _ = m.SaltedPassword(password, u.Salt, int(iterations))
	}
	return u
}

func deletion(user string, mech int8) kmsg.AlterUserSCRAMCredentialsRequestDeletion {
	d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	d.Name, d.Mechanism = user, mech
	return d
}

type result struct {
	code int16
	msg  string
}

func alterResults(t *testing.T, b *Broker, ups []kmsg.AlterUserSCRAMCredentialsRequestUpsertion, dels []kmsg.AlterUserSCRAMCredentialsRequestDeletion) map[string]result {
	t.Helper()
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	req.Upsertions, req.Deletions = ups, dels
	resp := handleNow[*kmsg.AlterUserSCRAMCredentialsResponse](t, b, 51, req)
	out := map[string]result{}
	for _, r := range resp.Results {
		if _, dup := out[r.User]; dup {
			t.Fatalf("user %q answered twice", r.User)
		}
		m := ""
		if r.ErrorMessage != nil {
			m = *r.ErrorMessage
		}
		out[r.User] = result{r.ErrorCode, m}
	}
	return out
}

func TestAlterUserScramCredentials(t *testing.T) {
	b := scramBroker(t)
	got := alterResults(t, b, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{
		upsertion("alice", 1, 8192, "pw"),
		upsertion("bob", 2, 4096, "pw"),
		upsertion("", 1, 4096, "pw"),
		upsertion("carl", 7, 4096, "pw"),
		upsertion("dora", 1, 100, "pw"),
		upsertion("erin", 2, 20000, "pw"),
		upsertion("fred", 1, 4096, "pw"),
		upsertion("fred", 1, 4096, "pw2"),
	}, []kmsg.AlterUserSCRAMCredentialsRequestDeletion{deletion("gina", 1)})
	want := map[string]result{
		"alice": {0, ""},
		"bob":   {0, ""},
		"":      {kerr.UnacceptableCredential.Code, "Username must not be empty"},
		"carl":  {kerr.UnsupportedSaslMechanism.Code, "Unknown SCRAM mechanism"},
		"dora":  {kerr.UnacceptableCredential.Code, "Too few iterations"},
		"erin":  {kerr.UnacceptableCredential.Code, "Too many iterations"},
		"fred":  {kerr.DuplicateResource.Code, "A user credential cannot be altered twice in the same request"},
		"gina":  {kerr.ResourceNotFound.Code, "Attempt to delete a user credential that does not exist"},
	}
	if len(got) != len(want) {
		t.Fatalf("results %v", got)
	}
	for u, w := range want {
		if got[u] != w {
			t.Errorf("%q: %+v, want %+v", u, got[u], w)
		}
	}
	// The stored credential is the one SCRAM logins check.
	cfg, _, _ := usercreds.ReadConfig(b.Users, "alice")
	m, _ := sasl.ScramByName(sasl.ScramSHA256)
	salted, _ := m.SaltedPassword("pw", []byte("salt-of-alice"), 8192)
	if cfg[sasl.ScramSHA256] != m.CredentialFromSalted(salted, []byte("salt-of-alice"), 8192).String() || len(cfg) != 1 {
		t.Fatalf("/config/users/alice: %v", cfg)
	}
	for _, u := range []string{"dora", "fred", "gina"} {
		if cfg, v, _ := usercreds.ReadConfig(b.Users, u); v != -1 || len(cfg) != 0 {
			t.Errorf("%s written: %v", u, cfg)
		}
	}

	// Delete and upsert of one user in one request; the user's znode keeps the rest.
	got = alterResults(t, b, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{upsertion("alice", 2, 4096, "pw")},
		[]kmsg.AlterUserSCRAMCredentialsRequestDeletion{deletion("alice", 1)})
	if got["alice"] != (result{}) {
		t.Fatalf("%v", got)
	}
	if cfg, _, _ := usercreds.ReadConfig(b.Users, "alice"); len(cfg) != 1 || cfg[sasl.ScramSHA512] == "" {
		t.Fatalf("alice after: %v", cfg)
	}

	// Describe: everyone, sorted; named users with Kafka's errors.
	dreq := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	dresp := handleNow[*kmsg.DescribeUserSCRAMCredentialsResponse](t, b, 50, dreq)
	if dresp.ErrorCode != 0 || len(dresp.Results) != 2 || dresp.Results[0].User != "alice" || dresp.Results[1].User != "bob" ||
		len(dresp.Results[0].CredentialInfos) != 1 || dresp.Results[0].CredentialInfos[0].Mechanism != 2 || dresp.Results[0].CredentialInfos[0].Iterations != 4096 {
		t.Fatalf("describe all: %+v", dresp)
	}
	for _, n := range []string{"bob", "", "zed", "bob"} {
		u := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		u.Name = n
		dreq.Users = append(dreq.Users, u)
	}
	dresp = handleNow[*kmsg.DescribeUserSCRAMCredentialsResponse](t, b, 50, dreq)
	wantD := []result{
		{kerr.DuplicateResource.Code, "Cannot describe SCRAM credentials for the same user twice in a single request: bob"},
		{kerr.ResourceNotFound.Code, "Username must not be empty"},
		{kerr.ResourceNotFound.Code, "Attempt to describe a user credential that does not exist: zed"},
	}
	if len(dresp.Results) != len(wantD) {
		t.Fatalf("describe named: %+v", dresp.Results)
	}
	for i, w := range wantD {
		r := dresp.Results[i]
		if r.ErrorCode != w.code || r.ErrorMessage == nil || *r.ErrorMessage != w.msg {
			t.Errorf("result %d: %+v, want %+v", i, r, w)
		}
	}
}

func TestSaslRequestsAfterAuthentication(t *testing.T) {
	b := &Broker{Log: zap.NewNop()}
	hs := handleNow[*kmsg.SASLHandshakeResponse](t, b, 17, kmsg.NewPtrSASLHandshakeRequest())
	if hs.ErrorCode != kerr.IllegalSaslState.Code || len(hs.SupportedMechanisms) != 0 {
		t.Fatalf("%+v", hs)
	}
	a := handleNow[*kmsg.SASLAuthenticateResponse](t, b, 36, kmsg.NewPtrSASLAuthenticateRequest())
	if a.ErrorCode != kerr.IllegalSaslState.Code || *a.ErrorMessage != "SaslAuthenticate request received after successful authentication" {
		t.Fatalf("%+v", a)
	}
	ranges := map[int16]wire.ApiRange{}
	for _, r := range SupportedRanges() {
		ranges[r.Key] = r
	}
	for key, max := range map[int16]int16{17: 1, 36: 2, 50: 0, 51: 0} {
		if r, ok := ranges[key]; !ok || r.MinVersion != 0 || r.MaxVersion != max {
			t.Errorf("ApiVersions: key %d %+v, want 0-%d", key, r, max)
		}
	}
}

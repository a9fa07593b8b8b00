package sasl

import (
	"strings"
	"testing"
)

func TestParseJAAS(t *testing.T) {
	mods, err := ParseJAAS(`org.apache.kafka.common.security.plain.PlainLoginModule required
		username="admin" password="admin-secret" // the broker's own
		user_admin="admin-secret" user_alice="al\"ice;=,secret" user_bob='bob' /* single quotes too */ user_$x-y_z=word.with-dots;
		org.apache.kafka.common.security.scram.ScramLoginModule OPTIONAL;`)
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) != 2 || mods[0].Class != PlainLoginModule || mods[0].Flag != "REQUIRED" || mods[1].Class != ScramLoginModule || mods[1].Flag != "OPTIONAL" {
		t.Fatalf("%+v", mods)
	}
	o := mods[0].Options
	if o["username"] != "admin" || o["password"] != "admin-secret" || o["user_alice"] != `al"ice;=,secret` || o["user_bob"] != "bob" || o["user_$x-y_z"] != "word.with-dots" {
		t.Fatalf("options %q", o)
	}
	users := mods[0].PlainUsers()
	if len(users) != 4 || users["admin"] != "admin-secret" || users["bob"] != "bob" {
		t.Fatalf("users %q", users)
	}
	for _, c := range []struct{ in, err string }{
		{"", "Login module not specified in JAAS config"},
		{"  // only a comment", "Login module not specified in JAAS config"},
		{"a.B", "Login module control flag not specified in JAAS config"},
		{"a.B mandatory;", "Invalid login module control flag 'mandatory' in JAAS config"},
		{`a.B required k="v"`, "JAAS config entry not terminated by semi-colon"},
		{`a.B required k;`, "Value not specified for key 'k' in JAAS config"},
		{`a.B required k=;`, "Value not specified for key 'k' in JAAS config"},
		{`a.B required k=8192;`, "Value not specified for key 'k' in JAAS config"}, // StreamTokenizer: a number has no string value
	} {
		if _, err := ParseJAAS(c.in); err == nil || err.Error() != c.err {
			t.Errorf("%q: %v; want %q", c.in, err, c.err)
		}
	}
}

func TestPlainSession(t *testing.T) {
	a := &Authenticator{Mechanisms: []string{Plain}, PlainUsers: map[string]string{"alice": "s3cret"}}
	for _, c := range []struct{ tok, id, err string }{
		{"\x00alice\x00s3cret", "alice", ""},
		{"alice\x00alice\x00s3cret", "alice", ""},
		{"\x00alice\x00S3cret", "", "Authentication failed: Invalid username or password"},
		{"\x00eve\x00s3cret", "", "Authentication failed: Invalid username or password"},
		{"\x00\x00s3cret", "", "Authentication failed: username not specified"},
		{"\x00alice\x00", "", "Authentication failed: password not specified"},
		{"bob\x00alice\x00s3cret", "", "Authentication failed: Client requested an authorization id that is different from username"},
		{"alice:s3cret", "", "Invalid SASL/PLAIN response: expected 3 tokens, got 1"},
	} {
		s, err := a.NewSession(Plain)
		if err != nil {
			t.Fatal(err)
		}
		_, done, err := s.Step([]byte(c.tok))
		if c.err == "" {
			if err != nil || !done || s.AuthorizationID() != c.id {
				t.Errorf("%q: %v %v %q", c.tok, done, err, s.AuthorizationID())
			}
			continue
		}
		if err == nil || err.Error() != c.err {
			t.Errorf("%q: %v; want %q", c.tok, err, c.err)
		}
	}
	// The 3-token error is not for the client: it gets the generic message.
	if m := ClientMessage(&AuthError{"x"}, Plain, false); m != "x" {
		t.Fatal(m)
	}
	if _, err := a.NewSession(ScramSHA256); err == nil || !strings.Contains(err.Error(), "Unsupported SASL mechanism") {
		t.Fatal(err)
	}
	if err := CheckMechanisms("k", []string{"PLAIN", "GSSAPI"}); err == nil || !strings.Contains(err.Error(), "GSSAPI (Kerberos) is not supported") {
		t.Fatal(err)
	}
}

package sslprincipal

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"

	"gregor/wire/security/keystore/keystoretest"
)

// The inputs and expectations of Kafka's SslPrincipalMapperTest.
func TestValidAndInvalidRules(t *testing.T) {
	for _, r := range []string{
		"DEFAULT",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
		"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
		"RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
		"RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/",
		"RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/",
	} {
		if _, err := Parse(r); err != nil {
			t.Errorf("Parse(%q): %v", r, err)
		}
	}
	for _, r := range []string{
		"default", "DEFAUL", "DEFAULT/L", "DEFAULT/U",
		"RULE:CN=(.*?),OU=ServiceUsers.*/$1",
		"rule:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/L",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/LU",
	} {
		if _, err := Parse(r); err == nil {
			t.Errorf("Parse(%q) accepted an invalid rule", r)
		}
	}
}

func TestMapper(t *testing.T) {
	m, err := Parse("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, " +
		"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L, " +
		"RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U, " +
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U, " +
		"DEFAULT")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"CN=Duke,OU=ServiceUsers,O=Org,C=US":        "duke",
		"CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US": "duke@sme",
		"cn=duke,ou=sme,dc=mycp,dc=com":             "DUKE@SME",
		"cN=duke,OU=JavaSoft,O=Sun Microsystems":    "DUKE",
		"OU=JavaSoft,O=Sun Microsystems,C=US":       "OU=JavaSoft,O=Sun Microsystems,C=US",
	} {
		if got, err := m.Name(in); err != nil || got != want {
			t.Errorf("Name(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	// No DEFAULT at the end: a DN no rule matches is an error.
	m, _ = Parse("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/")
	if got, err := m.Name("CN=x,OU=Other"); err == nil {
		t.Errorf("Name without a matching rule = %q, want an error", got)
	}
}

func TestCommaWithWhitespace(t *testing.T) {
	m, err := Parse(`RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT`)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := m.Name(`CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz`); err != nil || got != `Tkac\, Adam` {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestRulesSplitting(t *testing.T) {
	for _, c := range []struct{ want, rules string }{
		{"[]", ""},
		{"[DEFAULT]", "DEFAULT"},
		{"[RULE:/]", "RULE://"},
		{"[RULE:/.*]", "RULE:/.*/"},
		{"[RULE:/.*/L]", "RULE:/.*/L"},
		{"[RULE:/, DEFAULT]", "RULE://,DEFAULT"},
		{"[RULE:/, DEFAULT]", "  RULE:// ,  DEFAULT  "},
		{"[RULE:   /     , DEFAULT]", "  RULE:   /     / ,  DEFAULT  "},
		{"[RULE:  /     /U, DEFAULT]", "  RULE:  /     /U   ,DEFAULT  "},
		{"[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]", "  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  "},
		{"[]", ",   , , ,      , , ,   "},
		{"[RULE:/, DEFAULT]", ",,RULE://,,,DEFAULT,,"},
		{"[RULE: /   , DEFAULT]", ",  , RULE: /   /    ,,,   DEFAULT, ,   "},
		{"[RULE:   /  /U, DEFAULT]", "     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,"},
		{`[RULE:\/\\\(\)\n\t/\/\/]`, `RULE:\/\\\(\)\n\t/\/\//`},
		{`[RULE:\**\/+/*/L, RULE:\/*\**/**]`, `RULE:\**\/+/*/L,RULE:\/*\**/**/`},
		{`[RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]`,
			`RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT`},
	} {
		m, err := Parse(c.rules)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.rules, err)
			continue
		}
		if got := m.String(); got != c.want {
			t.Errorf("Parse(%q) = %s, want %s", c.rules, got, c.want)
		}
	}
}

func TestReplacementGroups(t *testing.T) {
	m, err := Parse(`RULE:^CN=(.*?),OU=(.*?)$/$1@$4$12\$/`)
	if err != nil {
		t.Fatal(err)
	}
	// $4: no such group, literal; $12: group 1 then "2"; \$ a literal $.
	if got, _ := m.Name("CN=a,OU=b"); got != "a@$4a2$" {
		t.Errorf("got %q", got)
	}
}

// DN renders subjects as Java's X500Principal.getName(): most specific
// RDN first, RFC 2253 escapes, unknown types as OID=#hex.
func TestDN(t *testing.T) {
	ca := keystoretest.NewCA(t, "ca")
	email := asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
	for _, c := range []struct {
		subject pkix.Name
		want    string
	}{
		{pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"clients"}, Organization: []string{"Gregor tests"}, Country: []string{"US"}},
			"CN=alice,OU=clients,O=Gregor tests,C=US"},
		{pkix.Name{CommonName: "Tkac, Adam", Locality: []string{"a+b=c"}},
			`CN=Tkac\, Adam,L=a\+b\=c`},
		{pkix.Name{CommonName: " #lead", Province: []string{"trail "}},
			`CN=\ \#lead,ST=trail\ `},
		{pkix.Name{CommonName: "bob", ExtraNames: []pkix.AttributeTypeAndValue{{Type: email, Value: "b@x"}}},
			"1.2.840.113549.1.9.1=#0c03624078,CN=bob"},
	} {
		leaf := ca.Client(t, c.subject)
		got, err := DN(leaf.Cert)
		if err != nil || got != c.want {
			t.Errorf("DN(%v) = %q, %v; want %q", c.subject, got, err, c.want)
		}
	}
}

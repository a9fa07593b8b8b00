package config

import (
	"errors"
	"strings"
	"testing"

	"gregor/wire/security"
)

func TestAuthorizerKeys(t *testing.T) {
	b, err := Parse(map[string]string{"log.dirs": "/tmp/x"}, nil)
	if err != nil || b.Authorizer.Enabled() || b.Authorizer.AllowEveryoneIfNoACLFound || b.Authorizer.SuperUsers != nil {
		t.Fatalf("defaults: %+v, %v", b.Authorizer, err)
	}
	for _, class := range []string{AclAuthorizerClass, SimpleAclAuthorizerClass} {
		b, err := Parse(map[string]string{"log.dirs": "/tmp/x", "authorizer.class.name": class,
			"super.users": "User:admin; User:CN=broker,O=x", "allow.everyone.if.no.acl.found": "true"}, nil)
		if err != nil {
			t.Fatalf("%s: %v", class, err)
		}
		a := b.Authorizer
		if !a.Enabled() || !a.AllowEveryoneIfNoACLFound || len(a.SuperUsers) != 2 ||
			a.SuperUsers[0] != security.User("admin") || a.SuperUsers[1] != security.User("CN=broker,O=x") {
			t.Errorf("%s: %+v", class, a)
		}
	}
	for k, v := range map[string]string{
		"authorizer.class.name":          "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":                    "admin",
		"allow.everyone.if.no.acl.found": "yes",
	} {
		_, err := Parse(map[string]string{"log.dirs": "/tmp/x", k: v}, nil)
		var ve *ValueError
		if !errors.As(err, &ve) || ve.Key != k || !strings.Contains(err.Error(), v) {
			t.Errorf("%s=%s: %v, want a ValueError naming the key and value", k, v, err)
		}
	}
}

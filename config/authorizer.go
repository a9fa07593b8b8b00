package config

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire/security"
	"gregor/wire/security/acl"
)

// Authorizer is the ACL authorizer's configuration
// (kafka.security.authorizer.AclAuthorizer's keys).
type Authorizer struct {
	// ClassName is authorizer.class.name: "" (the default: nothing is
	// authorized, every request allowed) or AclAuthorizerClass /
	// SimpleAclAuthorizerClass (ACLs enforced). Any other class is refused
	// at load, since Gregor cannot run it.
	ClassName string
	// SuperUsers is super.users: principals (semicolon-separated) that
	// may do everything.
	SuperUsers []security.Principal
	// AllowEveryoneIfNoACLFound is allow.everyone.if.no.acl.found
	// (default false): a resource with no ACL is open to everyone.
	AllowEveryoneIfNoACLFound bool
}

// The authorizer classes that switch ACLs on: Kafka 2.4+'s name and the
// deprecated pre-2.4 one (both ZooKeeper-backed AclAuthorizers).
const (
	AclAuthorizerClass       = "kafka.security.authorizer.AclAuthorizer"
	SimpleAclAuthorizerClass = "kafka.security.auth.SimpleAclAuthorizer"
)

// Enabled reports whether an authorizer is configured.
func (a Authorizer) Enabled() bool { return a.ClassName != "" }

func init() {
	brokerKeys["authorizer.class.name"] = checkKey(func(b *Broker, key, v string) error {
		switch v {
		case "", AclAuthorizerClass, SimpleAclAuthorizerClass:
			b.Authorizer.ClassName = v
			return nil
		}
		return invalid(key, v, "Gregor implements only %s (and its old name %s); leave the key empty for no authorizer", AclAuthorizerClass, SimpleAclAuthorizerClass)
	}, kmsg.ConfigTypeString, "")
	brokerKeys["super.users"] = nullKey(func(b *Broker, key, v string) error {
		ps, err := acl.ParseSuperUsers(v)
		if err != nil {
			return invalid(key, v, "%v", err)
		}
		b.Authorizer.SuperUsers = ps
		return nil
	}, kmsg.ConfigTypeString)
	brokerKeys["allow.everyone.if.no.acl.found"] = boolKey(func(b *Broker) *bool { return &b.Authorizer.AllowEveryoneIfNoACLFound })
}

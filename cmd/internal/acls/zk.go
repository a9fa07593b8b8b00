package acls

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gregor/cmd/internal/clientutil"
	"gregor/config"
	"gregor/replication/metastore"
	"gregor/replication/zkstore"
	"gregor/wire/security/acl"
)

// Authorizer class names --authorizer accepts: Kafka's AclAuthorizer and
// its pre-2.4 name, both the ZooKeeper layout wire/security/acl keeps.
var authorizerClasses = []string{config.AclAuthorizerClass, config.SimpleAclAuthorizerClass}

// authorizerConfig is what --authorizer-properties configure: where
// ZooKeeper is and the session's timeouts (AclAuthorizer.configure).
type authorizerConfig struct {
	connect           string
	sessionTimeout    time.Duration
	connectionTimeout time.Duration
}

// DefaultZooKeeperSessionTimeout is zookeeper.session.timeout.ms's
// default (KafkaConfig's 18000 ms), used when the properties set none.
var DefaultZooKeeperSessionTimeout = 18 * time.Second

// parseAuthorizerProperties reads --authorizer-properties as AclCommand
// does (CommandLineUtils.parseKeyValueArgs without missing values) and
// AclAuthorizer.configure interprets them: zookeeper.connect (required,
// as KafkaConfig requires it), authorizer.zookeeper.url overriding it,
// zookeeper.session.timeout.ms / zookeeper.connection.timeout.ms (or
// their authorizer.-prefixed forms), zookeeper.set.acl=false. super.users
// and allow.everyone.if.no.acl.found are accepted: they shape the
// authorizer's decisions, which adding, listing and removing ACLs do not
// consult (in Kafka neither). Any other key is refused rather than
// ignored.
func parseAuthorizerProperties(list []string) (authorizerConfig, error) {
	props := map[string]string{}
	for _, kv := range list {
		k, v, _ := strings.Cut(kv, "=")
		if v == "" {
			return authorizerConfig{}, fmt.Errorf("Missing value for key %s}", k) // sic: Kafka's message
		}
		props[k] = v
	}
	cfg := authorizerConfig{sessionTimeout: DefaultZooKeeperSessionTimeout}
	ms := func(keys ...string) (time.Duration, bool, error) {
		for _, k := range keys {
			if v, ok := props[k]; ok {
				n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
				if err != nil || n <= 0 {
					return 0, false, clientutil.Usage("Invalid value %s for configuration %s: expected a positive number of milliseconds", v, k)
				}
				return time.Duration(n) * time.Millisecond, true, nil
			}
		}
		return 0, false, nil
	}
	var err error
	var ok bool
	if d, set, err := ms("authorizer.zookeeper.session.timeout.ms", "zookeeper.session.timeout.ms"); err != nil {
		return cfg, err
	} else if set {
		cfg.sessionTimeout = d
	}
	if cfg.connectionTimeout, ok, err = ms("authorizer.zookeeper.connection.timeout.ms", "zookeeper.connection.timeout.ms"); err != nil {
		return cfg, err
	} else if !ok {
		cfg.connectionTimeout = cfg.sessionTimeout
	}
	for k, v := range props {
		switch k {
		case "zookeeper.connect", "authorizer.zookeeper.url",
			"zookeeper.session.timeout.ms", "authorizer.zookeeper.session.timeout.ms",
			"zookeeper.connection.timeout.ms", "authorizer.zookeeper.connection.timeout.ms":
		case "super.users": // parsed as AclAuthorizer.configure parses it
			if _, err := acl.ParseSuperUsers(v); err != nil {
				return cfg, err
			}
		case "allow.everyone.if.no.acl.found":
			if b := strings.TrimSpace(v); !strings.EqualFold(b, "true") && !strings.EqualFold(b, "false") {
				return cfg, fmt.Errorf("For input string: \"%s\"", b) // Scala's toBoolean
			}
		case "zookeeper.set.acl":
			if b := strings.ToLower(strings.TrimSpace(v)); b != "false" {
				return cfg, clientutil.Usage("zookeeper.set.acl=%s is not supported: Gregor writes ZooKeeper nodes open to all (world:anyone), as Kafka does without it", v)
			}
		default:
			return cfg, clientutil.Usage("Unsupported authorizer property %s: kafka-acls.sh takes zookeeper.connect, authorizer.zookeeper.url, zookeeper.session.timeout.ms, zookeeper.connection.timeout.ms and zookeeper.set.acl=false", k)
		}
	}
	cfg.connect = strings.TrimSpace(props["zookeeper.connect"])
	if cfg.connect == "" {
		return cfg, fmt.Errorf("Missing required configuration \"zookeeper.connect\" which has no default value.")
	}
	if u := strings.TrimSpace(props["authorizer.zookeeper.url"]); u != "" {
		cfg.connect = u
	}
	return cfg, nil
}

// authorizerBackend keeps ACLs in ZooKeeper through wire/security/acl,
// the AclAuthorizer layout every broker watches.
type authorizerBackend struct{ store metastore.Store }

// openAuthorizer checks --authorizer, connects to the ZooKeeper the
// properties name and creates the ACL paths, as AclAuthorizer.configure
// does.
func openAuthorizer(o Options) (backend, error) {
	if o.has(fAuthorizer) && !slices.Contains(authorizerClasses, strings.TrimSpace(o.Authorizer)) {
		return nil, fmt.Errorf("authorizer class %s is not available: kafka-acls.sh here works with %s (ZooKeeper ACLs)", o.Authorizer, strings.Join(authorizerClasses, " or "))
	}
	cfg, err := parseAuthorizerProperties(o.AuthorizerProperties)
	if err != nil {
		return nil, err
	}
	s, err := zkstore.Open(cfg.connect, zkstore.Config{SessionTimeout: cfg.sessionTimeout, ConnectionTimeout: cfg.connectionTimeout})
	if errors.Is(err, zkstore.ErrBadConnect) {
		return nil, clientutil.Usage("zookeeper.connect: %v", err)
	}
	if err != nil {
		return nil, err
	}
	if err := acl.EnsurePaths(s); err != nil {
		s.Close()
		return nil, err
	}
	return &authorizerBackend{store: s}, nil
}

// newAuthorizerBackend is the backend over an open store (tests).
func newAuthorizerBackend(s metastore.Store) backend { return &authorizerBackend{store: s} }

func (z *authorizerBackend) close() { z.store.Close() }

func (z *authorizerBackend) create(_ context.Context, p acl.ResourcePattern, es []acl.Entry) ([]error, error) {
	bs := make([]acl.Binding, len(es))
	for i, e := range es {
		bs[i] = acl.Binding{Pattern: p, Entry: e}
	}
	return acl.Add(z.store, bs), nil
}

func (z *authorizerBackend) describe(_ context.Context, filters []acl.BindingFilter) ([]acl.Binding, error) {
	var out []acl.Binding
	for _, f := range filters {
		bs, err := acl.List(z.store, f)
		if err != nil {
			return nil, err
		}
		out = append(out, bs...)
	}
	return out, nil
}

func (z *authorizerBackend) delete(_ context.Context, filters []acl.BindingFilter) ([]error, error) {
	removed, err := acl.Remove(z.store, filters)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, rs := range removed {
		for _, r := range rs {
			if r.Err != nil {
				errs = append(errs, r.Err)
			}
		}
	}
	return errs, nil
}

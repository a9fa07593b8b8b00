package broker

import (
	"fmt"

	"gregor/replication/metastore"
	"gregor/wire/handlers"
	"gregor/wire/security/acl"
)

// startAuthorizer switches ACLs on when authorizer.class.name names
// Kafka's AclAuthorizer: the authorizer's cache is loaded from the
// metadata store (ZooKeeper, or the single node's embedded store) before
// the listeners serve, and a watcher keeps it current from the ACL
// change notifications until the broker closes. Without the key the
// handlers authorize nothing (h.Authorizer nil).
func (b *Broker) startAuthorizer(h *handlers.Broker, store metastore.Store) error {
	ac := b.cfg.Authorizer
	if !ac.Enabled() {
		return nil
	}
	a := acl.NewAuthorizer(acl.Config{SuperUsers: ac.SuperUsers, AllowEveryoneIfNoACLFound: ac.AllowEveryoneIfNoACLFound}, b.log)
	w, err := acl.StartWatcher(store, a, b.log.Named("acl"))
	if err != nil {
		return fmt.Errorf("authorizer: loading ACLs: %w", err)
	}
	b.closers = append(b.closers, func() error { w.Stop(); return nil })
	h.Authorizer, h.ACLs = a, &acl.Admin{Store: store, Auth: a}
	return nil
}

// Package usercreds keeps SCRAM credentials where Kafka 2.x keeps them:
// /config/users/<sanitized user> holds {"version":1,"config":{"SCRAM-SHA-256":
// "salt=…,stored_key=…,server_key=…,iterations=…"}} and every change is
// announced by /config/changes/config_change_<seq> with entity path
// "users/<sanitized user>" (AdminZkClient.changeUserOrUserClientIdConfig).
// It reads and writes them over a metastore.Store (the embedded store of
// the single node or ZooKeeper), and keeps a broker's credential cache
// current (Watcher).
package usercreds

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/wire/security/sasl"
)

// UsersPath is /config/users, the parent of every user's config znode.
const UsersPath = zkmeta.ConfigPath + "/users"

// EntityType is the config change notification entity type of users.
const EntityType = "users"

// Sanitize encodes a user name for a znode name as Kafka's
// Sanitizer.sanitize does: URL-encoded UTF-8 (Java's URLEncoder), with
// "+" written "%20" and "*" "%2A".
func Sanitize(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '_':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// Desanitize reverses Sanitize (Sanitizer.desanitize). Errors: bad escapes.
func Desanitize(s string) (string, error) { return url.PathUnescape(s) }

// UserPath is /config/users/<sanitized name>.
func UserPath(name string) string { return UsersPath + "/" + Sanitize(name) }

// ReadConfig returns a user's config znode (every key, SCRAM or not) and
// its version; a user without a znode has an empty config and version -1.
func ReadConfig(store metastore.Store, name string) (map[string]string, int32, error) {
	return zkmeta.ReadEntityConfig(store, UserPath(name))
}

// Credentials picks the SCRAM credentials out of a user's config; values
// that do not parse are returned in bad (by mechanism) and left out.
func Credentials(cfg map[string]string) (creds map[string]sasl.ScramCredential, bad map[string]error) {
	creds = map[string]sasl.ScramCredential{}
	for _, m := range sasl.ScramMechanisms {
		v, ok := cfg[m.Name]
		if !ok {
			continue
		}
		c, err := sasl.ParseScramCredential(v)
		if err != nil {
			if bad == nil {
				bad = map[string]error{}
			}
			bad[m.Name] = err
			continue
		}
		creds[m.Name] = c
	}
	return creds, bad
}

// ListUsers returns the (desanitized) names under /config/users.
func ListUsers(store metastore.Store) ([]string, error) {
	kids, err := store.Children(UsersPath)
	if errors.Is(err, metastore.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(kids))
	for _, k := range kids {
		n, err := Desanitize(k)
		if err != nil {
			n = k
		}
		out = append(out, n)
	}
	return out, nil
}

// Update changes a user's config with edit (which may modify the map it
// gets, and returns an error to abort) under compare-and-set, writes the
// znode (an empty config stays, {"version":1,"config":{}}, as Kafka's
// changeConfigs leaves it) and writes the change notification every
// broker reacts to.
func Update(store metastore.Store, name string, edit func(cfg map[string]string) error) error {
	return zkmeta.UpdateEntityConfig(store, UserPath(name), edit, func() error { return Notify(store, name) })
}

// Notify writes /config/changes/config_change_<seq> for user name.
func Notify(store metastore.Store, name string) error {
	if err := zkmeta.NotifyConfigChange(store, EntityType+"/"+Sanitize(name)); err != nil {
		return fmt.Errorf("the config of user %s is written but the change notification failed (brokers see it on restart): %w", name, err)
	}
	return nil
}

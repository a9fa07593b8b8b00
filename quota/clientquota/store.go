package clientquota

import (
	"errors"
	"fmt"
	"strconv"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// ConfigPath is the entity's znode: /config/users/<u>,
// /config/clients/<c> or /config/users/<u>/clients/<c>.
func ConfigPath(e Entity) string { return zkmeta.ConfigPath + "/" + e.Path() }

// Read returns the entity's znode config (every key: a user's SCRAM
// credentials too) and its version; no znode is an empty config, -1.
func Read(store metastore.Store, e Entity) (map[string]string, int32, error) {
	return zkmeta.ReadEntityConfig(store, ConfigPath(e))
}

// Values picks the quota keys out of a znode config, parsed as doubles;
// a value that does not parse is left out and returned in bad.
func Values(cfg map[string]string) (vals map[string]float64, bad map[string]string) {
	vals = map[string]float64{}
	for k, s := range cfg {
		if _, ok := TypeOfKey(k); !ok {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			if bad == nil {
				bad = map[string]string{}
			}
			bad[k] = s
			continue
		}
		vals[k] = v
	}
	return vals, bad
}

// List returns every entity with a znode: each /config/users/<u>, each
// /config/users/<u>/clients/<c> and each /config/clients/<c>.
func List(store metastore.Store) ([]Entity, error) {
	children := func(p string) ([]string, error) {
		kids, err := store.Children(p)
		if errors.Is(err, metastore.ErrNoNode) {
			return nil, nil
		}
		return kids, err
	}
	var out []Entity
	users, err := children(zkmeta.ConfigPath + "/users")
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		out = append(out, Entity{User: u})
		clients, err := children(zkmeta.ConfigPath + "/users/" + u + "/clients")
		if err != nil {
			return nil, err
		}
		for _, c := range clients {
			out = append(out, Entity{User: u, Client: c})
		}
	}
	clients, err := children(zkmeta.ConfigPath + "/clients")
	if err != nil {
		return nil, err
	}
	for _, c := range clients {
		out = append(out, Entity{Client: c})
	}
	return out, nil
}

// Update changes the entity's znode config with edit (which modifies the
// map it gets, or returns an error to abort: nothing is written) under
// compare-and-set, then writes the /config/changes notification with the
// entity path (Kafka's AdminZkClient.changeConfigs; for a user or a
// (user, client) pair changeUserOrUserClientIdConfig). Other keys of the
// znode (SCRAM credentials) are kept as they are.
func Update(store metastore.Store, e Entity, edit func(cfg map[string]string) error) error {
	return zkmeta.UpdateEntityConfig(store, ConfigPath(e), edit, func() error { return Notify(store, e) })
}

// Notify writes /config/changes/config_change_<seq> for e.
func Notify(store metastore.Store, e Entity) error {
	if err := zkmeta.NotifyConfigChange(store, e.Path()); err != nil {
		return fmt.Errorf("the quotas of %s are written but the change notification failed (brokers see them on restart): %w", e, err)
	}
	return nil
}

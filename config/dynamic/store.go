package dynamic

import (
	"fmt"
	"maps"

	"gregor/config"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// EntityType is the /config/changes entity type of broker configs
// (entity_path "brokers/<id>" or "brokers/<default>", Kafka's ConfigType.BROKER).
const EntityType = "brokers"

// changeRetries bounds Change's read-modify-write loop under racing writers.
const changeRetries = 10

// Read returns /config/brokers/<entity> (entity: a broker id or
// config.DefaultEntity) and its data version; an absent znode is an empty
// config and version -1. Errors: the store fails or the znode is not
// Kafka's config JSON.
func Read(store metastore.Store, entity string) (map[string]string, int32, error) {
	path := zkmeta.BrokerConfigPath(entity)
	m, version, err := zkmeta.ReadEntityConfig(store, path)
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return m, version, nil
}

// Change is AlterConfigs / IncrementalAlterConfigs of a BROKER resource in
// ZooKeeper mode (Kafka's AdminZkClient.changeBrokerConfig), runnable on
// any broker or tool: mutate edits a copy of /config/brokers/<entity>;
// check validates the whole result (nil = config.ValidateDynamic only);
// the result is written conditionally on the version read (a racing
// writer makes it re-read and re-run mutate), then announced with a
// /config/changes/config_change_<seq> notification
// ({"version":2,"entity_path":"brokers/<entity>"}). validateOnly writes
// nothing. Password configs (a keystore password) are stored encrypted
// with enc (password.encoder.secret, Kafka's PasswordEncoder): mutate and
// check see them decrypted, the znode holds them encrypted (every one
// re-encrypted on each write, as Kafka's toPersistentProps). Returns the
// entity's configs as written (or as they would be), decrypted.
// Errors: mutate's, check's (*config.DynamicError, *config.ValueError),
// store failures.
func Change(store metastore.Store, entity string, enc config.PasswordEncoder, mutate func(map[string]string) error, check func(map[string]string) error, validateOnly bool) (map[string]string, error) {
	if check == nil {
		check = func(p map[string]string) error { return config.ValidateDynamic(p, entity != config.DefaultEntity) }
	}
	for attempt := 0; ; attempt++ {
		stored, version, err := Read(store, entity)
		if err != nil {
			return nil, err
		}
		cur, bad := enc.DecodePasswords(stored)
		for k, err := range bad {
			return nil, fmt.Errorf("%s of %s: %w", k, zkmeta.BrokerConfigPath(entity), err)
		}
		next := maps.Clone(cur)
		if err := mutate(next); err != nil {
			return nil, err
		}
		if err := check(next); err != nil {
			return nil, err
		}
		if validateOnly {
			return next, nil
		}
		path := zkmeta.BrokerConfigPath(entity)
		persist, err := enc.EncodePasswords(next)
		if err != nil {
			return nil, err
		}
		conflict, err := zkmeta.WriteEntityConfig(store, path, persist, version)
		if conflict {
			if attempt < changeRetries {
				continue
			}
			return nil, fmt.Errorf("the config of %s kept changing under this update; retry", path)
		}
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		return next, Notify(store, entity)
	}
}

// Notify writes the /config/changes notification for brokers/<entity>.
func Notify(store metastore.Store, entity string) error {
	if err := zkmeta.NotifyConfigChange(store, EntityType+"/"+entity); err != nil {
		return fmt.Errorf("the broker config %s is written but the change notification failed: %w", entity, err)
	}
	return nil
}

// Load reads both layers of the broker's dynamic configs and installs them
// (Manager.Update). Called at start, before the components that read the
// config start, and by the watcher.
func (m *Manager) Load(store metastore.Store) error {
	defaults, _, err := Read(store, config.DefaultEntity)
	if err != nil {
		return err
	}
	per, _, err := Read(store, m.BrokerID())
	if err != nil {
		return err
	}
	return m.Update(defaults, per)
}

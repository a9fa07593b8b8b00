package zkmeta

import (
	"errors"
	"fmt"

	"gregor/replication/metastore"
)

// The /config/<entity type>/<name> znodes (topics, brokers, users,
// clients) all hold {"version":1,"config":{…}} and are changed the same
// way: read with the version, write conditionally on it, then announce the
// change with a /config/changes notification (Kafka's
// AdminZkClient.changeConfigs). These are the three steps; each caller
// keeps its own retry policy and messages.

// ReadEntityConfig reads the config map of the znode at path and its
// version. An absent znode is an empty map and version -1. Errors: the
// store's, or a config that does not decode.
func ReadEntityConfig(store metastore.Store, path string) (map[string]string, int32, error) {
	data, version, err := store.Get(path)
	if errors.Is(err, metastore.ErrNoNode) {
		return map[string]string{}, -1, nil
	}
	if err != nil {
		return nil, 0, err
	}
	cfg, err := DecodeConfig(data)
	if err != nil {
		return nil, 0, err
	}
	return cfg, version, nil
}

// WriteEntityConfig writes cfg at path if the znode is still at version
// (-1: it must not exist yet; it is created with its parents). conflict
// reports that another writer changed or created it first: read again.
func WriteEntityConfig(store metastore.Store, path string, cfg map[string]string, version int32) (conflict bool, err error) {
	data := EncodeConfig(cfg)
	if version < 0 {
		err = metastore.CreateAll(store, path, data, false)
	} else {
		_, err = store.Set(path, data, version)
	}
	if errors.Is(err, metastore.ErrBadVersion) || errors.Is(err, metastore.ErrNodeExists) || errors.Is(err, metastore.ErrNoNode) {
		return true, nil
	}
	return false, err
}

// NotifyConfigChange writes /config/changes/config_change_<seq> naming
// entityPath ("topics/<t>", "brokers/<id>", "users/<u>", …), which makes
// every broker re-read that entity; /config/changes is created when no
// broker has made the persistent paths yet.
func NotifyConfigChange(store metastore.Store, entityPath string) error {
	note := EncodeConfigChange(entityPath)
	_, err := store.CreateSequential(ConfigChangePrefix, note, false)
	if errors.Is(err, metastore.ErrNoNode) {
		if err = metastore.EnsurePath(store, ConfigChangesPath); err == nil {
			_, err = store.CreateSequential(ConfigChangePrefix, note, false)
		}
	}
	return err
}

// maxCASAttempts bounds UpdateEntityConfig's read-modify-write retries
// under concurrent writers.
const maxCASAttempts = 10

// UpdateEntityConfig changes the config of the znode at path with edit
// (which modifies the map it gets, or returns an error to abort: nothing
// is written) under compare-and-set, retrying a conflict a few times; an
// edited-to-empty config stays as {"version":1,"config":{}}, as Kafka's
// changeConfigs leaves it. Then notify (the entity's /config/changes
// notification) runs. Errors: edit's; the store's, wrapped with path; too
// many concurrent changes.
func UpdateEntityConfig(store metastore.Store, path string, edit func(cfg map[string]string) error, notify func() error) error {
	for range maxCASAttempts {
		cfg, version, err := ReadEntityConfig(store, path)
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if err := edit(cfg); err != nil {
			return err
		}
		conflict, err := WriteEntityConfig(store, path, cfg, version)
		if conflict {
			continue // another writer was first: read again
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return notify()
	}
	return fmt.Errorf("writing %s: too many concurrent changes", path)
}

package controller

import (
	"maps"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/config"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// Topic configs in Kafka's ZooKeeper mode live in /config/topics/<t>, not
// with the controller: any broker (and `kafka-configs.sh --zookeeper`)
// reads and writes them there (Kafka's AdminZkClient.fetchEntityConfig /
// changeTopicConfig), and every broker learns of a change from the
// /config/changes notification it watches (config_changes.go). These
// functions need only the store, so the configs tool uses them too.

// changeRetries bounds the read-modify-write loop of ChangeTopicConfig
// when other writers race it (each lost race re-reads the znode).
const changeRetries = 10

// ReadTopicConfig returns topic's overrides from /config/topics/<t> (an
// absent znode is no overrides). Errors: UNKNOWN_TOPIC_OR_PARTITION when
// /brokers/topics/<t> does not exist; UNKNOWN_SERVER_ERROR when the store
// fails or the znode is not Kafka's config JSON.
func ReadTopicConfig(store metastore.Store, topic string) (map[string]string, error) {
	if err := topicExists(store, topic); err != nil {
		return nil, err
	}
	m, _, err := readConfigZnode(store, topic)
	return m, err
}

// ChangeTopicConfig is AlterConfigs / IncrementalAlterConfigs in
// ZooKeeper mode, runnable on any broker or tool (Kafka's
// AdminZkClient.changeTopicConfig): mutate edits a copy of the topic's
// current overrides (it may return an *Error such as INVALID_CONFIG); the
// result is validated as a whole (config.ValidateTopicConfigs →
// INVALID_CONFIG), written to /config/topics/<t> conditionally on the
// version read (a concurrent writer makes it re-read and re-run mutate,
// so read-modify-write is atomic across brokers), and announced with a
// /config/changes/config_change_<seq> notification
// ({"version":2,"entity_path":"topics/<t>"}). With validateOnly nothing
// is written. It returns the overrides now in force (or that would be).
// Errors: UNKNOWN_TOPIC_OR_PARTITION, INVALID_CONFIG, mutate's, and
// UNKNOWN_SERVER_ERROR for store failures.
func ChangeTopicConfig(store metastore.Store, topic string, mutate func(overrides map[string]string) error, validateOnly bool) (map[string]string, error) {
	for attempt := 0; ; attempt++ {
		if err := topicExists(store, topic); err != nil {
			return nil, err
		}
		cur, version, err := readConfigZnode(store, topic)
		if err != nil {
			return nil, err
		}
		next := maps.Clone(cur)
		if err := mutate(next); err != nil {
			return nil, err
		}
		if err := config.ValidateTopicConfigs(next); err != nil {
			return nil, errf(kerr.InvalidConfig, "%s", err.Error())
		}
		if validateOnly {
			return next, nil
		}
		path := zkmeta.TopicConfigPath(topic)
		conflict, err := zkmeta.WriteEntityConfig(store, path, next, version)
		if conflict {
			if attempt < changeRetries {
				continue // another writer got there first: decide again on its result
			}
			return nil, errf(kerr.UnknownServerError, "the config of topic '%s' kept changing under this update; retry", topic)
		}
		if err != nil {
			return nil, errf(kerr.UnknownServerError, "writing %s: %v", path, err)
		}
		if err := NotifyTopicConfigChange(store, topic); err != nil {
			return nil, err
		}
		return next, nil
	}
}

// NotifyTopicConfigChange writes the /config/changes/config_change_<seq>
// notification for topic (entity path "topics/<t>", version 2) that makes
// every broker re-read /config/topics/<t>. Errors: UNKNOWN_SERVER_ERROR.
func NotifyTopicConfigChange(store metastore.Store, topic string) error {
	err := zkmeta.NotifyConfigChange(store, zkmeta.ConfigEntityTopics+"/"+topic)
	if err != nil {
		return errf(kerr.UnknownServerError, "the config of topic '%s' is written but the change notification failed (brokers apply it on their next LeaderAndIsr): %v", topic, err)
	}
	return nil
}

// topicExists answers UNKNOWN_TOPIC_OR_PARTITION unless /brokers/topics/<t> exists.
func topicExists(store metastore.Store, topic string) error {
	ok, err := store.Exists(zkmeta.TopicPath(topic))
	if err != nil {
		return errf(kerr.UnknownServerError, "reading %s: %v", zkmeta.TopicPath(topic), err)
	}
	if !ok {
		return errf(kerr.UnknownTopicOrPartition, "Topic '%s' does not exist.", topic)
	}
	return nil
}

// readConfigZnode reads /config/topics/<t>: overrides and data version
// (-1 and no overrides when the znode is absent).
func readConfigZnode(store metastore.Store, topic string) (map[string]string, int32, error) {
	path := zkmeta.TopicConfigPath(topic)
	m, version, err := zkmeta.ReadEntityConfig(store, path)
	if err != nil {
		return nil, 0, errf(kerr.UnknownServerError, "reading %s: %v", path, err)
	}
	return m, version, nil
}

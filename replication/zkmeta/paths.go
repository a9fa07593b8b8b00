// Package zkmeta is Kafka 2.x's ZooKeeper layout (kafka.zk.ZkData): znode
// paths and the JSON codecs of their data, used over any metastore.Store so
// that `get /brokers/ids/0` shows an operator what Kafka would show.
package zkmeta

import (
	"strconv"

	"gregor/replication/metastore"
)

// Znode paths (ZkData.scala).
const (
	BrokersPath                  = "/brokers"
	BrokerIDsPath                = "/brokers/ids"    // children: live broker ids (ephemeral)
	TopicsPath                   = "/brokers/topics" // children: topic names
	BrokerSeqIDPath              = "/brokers/seqid"  // broker id generation
	ControllerPath               = "/controller"     // ephemeral, the active controller
	ControllerEpochPath          = "/controller_epoch"
	ConfigPath                   = "/config"
	ConfigTopicsPath             = "/config/topics"
	ConfigBrokersPath            = "/config/brokers"
	ConfigChangesPath            = "/config/changes"
	ConfigChangePrefix           = "/config/changes/config_change_" // sequential
	AdminPath                    = "/admin"
	DeleteTopicsPath             = "/admin/delete_topics"
	ReassignPartitionsPath       = "/admin/reassign_partitions"
	PreferredReplicaElectionPath = "/admin/preferred_replica_election"
	IsrChangeNotificationPath    = "/isr_change_notification"
	IsrChangePrefix              = "/isr_change_notification/isr_change_" // sequential
	LogDirEventNotificationPath  = "/log_dir_event_notification"
	ProducerIDBlockPath          = "/latest_producer_id_block"
	ClusterPath                  = "/cluster"
	ClusterIDPath                = "/cluster/id"
	ConsumersPath                = "/consumers" // pre-0.9 consumers; created for layout compatibility
)

// PersistentPaths are the znodes a Kafka broker creates at start-up when
// missing (ZkData.PersistentZkPaths plus one node per config entity type).
var PersistentPaths = []string{
	ConsumersPath,
	BrokerIDsPath,
	TopicsPath,
	ConfigChangesPath,
	DeleteTopicsPath,
	BrokerSeqIDPath,
	IsrChangeNotificationPath,
	ProducerIDBlockPath,
	LogDirEventNotificationPath,
	ConfigTopicsPath,
	"/config/clients",
	"/config/users",
	ConfigBrokersPath,
	"/config/ips",
}

// BrokerPath is /brokers/ids/<id>.
func BrokerPath(id int32) string { return BrokerIDsPath + "/" + itoa(id) }

// TopicPath is /brokers/topics/<topic> (the replica assignment).
func TopicPath(topic string) string { return TopicsPath + "/" + topic }

// PartitionsPath is /brokers/topics/<topic>/partitions.
func PartitionsPath(topic string) string { return TopicPath(topic) + "/partitions" }

// PartitionPath is /brokers/topics/<topic>/partitions/<p>.
func PartitionPath(topic string, p int32) string { return PartitionsPath(topic) + "/" + itoa(p) }

// PartitionStatePath is /brokers/topics/<topic>/partitions/<p>/state.
func PartitionStatePath(topic string, p int32) string { return PartitionPath(topic, p) + "/state" }

// TopicConfigPath is /config/topics/<topic>.
func TopicConfigPath(topic string) string { return ConfigTopicsPath + "/" + topic }

// BrokerConfigPath is /config/brokers/<id> (or "<default>").
func BrokerConfigPath(entity string) string { return ConfigBrokersPath + "/" + entity }

// DeleteTopicPath is /admin/delete_topics/<topic>, the deletion marker.
func DeleteTopicPath(topic string) string { return DeleteTopicsPath + "/" + topic }

// EnsurePersistentPaths creates every PersistentPaths node that is missing.
func EnsurePersistentPaths(s metastore.Store) error {
	for _, p := range PersistentPaths {
		if err := metastore.EnsurePath(s, p); err != nil {
			return err
		}
	}
	return nil
}

func itoa(i int32) string { return strconv.FormatInt(int64(i), 10) }

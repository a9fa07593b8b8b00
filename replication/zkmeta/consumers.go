package zkmeta

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gregor/replication/metastore"
)

// The pre-0.9 consumers' znodes under /consumers (Kafka's ZkUtils
// ZKGroupDirs / ZKGroupTopicDirs, KafkaZkClient's ConsumerOffset znode):
//
//	/consumers/<group>/ids/<consumer id>               ephemeral; the consumer's registration (JSON)
//	/consumers/<group>/owners/<topic>/<partition>      ephemeral; the consumer thread id that owns it
//	/consumers/<group>/offsets/<topic>/<partition>     persistent; the next offset to read, as a decimal string
//
// OffsetCommit/OffsetFetch v0 read and write the offsets znodes (as Kafka
// 2.x does in ZooKeeper mode); the old console consumer
// (kafka-console-consumer.sh --zookeeper … --group) writes all three.

// ConsumerGroupPath is /consumers/<group>.
func ConsumerGroupPath(group string) string { return ConsumersPath + "/" + group }

// ConsumerOffsetsPath is /consumers/<group>/offsets.
func ConsumerOffsetsPath(group string) string { return ConsumerGroupPath(group) + "/offsets" }

// ConsumerOffsetPath is /consumers/<group>/offsets/<topic>/<partition>.
func ConsumerOffsetPath(group, topic string, p int32) string {
	return ConsumerOffsetsPath(group) + "/" + topic + "/" + itoa(p)
}

// ConsumerIDsPath is /consumers/<group>/ids, where each old consumer
// registers an ephemeral /consumers/<group>/ids/<consumer id>.
func ConsumerIDsPath(group string) string { return ConsumerGroupPath(group) + "/ids" }

// ConsumerOwnerPath is /consumers/<group>/owners/<topic>/<partition>: an
// ephemeral znode whose data is the owning consumer thread's id.
func ConsumerOwnerPath(group, topic string, p int32) string {
	return ConsumerGroupPath(group) + "/owners/" + topic + "/" + itoa(p)
}

// ValidConsumerGroup reports whether group can name a /consumers/<group>
// znode: one path component (not empty, no "/", not "." or ".."). Kafka
// builds the path without checking and lets ZooKeeper refuse it; Gregor
// answers INVALID_GROUP_ID instead of writing somewhere else.
func ValidConsumerGroup(group string) bool {
	return group != "" && group != "." && group != ".." && !strings.ContainsAny(group, "/\x00")
}

// ErrBadConsumerOffset wraps a /consumers/<g>/offsets/<t>/<p> znode whose
// data is not a decimal integer.
var ErrBadConsumerOffset = errors.New("zkmeta: consumer offset znode does not hold a decimal offset")

// ReadConsumerOffset reads /consumers/<group>/offsets/<topic>/<p>: the
// offset and true, or false when the znode does not exist (KafkaZkClient's
// getConsumerOffset None). Errors: the store's (ErrConnectionLoss, …) and
// ErrBadConsumerOffset.
func ReadConsumerOffset(s metastore.Store, group, topic string, p int32) (int64, bool, error) {
	path := ConsumerOffsetPath(group, topic, p)
	data, _, err := s.Get(path)
	if errors.Is(err, metastore.ErrNoNode) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	off, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%w: %s holds %q", ErrBadConsumerOffset, path, data)
	}
	return off, true, nil
}

// WriteConsumerOffset stores offset at /consumers/<group>/offsets/<topic>/<p>
// as a decimal string, creating the znode and its parents when missing
// (KafkaZkClient.setOrCreateConsumerOffset, ZkUtils.updatePersistentPath).
// A concurrent creator is tolerated: the write becomes a Set.
func WriteConsumerOffset(s metastore.Store, group, topic string, p int32, offset int64) error {
	path := ConsumerOffsetPath(group, topic, p)
	data := []byte(strconv.FormatInt(offset, 10))
	for range 3 { // bounded: each retry follows a concurrent create or delete
		_, err := s.Set(path, data, metastore.AnyVersion)
		if !errors.Is(err, metastore.ErrNoNode) {
			return err
		}
		if err := metastore.EnsurePath(s, metastore.Parent(path)); err != nil {
			return err
		}
		err = s.Create(path, data, false)
		if !errors.Is(err, metastore.ErrNodeExists) && !errors.Is(err, metastore.ErrNoNode) {
			return err
		}
	}
	return fmt.Errorf("zkmeta: %s kept changing while writing it", path)
}

package handlers

// OffsetCommit v0 and OffsetFetch v0: the offsets of the pre-0.9
// consumers, kept in ZooKeeper at /consumers/<group>/offsets/<topic>/<p>
// (replication/zkmeta consumers.go), as Kafka 2.x's
// KafkaApis.handleOffsetCommitRequest / handleOffsetFetchRequest do for
// version 0 in ZooKeeper mode. No group coordinator is involved, so any
// broker answers them. Versions ≥ 1 use __consumer_offsets (the group
// coordinator), and the two stores are separate, as in Kafka: an offset
// committed at v0 is not seen by a v1+ fetch, nor the reverse.

import (
	"errors"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/replication/metadata"
	"gregor/replication/zkmeta"
	"gregor/wire"
)

// errNoConsumerStore: the broker was built without ConsumerStore.
var errNoConsumerStore = errors.New("this broker has no ZooKeeper store for version 0 offsets")

// offsetCommitV0 stores each partition's offset in ZooKeeper; the
// metadata string is dropped (Kafka's ZooKeeper storage keeps only the
// offset) but still limited by offset.metadata.max.bytes. Per partition:
// TOPIC_AUTHORIZATION_FAILED (no Read on the topic),
// UNKNOWN_TOPIC_OR_PARTITION, OFFSET_METADATA_TOO_LARGE, INVALID_GROUP_ID
// (a group id that cannot name a znode), UNKNOWN_SERVER_ERROR (the store
// failed: Kafka's answer to a ZooKeeper exception), else NONE once the
// znode is written. No Read on the group: every partition
// GROUP_AUTHORIZATION_FAILED. The writes run on a handler goroutine,
// never on the connection's reader.
func (b *Broker) offsetCommitV0(rc *wire.RequestContext, req *kmsg.OffsetCommitRequest) wire.Reply {
	req, finish, now := b.authorizeOffsetCommit(rc, req) // group Read, topic Read
	if now != nil {
		return wire.Now(wire.Response{Msg: now})
	}
	return b.async(func() kmsg.Response {
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		snap := b.Topics.Snapshot()
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition = p.Partition
				rp.ErrorCode = b.commitOneV0(snap, req.Group, t.Topic, p)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		if finish != nil {
			finish(resp)
		}
		return resp
	})
}

// commitOneV0 writes one partition's offset and returns its error code.
func (b *Broker) commitOneV0(snap *metadata.Snapshot, group, topic string, p kmsg.OffsetCommitRequestTopicPartition) int16 {
	if _, ok := snap.Partition(topic, p.Partition); !ok {
		return kerr.UnknownTopicOrPartition.Code
	}
	if p.Metadata != nil && utf16Len(*p.Metadata) > int(b.Config.OffsetMetadataMaxBytes) {
		return kerr.OffsetMetadataTooLarge.Code
	}
	if !zkmeta.ValidConsumerGroup(group) {
		return kerr.InvalidGroupID.Code
	}
	err := errNoConsumerStore
	if b.ConsumerStore != nil {
		err = zkmeta.WriteConsumerOffset(b.ConsumerStore, group, topic, p.Partition, p.Offset)
	}
	if err != nil {
		b.Log.Warn("OffsetCommit v0: writing the offset to ZooKeeper failed", zap.String("group", group),
			zap.String("topic", topic), zap.Int32("partition", p.Partition), zap.Error(err))
		return kerr.UnknownServerError.Code
	}
	return 0
}

// offsetFetchV0 reads each partition's offset from ZooKeeper: the offset
// with empty metadata, or -1 and NONE when no znode holds one or the
// partition does not exist (Kafka's OffsetFetchResponse.UNKNOWN_PARTITION).
// A topic without Describe: -1, TOPIC_AUTHORIZATION_FAILED; no Describe
// on the group: every partition GROUP_AUTHORIZATION_FAILED; a store
// failure or an unreadable znode: -1, UNKNOWN_SERVER_ERROR; a group id
// that cannot name a znode: -1, INVALID_GROUP_ID.
func (b *Broker) offsetFetchV0(rc *wire.RequestContext, req *kmsg.OffsetFetchRequest) wire.Reply {
	req, finish, now := b.authorizeOffsetFetch(rc, req) // group Describe, topic Describe
	if now != nil {
		return wire.Now(wire.Response{Msg: now})
	}
	return b.async(func() kmsg.Response {
		resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
		snap := b.Topics.Snapshot()
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetFetchResponseTopicPartition()
				rp.Partition, rp.Metadata = p, kmsg.StringPtr("") // Kafka's NO_METADATA
				rp.Offset, rp.ErrorCode = b.fetchOneV0(snap, req.Group, t.Topic, p)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		if finish != nil {
			finish(resp)
		}
		return resp
	})
}

// fetchOneV0 reads one partition's offset: (offset, error code).
func (b *Broker) fetchOneV0(snap *metadata.Snapshot, group, topic string, p int32) (int64, int16) {
	if _, ok := snap.Partition(topic, p); !ok {
		return -1, 0
	}
	if !zkmeta.ValidConsumerGroup(group) {
		return -1, kerr.InvalidGroupID.Code
	}
	if b.ConsumerStore == nil {
		return -1, kerr.UnknownServerError.Code
	}
	off, ok, err := zkmeta.ReadConsumerOffset(b.ConsumerStore, group, topic, p)
	switch {
	case err != nil:
		b.Log.Warn("OffsetFetch v0: reading the offset from ZooKeeper failed", zap.String("group", group),
			zap.String("topic", topic), zap.Int32("partition", p), zap.Error(err))
		return -1, kerr.UnknownServerError.Code
	case !ok:
		return -1, 0
	}
	return off, 0
}

// utf16Len is s's length in Java String.length units (UTF-16 code
// units), the unit of offset.metadata.max.bytes (as the coordinator's
// metadataTooLarge counts).
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

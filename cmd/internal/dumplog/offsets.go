package dumplog

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// formatOffsetsRecord is the --offsets-decoder messageParser: it decodes a
// __consumer_offsets record the way Kafka 3.8+'s
// DumpLogSegments.OffsetsMessageParser does, so the line reads the same as
// kafka-dump-log.sh's:
//
//	key: {"type":"1","data":{"group":"g1","topic":"t","partition":0}} payload: {"version":"3","data":{"offset":2,"leaderEpoch":0,"metadata":"","commitTimestamp":1700000000000}}
//
// "type" is the key's leading int16 (the record type: 0 and 1 offset
// commits, 2 group metadata) and "version" the value's, both as strings;
// "data" is the message as its generated JsonConverter writes it: the
// schema's camelCase field names in schema order, only the fields of that
// version, no tagged fields (the schemas define none). For a "consumer"
// protocol group each member's subscription and assignment are decoded
// (ConsumerProtocolSubscription / ConsumerProtocolAssignment) when they
// parse, else kept as base64. A tombstone prints "payload: <DELETE>". A
// record that does not decode prints Kafka's "Error at offset N, skipping.
// …" or "Unknown record type T at offset N, skipping." as its key and no
// payload ("").
func formatOffsetsRecord(key, value []byte, offset int64) (string, string) {
	if key == nil {
		// Kafka's tool stops here with this exception; printing it
		// lets the rest of the segment be dumped.
		return fmt.Sprintf("Failed to decode message at offset %d using offset topic decoder (message had a missing key)", offset), ""
	}
	skip := func(format string, args ...any) (string, string) {
		return fmt.Sprintf("Error at offset %d, skipping. ", offset) + fmt.Sprintf(format, args...), ""
	}
	// Kafka's messages for a record that does not read; the cause is
	// ours (Java's depends on where its reader stopped).
	unreadable := func(version int16, what string) (string, string) {
		return skip("Could not read record with version %d from %s's buffer due to: not enough data.", version, what)
	}
	if len(key) < 2 {
		return skip("Could not read version from key's buffer.")
	}
	typ := int16(binary.BigEndian.Uint16(key))
	var kj []byte
	switch typ {
	case 0, 1:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(key); err != nil {
			return unreadable(typ, "key")
		}
		kj = offsetCommitKeyJSON(&k)
	case 2:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(key); err != nil {
			return unreadable(typ, "key")
		}
		kj = groupMetadataKeyJSON(&k)
	default:
		// Types 3–8 are KIP-848 consumer group records, which Gregor
		// does not write.
		return fmt.Sprintf("Unknown record type %d at offset %d, skipping.", typ, offset), ""
	}
	var kw jsonObject
	kw.str("type", strconv.Itoa(int(typ)))
	kw.raw("data", kj)
	keyText := string(kw.done())
	if value == nil {
		return keyText, "<DELETE>"
	}
	if len(value) < 2 {
		return skip("Could not read version from value's buffer.")
	}
	version := int16(binary.BigEndian.Uint16(value))
	var vj []byte
	switch typ {
	case 0, 1:
		v := kmsg.NewOffsetCommitValue()
		if err := v.ReadFrom(value); err != nil {
			return unreadable(version, "value")
		}
		vj = offsetCommitValueJSON(&v)
	case 2:
		v := kmsg.NewGroupMetadataValue()
		if err := v.ReadFrom(value); err != nil {
			return unreadable(version, "value")
		}
		vj = groupMetadataValueJSON(&v)
	}
	var vw jsonObject
	vw.str("version", strconv.Itoa(int(version)))
	vw.raw("data", vj)
	return keyText, string(vw.done())
}

// offsetCommitKeyJSON is OffsetCommitKeyJsonConverter.write (versions 0-1
// have the same fields).
func offsetCommitKeyJSON(k *kmsg.OffsetCommitKey) []byte {
	var o jsonObject
	o.str("group", k.Group)
	o.str("topic", k.Topic)
	o.int("partition", int64(k.Partition))
	return o.done()
}

// offsetCommitValueJSON is OffsetCommitValueJsonConverter.write:
// leaderEpoch from v3, expireTimestamp in v1 only. A version past the
// schema's (0-4) is written as the highest, as Kafka's generated code does.
func offsetCommitValueJSON(v *kmsg.OffsetCommitValue) []byte {
	var o jsonObject
	o.int("offset", v.Offset)
	if v.Version >= 3 {
		o.int("leaderEpoch", int64(v.LeaderEpoch))
	}
	o.str("metadata", v.Metadata)
	o.int("commitTimestamp", v.CommitTimestamp)
	if v.Version == 1 {
		o.int("expireTimestamp", v.ExpireTimestamp)
	}
	return o.done()
}

// groupMetadataKeyJSON is GroupMetadataKeyJsonConverter.write.
func groupMetadataKeyJSON(k *kmsg.GroupMetadataKey) []byte {
	var o jsonObject
	o.str("group", k.Group)
	return o.done()
}

// consumerProtocolType is the protocol type of groups using the consumer
// embedded protocol (ConsumerProtocol.PROTOCOL_TYPE).
const consumerProtocolType = "consumer"

// groupMetadataValueJSON is GroupMetadataValueJsonConverter.write
// (currentStateTimestamp from v2; a member's groupInstanceId from v3 and
// rebalanceTimeout from v1), with the subscription and assignment of a
// "consumer" group's members replaced by their decoded JSON as
// OffsetsMessageParser does.
func groupMetadataValueJSON(v *kmsg.GroupMetadataValue) []byte {
	var o jsonObject
	o.str("protocolType", v.ProtocolType)
	o.int("generation", int64(v.Generation))
	o.nullableStr("protocol", v.Protocol)
	o.nullableStr("leader", v.Leader)
	if v.Version >= 2 {
		o.int("currentStateTimestamp", v.CurrentStateTimestamp)
	}
	consumer := v.ProtocolType == consumerProtocolType
	o.raw("members", appendJSONArray(nil, len(v.Members), func(b []byte, i int) []byte {
		m := &v.Members[i]
		mo := jsonObject{buf: b}
		mo.str("memberId", m.MemberID)
		if v.Version >= 3 {
			mo.nullableStr("groupInstanceId", m.InstanceID)
		}
		mo.str("clientId", m.ClientID)
		mo.str("clientHost", m.ClientHost)
		if v.Version >= 1 {
			mo.int("rebalanceTimeout", int64(m.RebalanceTimeoutMillis))
		}
		mo.int("sessionTimeout", int64(m.SessionTimeoutMillis))
		if sj, ok := subscriptionJSON(m.Subscription, consumer); ok {
			mo.raw("subscription", sj)
		} else {
			mo.bytes("subscription", m.Subscription)
		}
		if aj, ok := assignmentJSON(m.Assignment, consumer); ok {
			mo.raw("assignment", aj)
		} else {
			mo.bytes("assignment", m.Assignment)
		}
		return mo.done()
	}))
	return o.done()
}

// subscriptionJSON decodes a consumer protocol member's subscription
// (ConsumerProtocolSubscription, version-prefixed) into
// ConsumerProtocolSubscriptionJsonConverter's JSON: ownedPartitions from
// v1, generationId from v2, rackId from v3. ok is false when decode is
// false or the bytes do not parse (Kafka then keeps them as base64).
func subscriptionJSON(b []byte, decode bool) ([]byte, bool) {
	if !decode || len(b) < 2 {
		return nil, false
	}
	s := kmsg.NewConsumerMemberMetadata()
	if err := s.ReadFrom(b); err != nil {
		return nil, false
	}
	var o jsonObject
	o.raw("topics", appendStringArray(nil, s.Topics))
	o.nullableBytes("userData", s.UserData)
	if s.Version >= 1 {
		o.raw("ownedPartitions", appendJSONArray(nil, len(s.OwnedPartitions), func(b []byte, i int) []byte {
			return appendTopicPartitions(b, s.OwnedPartitions[i].Topic, s.OwnedPartitions[i].Partitions)
		}))
	}
	if s.Version >= 2 {
		o.int("generationId", int64(s.Generation))
	}
	if s.Version >= 3 {
		o.nullableStr("rackId", s.Rack)
	}
	return o.done(), true
}

// assignmentJSON decodes a consumer protocol member's assignment
// (ConsumerProtocolAssignment) into ConsumerProtocolAssignmentJsonConverter's
// JSON; ok as for subscriptionJSON.
func assignmentJSON(b []byte, decode bool) ([]byte, bool) {
	if !decode || len(b) < 2 {
		return nil, false
	}
	a := kmsg.NewConsumerMemberAssignment()
	if err := a.ReadFrom(b); err != nil {
		return nil, false
	}
	var o jsonObject
	o.raw("assignedPartitions", appendJSONArray(nil, len(a.Topics), func(b []byte, i int) []byte {
		return appendTopicPartitions(b, a.Topics[i].Topic, a.Topics[i].Partitions)
	}))
	o.nullableBytes("userData", a.UserData)
	return o.done(), true
}

// appendTopicPartitions appends the consumer protocol's topic-partitions
// object, {"topic":…,"partitions":[…]}, to b (ownedPartitions and
// assignedPartitions entries alike).
func appendTopicPartitions(b []byte, topic string, partitions []int32) []byte {
	o := jsonObject{buf: b}
	o.str("topic", topic)
	o.raw("partitions", appendInt32Array(nil, partitions))
	return o.done()
}

package coordinator

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Record schema versions Gregor writes (Kafka 2.3+ writes the same):
// OffsetCommitKey v1, OffsetCommitValue v3 (v1 when the commit carries an
// explicit expire timestamp), GroupMetadataKey v2, GroupMetadataValue v3.
// Kafka distinguishes the two key kinds by the key's leading int16 version:
// 0 and 1 are offset commits, 2 is group metadata.
const (
	offsetKeyVersion   = 1
	offsetValueVersion = 3
	groupKeyVersion    = 2
	groupValueVersion  = 3
)

// ErrBadRecord wraps every decode failure of a __consumer_offsets record.
var ErrBadRecord = errors.New("coordinator: bad __consumer_offsets record")

// OffsetKey encodes the OffsetCommitKey of (group, topic, partition).
func OffsetKey(group string, tp TopicPartition) []byte {
	k := kmsg.OffsetCommitKey{Version: offsetKeyVersion, Group: group, Topic: tp.Topic, Partition: tp.Partition}
	return k.AppendTo(nil)
}

// OffsetValue encodes an OffsetCommitValue: v3 (with leader epoch), or v1
// when o.ExpireTime is set (OffsetCommit v2–v4 retention time).
func OffsetValue(o OffsetAndMetadata) []byte {
	v := kmsg.NewOffsetCommitValue()
	v.Version = offsetValueVersion
	v.Offset = o.Offset
	v.LeaderEpoch = o.LeaderEpoch
	v.Metadata = o.Metadata
	v.CommitTimestamp = o.CommitTime.UnixMilli()
	if !o.ExpireTime.IsZero() {
		v.Version = 1
		v.ExpireTimestamp = o.ExpireTime.UnixMilli()
	}
	return v.AppendTo(nil)
}

// GroupKey encodes the GroupMetadataKey of group.
func GroupKey(group string) []byte {
	k := kmsg.GroupMetadataKey{Version: groupKeyVersion, Group: group}
	return k.AppendTo(nil)
}

// groupValue encodes the group's GroupMetadataValue v3 with the given
// assignment by member id (nil = members' current assignments).
func (g *Group) groupValue(now time.Time, assignment map[string][]byte) []byte {
	v := kmsg.NewGroupMetadataValue()
	v.Version = groupValueVersion
	v.ProtocolType = g.protocolType
	v.Generation = g.generation
	if g.protocol != "" {
		p := g.protocol
		v.Protocol = &p
	}
	if g.leader != "" {
		l := g.leader
		v.Leader = &l
	}
	v.CurrentStateTimestamp = now.UnixMilli()
	for _, id := range g.order {
		m := g.members[id]
		vm := kmsg.NewGroupMetadataValueMember()
		vm.MemberID = m.ID
		if m.InstanceID != "" {
			s := m.InstanceID
			vm.InstanceID = &s
		}
		vm.ClientID = m.ClientID
		vm.ClientHost = m.ClientHost
		vm.RebalanceTimeoutMillis = int32(m.RebalanceTimeout / time.Millisecond)
		vm.SessionTimeoutMillis = int32(m.SessionTimeout / time.Millisecond)
		vm.Subscription = m.metadataFor(g.protocol)
		if vm.Subscription == nil {
			vm.Subscription = []byte{}
		}
		if assignment != nil {
			vm.Assignment = assignment[id]
		} else {
			vm.Assignment = m.Assignment
		}
		if vm.Assignment == nil {
			vm.Assignment = []byte{}
		}
		v.Members = append(v.Members, vm)
	}
	return v.AppendTo(nil)
}

// persistGroup appends the group's metadata record with assignment, as it
// stands now (Kafka's storeGroup), and runs done with the outcome (see
// write).
func (g *Group) persistGroup(now time.Time, assignment map[string][]byte, done func(now time.Time, err error)) {
	var recs []Record
	if g.store != nil {
		recs = []Record{{Key: GroupKey(g.id), Value: g.groupValue(now, assignment)}}
	}
	g.write(now, recs, done)
}

// KeyKind says what a __consumer_offsets key holds.
type KeyKind int8

const (
	// KeyUnknown: a key version Gregor does not know (e.g. a newer Kafka's);
	// skipped when loading.
	KeyUnknown KeyKind = iota
	KeyOffset
	KeyGroup
)

// DecodedKey is a decoded __consumer_offsets key.
type DecodedKey struct {
	Kind  KeyKind
	Group string
	TopicPartition
}

// DecodeKey decodes a __consumer_offsets record key. Unknown key versions
// give KeyUnknown and no error; truncated keys give an ErrBadRecord error.
func DecodeKey(key []byte) (DecodedKey, error) {
	if len(key) < 2 {
		return DecodedKey{}, fmt.Errorf("%w: key of %d bytes", ErrBadRecord, len(key))
	}
	switch v := int16(binary.BigEndian.Uint16(key)); v {
	case 0, 1:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(key); err != nil {
			return DecodedKey{}, fmt.Errorf("%w: offset commit key: %v", ErrBadRecord, err)
		}
		return DecodedKey{Kind: KeyOffset, Group: k.Group, TopicPartition: TopicPartition{k.Topic, k.Partition}}, nil
	case 2:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(key); err != nil {
			return DecodedKey{}, fmt.Errorf("%w: group metadata key: %v", ErrBadRecord, err)
		}
		return DecodedKey{Kind: KeyGroup, Group: k.Group}, nil
	default:
		return DecodedKey{Kind: KeyUnknown}, nil
	}
}

// DecodeOffsetValue decodes an OffsetCommitValue (v0–v4).
func DecodeOffsetValue(val []byte) (OffsetAndMetadata, error) {
	var v kmsg.OffsetCommitValue
	if err := v.ReadFrom(val); err != nil {
		return OffsetAndMetadata{}, fmt.Errorf("%w: offset commit value: %v", ErrBadRecord, err)
	}
	o := OffsetAndMetadata{Offset: v.Offset, LeaderEpoch: -1, Metadata: v.Metadata, CommitTime: time.UnixMilli(v.CommitTimestamp)}
	if v.Version >= 3 {
		o.LeaderEpoch = v.LeaderEpoch
	}
	if v.Version == 1 && v.ExpireTimestamp >= 0 {
		o.ExpireTime = time.UnixMilli(v.ExpireTimestamp)
	}
	return o, nil
}

// DecodeGroupValue decodes a GroupMetadataValue (v0–v4).
func DecodeGroupValue(val []byte) (*kmsg.GroupMetadataValue, error) {
	v := new(kmsg.GroupMetadataValue)
	v.Default()
	if err := v.ReadFrom(val); err != nil {
		return nil, fmt.Errorf("%w: group metadata value: %v", ErrBadRecord, err)
	}
	return v, nil
}

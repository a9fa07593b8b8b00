package coordinator

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Loaded is one group's state rebuilt from __consumer_offsets: its last
// GroupMetadataValue (nil when none or tombstoned) and its live offsets.
type Loaded struct {
	Meta    *kmsg.GroupMetadataValue
	Offsets map[TopicPartition]OffsetAndMetadata
}

// Loader folds a partition's records, in offset order, into the groups they
// describe: later records win, tombstones delete (what compaction keeps).
// If Only is set, records of other groups are skipped.
type Loader struct {
	Only   string
	only   bool
	Groups map[string]*Loaded
}

// NewLoader returns a Loader for every group of a partition.
func NewLoader() *Loader { return &Loader{Groups: map[string]*Loaded{}} }

// NewGroupLoader returns a Loader that keeps only group's records.
func NewGroupLoader(group string) *Loader {
	return &Loader{Only: group, only: true, Groups: map[string]*Loaded{}}
}

func (l *Loader) get(group string) *Loaded {
	x := l.Groups[group]
	if x == nil {
		x = &Loaded{Offsets: map[TopicPartition]OffsetAndMetadata{}}
		l.Groups[group] = x
	}
	return x
}

// Apply folds one record. Undecodable records are returned as errors
// wrapping ErrBadRecord (callers log and skip them); unknown key versions
// are skipped silently.
func (l *Loader) Apply(key, value []byte) error {
	k, err := DecodeKey(key)
	if err != nil {
		return err
	}
	if k.Kind == KeyUnknown || (l.only && k.Group != l.Only) {
		return nil
	}
	switch k.Kind {
	case KeyOffset:
		if value == nil {
			if x := l.Groups[k.Group]; x != nil {
				delete(x.Offsets, k.TopicPartition)
				l.prune(k.Group)
			}
			return nil
		}
		o, err := DecodeOffsetValue(value)
		if err != nil {
			return err
		}
		l.get(k.Group).Offsets[k.TopicPartition] = o
	case KeyGroup:
		if value == nil {
			if x := l.Groups[k.Group]; x != nil {
				x.Meta = nil
				l.prune(k.Group)
			}
			return nil
		}
		v, err := DecodeGroupValue(value)
		if err != nil {
			return err
		}
		l.get(k.Group).Meta = v
	}
	return nil
}

func (l *Loader) prune(group string) {
	if x := l.Groups[group]; x != nil && x.Meta == nil && len(x.Offsets) == 0 {
		delete(l.Groups, group)
	}
}

// RestoreGroup builds the Group of a loaded state: Stable with its
// generation, leader, members and assignments if the last metadata had
// members, Empty otherwise (a group with offsets only is a "simple" group
// with no protocol type). Every member must heartbeat within its session
// timeout from now. A nil l gives a group that does not exist.
func RestoreGroup(id string, cfg Config, store Store, l *Loaded, now time.Time) *Group {
	g := NewGroup(id, cfg, store, now)
	if l == nil {
		return g
	}
	g.exists = true
	for tp, o := range l.Offsets {
		g.offsets[tp] = o
	}
	md := l.Meta
	if md == nil {
		return g
	}
	g.protocolType = md.ProtocolType
	g.generation = md.Generation
	if md.Protocol != nil {
		g.protocol = *md.Protocol
	}
	if md.CurrentStateTimestamp > 0 {
		g.stateTime = time.UnixMilli(md.CurrentStateTimestamp)
	}
	for _, vm := range md.Members {
		m := &Member{
			ID:               vm.MemberID,
			ClientID:         vm.ClientID,
			ClientHost:       vm.ClientHost,
			RebalanceTimeout: time.Duration(vm.RebalanceTimeoutMillis) * time.Millisecond,
			SessionTimeout:   time.Duration(vm.SessionTimeoutMillis) * time.Millisecond,
			ProtocolType:     md.ProtocolType,
			Protocols:        []Protocol{{Name: g.protocol, Metadata: vm.Subscription}},
			Assignment:       vm.Assignment,
		}
		if m.RebalanceTimeout <= 0 {
			m.RebalanceTimeout = m.SessionTimeout
		}
		if vm.InstanceID != nil {
			m.InstanceID = *vm.InstanceID
		}
		g.add(m, nil)
		g.touch(m, now)
	}
	if md.Leader != nil {
		if _, ok := g.members[*md.Leader]; ok {
			g.leader = *md.Leader
		}
	}
	if len(g.members) > 0 {
		g.state = Stable
	}
	return g
}

package coordinator

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage/record"
)

// Loaded is one group's state rebuilt from __consumer_offsets: its last
// GroupMetadataValue (nil when none or tombstoned), its live offsets with
// the log offset of the batch that wrote each (Positions), and the
// offsets of transactions still open at the end of the partition, by
// producer id (PendingTxn).
type Loaded struct {
	Meta       *kmsg.GroupMetadataValue
	Offsets    map[TopicPartition]OffsetAndMetadata
	Positions  map[TopicPartition]int64
	PendingTxn map[int64]map[TopicPartition]PendingOffset
}

// LogRecord is one record of a __consumer_offsets partition as the
// loader reads it, with what it needs of its batch: Offset is the record's
// offset, BatchOffset its batch's base offset (the position that orders
// commits, as Kafka's appendedBatchOffset); ProducerID is -1 for a batch
// without one. A control batch's record (Control) is a transaction
// marker: Key is its control key, Value its EndTxnMarker.
type LogRecord struct {
	Key, Value    []byte
	Offset        int64
	BatchOffset   int64
	ProducerID    int64
	ProducerEpoch int16
	Transactional bool
	Control       bool
}

// Loader folds a partition's records, in offset order, into the groups they
// describe: later records win, tombstones delete (what compaction keeps).
// Offsets written in a transactional batch are held per producer until
// that producer's next control record in the partition: COMMIT makes them
// the group's offsets (unless a later plain commit of the partition is
// already loaded), ABORT drops them; those still open at the end are the
// groups' PendingTxn (Kafka's GroupMetadataManager.doLoadGroupsAndOffsets).
// If Only is set, records of other groups are skipped.
type Loader struct {
	Only   string
	only   bool
	Groups map[string]*Loaded
	// open is, by producer id, the groups holding pending offsets of it.
	open map[int64]map[string]bool
	last int64 // the last record's batch offset (Apply follows it)
}

// NewLoader returns a Loader for every group of a partition.
func NewLoader() *Loader {
	return &Loader{Groups: map[string]*Loaded{}, open: map[int64]map[string]bool{}, last: -1}
}

// NewGroupLoader returns a Loader that keeps only group's records.
func NewGroupLoader(group string) *Loader {
	return &Loader{Only: group, only: true, Groups: map[string]*Loaded{}, open: map[int64]map[string]bool{}, last: -1}
}

func (l *Loader) get(group string) *Loaded {
	x := l.Groups[group]
	if x == nil {
		x = &Loaded{Offsets: map[TopicPartition]OffsetAndMetadata{}, Positions: map[TopicPartition]int64{},
			PendingTxn: map[int64]map[TopicPartition]PendingOffset{}}
		l.Groups[group] = x
	}
	return x
}

// Apply folds one plain record (no producer, not transactional) that
// follows the previous one in the log (see ApplyRecord).
func (l *Loader) Apply(key, value []byte) error {
	off := l.last + 1
	return l.ApplyRecord(&LogRecord{Key: key, Value: value, Offset: off, BatchOffset: off, ProducerID: -1})
}

// ApplyRecord folds one record. Undecodable records are returned as errors
// wrapping ErrBadRecord (callers log and skip them); unknown key versions
// and control record types are skipped silently.
func (l *Loader) ApplyRecord(r *LogRecord) error {
	l.last = r.BatchOffset
	if r.Control {
		return l.applyControl(r)
	}
	key, value := r.Key, r.Value
	k, err := DecodeKey(key)
	if err != nil {
		return err
	}
	if k.Kind == KeyUnknown || (l.only && k.Group != l.Only) {
		return nil
	}
	txn := r.Transactional && r.ProducerID >= 0
	switch k.Kind {
	case KeyOffset:
		if value == nil {
			x := l.Groups[k.Group]
			if x == nil {
				return nil
			}
			if txn {
				if staged := x.PendingTxn[r.ProducerID]; staged != nil {
					delete(staged, k.TopicPartition)
				}
			} else {
				delete(x.Offsets, k.TopicPartition)
				delete(x.Positions, k.TopicPartition)
			}
			l.prune(k.Group)
			return nil
		}
		o, err := DecodeOffsetValue(value)
		if err != nil {
			return err
		}
		x := l.get(k.Group)
		if txn {
			staged := x.PendingTxn[r.ProducerID]
			if staged == nil {
				staged = map[TopicPartition]PendingOffset{}
				x.PendingTxn[r.ProducerID] = staged
			}
			staged[k.TopicPartition] = PendingOffset{OffsetAndMetadata: o, Position: r.BatchOffset}
			if l.open[r.ProducerID] == nil {
				l.open[r.ProducerID] = map[string]bool{}
			}
			l.open[r.ProducerID][k.Group] = true
			return nil
		}
		x.Offsets[k.TopicPartition] = o
		x.Positions[k.TopicPartition] = r.BatchOffset
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

// applyControl ends the producer's open transaction in this partition: a
// COMMIT marker makes its pending offsets the groups' offsets where they
// are newer in the log than the loaded ones; any control record (ABORT
// included) then forgets them, as Kafka's loader does.
func (l *Loader) applyControl(r *LogRecord) error {
	_, typ, err := record.ControlKey(r.Key)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadRecord, err)
	}
	groups := l.open[r.ProducerID]
	delete(l.open, r.ProducerID)
	for group := range groups {
		x := l.Groups[group]
		if x == nil {
			continue
		}
		staged := x.PendingTxn[r.ProducerID]
		delete(x.PendingTxn, r.ProducerID)
		if typ == record.ControlCommit {
			for tp, p := range staged {
				if cur, ok := x.Positions[tp]; ok && cur > p.Position {
					continue
				}
				x.Offsets[tp] = p.OffsetAndMetadata
				x.Positions[tp] = p.Position
			}
		}
		l.prune(group)
	}
	return nil
}

// OpenProducers returns, by producer id, the groups loaded with pending
// offsets of that producer's open transaction.
func (l *Loader) OpenProducers() map[int64][]string {
	out := make(map[int64][]string, len(l.open))
	for pid, groups := range l.open {
		for g := range groups {
			if x := l.Groups[g]; x != nil && len(x.PendingTxn[pid]) > 0 {
				out[pid] = append(out[pid], g)
			}
		}
	}
	return out
}

func (l *Loader) prune(group string) {
	if x := l.Groups[group]; x != nil && x.Meta == nil && len(x.Offsets) == 0 && !hasPending(x.PendingTxn) {
		delete(l.Groups, group)
	}
}

func hasPending(m map[int64]map[TopicPartition]PendingOffset) bool {
	for _, staged := range m {
		if len(staged) > 0 {
			return true
		}
	}
	return false
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
		if pos, ok := l.Positions[tp]; ok {
			g.offsetPos[tp] = pos
		}
	}
	for pid, staged := range l.PendingTxn {
		if len(staged) == 0 {
			continue
		}
		m := make(map[TopicPartition]PendingOffset, len(staged))
		for tp, p := range staged {
			m[tp] = p
		}
		g.pendingTxn[pid] = m
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

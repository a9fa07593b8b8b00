package coordinator

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Protocol is one (name, metadata) pair of a JoinGroup request, e.g. a
// consumer's assignor ("range") and its ConsumerMemberMetadata bytes.
type Protocol struct {
	Name     string
	Metadata []byte
}

// Member is one group member (Kafka's MemberMetadata).
type Member struct {
	ID               string
	InstanceID       string // group.instance.id of a static member (KIP-345); "" = dynamic
	ClientID         string
	ClientHost       string
	RebalanceTimeout time.Duration
	SessionTimeout   time.Duration
	ProtocolType     string
	Protocols        []Protocol // in the member's order of preference
	Assignment       []byte

	joinCB func(*kmsg.JoinGroupResponse)
	syncCB func(*kmsg.SyncGroupResponse)
	// isNew: joined but has not yet received a JoinGroup answer; such a
	// member is dropped after Config.NewMemberJoinTimeout instead of its
	// session timeout.
	isNew bool
	// deadline is when the member expires unless it heartbeats (or, for a
	// new member, unless the rebalance completes); zero = not scheduled.
	deadline time.Time
}

func (m *Member) awaitingJoin() bool { return m.joinCB != nil }
func (m *Member) awaitingSync() bool { return m.syncCB != nil }

// metadataFor returns the member's metadata for protocol name.
func (m *Member) metadataFor(name string) []byte {
	for _, p := range m.Protocols {
		if p.Name == name {
			return p.Metadata
		}
	}
	return nil
}

// matches reports whether protos equal the member's protocols (names and
// metadata, in order): a rejoin with the same metadata needs no rebalance.
func (m *Member) matches(protos []Protocol) bool {
	if len(protos) != len(m.Protocols) {
		return false
	}
	for i := range protos {
		if protos[i].Name != m.Protocols[i].Name || string(protos[i].Metadata) != string(m.Protocols[i].Metadata) {
			return false
		}
	}
	return true
}

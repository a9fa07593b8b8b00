package coordinator

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Describe is the group's DescribeGroups entry (error code 0). Members carry
// their protocol metadata and assignment only while the group is Stable, as
// in Kafka; an unknown group is described as Dead with no members.
func (g *Group) Describe() kmsg.DescribeGroupsResponseGroup {
	d := kmsg.NewDescribeGroupsResponseGroup()
	d.Group = g.id
	if !g.exists {
		d.State = Dead.String()
		return d
	}
	d.State = g.state.String()
	d.ProtocolType = g.protocolType
	stable := g.state == Stable
	if stable {
		d.Protocol = g.protocol
	}
	for _, id := range g.order {
		m := g.members[id]
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID = m.ID
		if m.InstanceID != "" {
			s := m.InstanceID
			dm.InstanceID = &s
		}
		dm.ClientID = m.ClientID
		dm.ClientHost = m.ClientHost
		if stable {
			dm.ProtocolMetadata = m.metadataFor(g.protocol)
			dm.MemberAssignment = m.Assignment
		}
		d.Members = append(d.Members, dm)
	}
	return d
}

// Listing is the group's ListGroups entry.
type Listing struct {
	Group        string
	ProtocolType string
	State        State
}

// Listing returns the group's ListGroups entry.
func (g *Group) Listing() Listing {
	return Listing{Group: g.id, ProtocolType: g.protocolType, State: g.state}
}

package coordinator

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestCommitGenerationMinusOneToEmptyGroup: Kafka's validateOffsetCommit
// lets a commit with generation -1 into an Empty group whatever member id
// it carries (an admin client, or a consumer without group management);
// with members, such a commit must come from one of them.
func TestCommitGenerationMinusOneToEmptyGroup(t *testing.T) {
	offs := map[TopicPartition]OffsetAndMetadata{tpA: {Offset: 3, LeaderEpoch: -1}}
	g := NewGroup("g", testCfg(), &memStore{}, t0)
	if c := g.Commit(t0, CommitRequest{Generation: -1, Offsets: offs}); c != 0 {
		t.Fatalf("simple commit %d", c)
	}
	if c := g.Commit(t0, CommitRequest{MemberID: "stale-member", Generation: -1, Offsets: offs}); c != 0 {
		t.Fatalf("generation -1 with a member id to an Empty group: %d, want 0", c)
	}
	joinNew(t, g, t0)
	if c := g.Commit(t0, CommitRequest{MemberID: "stale-member", Generation: -1, Offsets: offs}); c != kerr.UnknownMemberID.Code {
		t.Fatalf("generation -1 from a non-member of a group with members: %d, want UNKNOWN_MEMBER_ID", c)
	}
}

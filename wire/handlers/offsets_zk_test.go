package handlers

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/config"
	"gregor/replication/metadata"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/wire/security"
	"gregor/wire/security/acl"
)

// zkOffsetsBroker is a Broker answering v0 offsets over an in-memory
// ensemble session, with topic "t" of 3 partitions and no group
// coordinator (v0 needs none).
func zkOffsetsBroker(t *testing.T) (*Broker, metastore.Store) {
	t.Helper()
	cfg, err := config.Parse(map[string]string{"offset.metadata.max.bytes": "10"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := metastore.NewMemory().Open()
	b := &Broker{Config: cfg, Log: zap.NewNop(), ConsumerStore: s, Topics: snapshotTopics{s: &metadata.Snapshot{
		ControllerID: 1, Topics: map[string]*metadata.Topic{
			"t": {Name: "t", Partitions: []metadata.Partition{{Partition: 0}, {Partition: 1}, {Partition: 2}}},
		}}}}
	t.Cleanup(func() { b.Close(); s.Close() })
	return b, s
}

func commitV0(group string, topic string, parts map[int32]int64, meta map[int32]string) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group = 0, group
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	for p := int32(0); p < 10; p++ {
		o, ok := parts[p]
		if !ok {
			continue
		}
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = p, o
		if m, ok := meta[p]; ok {
			rp.Metadata = kmsg.StringPtr(m)
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = []kmsg.OffsetCommitRequestTopic{rt}
	return req
}

func commitCodes(r *kmsg.OffsetCommitResponse) map[string]int16 {
	out := map[string]int16{}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			out[fmt.Sprintf("%s-%d", t.Topic, p.Partition)] = p.ErrorCode
		}
	}
	return out
}

func fetchV0(group string, topics map[string][]int32) *kmsg.OffsetFetchRequest {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group = 0, group
	for name, parts := range topics {
		ft := kmsg.NewOffsetFetchRequestTopic()
		ft.Topic, ft.Partitions = name, parts
		req.Topics = append(req.Topics, ft)
	}
	return req
}

// fetched renders an OffsetFetch v0 answer as "topic-p:offset/code[/metadata]".
func fetched(r *kmsg.OffsetFetchResponse) map[string]string {
	out := map[string]string{}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			v := fmt.Sprintf("%d/%d", p.Offset, p.ErrorCode)
			if p.Metadata != nil && *p.Metadata != "" {
				v += "/" + *p.Metadata
			}
			out[fmt.Sprintf("%s-%d", t.Topic, p.Partition)] = v
		}
	}
	return out
}

// TestOffsetCommitFetchV0ZooKeeper: v0 commits land in
// /consumers/<group>/offsets/<topic>/<p> as decimal strings (metadata
// dropped), v0 fetches read them back; a missing znode and an unknown
// partition fetch as -1 with NONE (Kafka's UNKNOWN_PARTITION), an unknown
// partition's commit is UNKNOWN_TOPIC_OR_PARTITION and oversized metadata
// OFFSET_METADATA_TOO_LARGE, the others still written; a second commit
// overwrites; nothing reaches a group coordinator (there is none).
func TestOffsetCommitFetchV0ZooKeeper(t *testing.T) {
	b, s := zkOffsetsBroker(t)
	r := call[*kmsg.OffsetCommitResponse](t, b, commitV0("group1", "t", map[int32]int64{0: 5, 1: 7, 2: 9}, map[int32]string{0: "kept?", 2: strings.Repeat("x", 11)}), "")
	if got := commitCodes(r); fmt.Sprint(got) != fmt.Sprint(map[string]int16{"t-0": 0, "t-1": 0, "t-2": kerr.OffsetMetadataTooLarge.Code}) {
		t.Fatalf("commit codes %v", got)
	}
	r = call[*kmsg.OffsetCommitResponse](t, b, commitV0("group1", "gone", map[int32]int64{0: 1}, nil), "")
	if got := commitCodes(r); got["gone-0"] != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic: %v", got)
	}
	r = call[*kmsg.OffsetCommitResponse](t, b, commitV0("group1", "t", map[int32]int64{3: 1}, nil), "")
	if got := commitCodes(r); got["t-3"] != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("partition past the count: %v", got)
	}
	for p, want := range map[int32]string{0: "5", 1: "7"} {
		data, _, err := s.Get(fmt.Sprintf("/consumers/group1/offsets/t/%d", p))
		if err != nil || string(data) != want {
			t.Fatalf("znode of partition %d: %q, %v; want %q", p, data, err, want)
		}
	}
	for _, path := range []string{"/consumers/group1/offsets/t/2", "/consumers/group1/offsets/gone", "/consumers/group1/offsets/t/3"} {
		if ok, _ := s.Exists(path); ok {
			t.Fatalf("%s written for a refused partition", path)
		}
	}

	f := call[*kmsg.OffsetFetchResponse](t, b, fetchV0("group1", map[string][]int32{"t": {0, 1, 2, 3}, "gone": {0}}), "")
	want := map[string]string{"t-0": "5/0", "t-1": "7/0", "t-2": "-1/0", "t-3": "-1/0", "gone-0": "-1/0"}
	if got := fetched(f); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("fetch %v, want %v", got, want)
	}
	// Another group sees nothing; an overwrite is read back.
	f = call[*kmsg.OffsetFetchResponse](t, b, fetchV0("other", map[string][]int32{"t": {0}}), "")
	if got := fetched(f); got["t-0"] != "-1/0" {
		t.Fatalf("other group: %v", got)
	}
	call[*kmsg.OffsetCommitResponse](t, b, commitV0("group1", "t", map[int32]int64{0: 12345678901}, nil), "")
	f = call[*kmsg.OffsetFetchResponse](t, b, fetchV0("group1", map[string][]int32{"t": {0}}), "")
	if got := fetched(f); got["t-0"] != "12345678901/0" {
		t.Fatalf("after overwrite: %v", got)
	}
}

// TestOffsetV0ZooKeeperBadData: a znode an operator wrote by hand that is
// not a number fetches as -1 UNKNOWN_SERVER_ERROR (Kafka's toLong
// throws); an existing znode written by the old consumer with a trailing
// newline is read; a group id that cannot be a znode name is
// INVALID_GROUP_ID and writes nothing.
func TestOffsetV0ZooKeeperBadData(t *testing.T) {
	b, s := zkOffsetsBroker(t)
	if err := metastore.EnsurePath(s, "/consumers/g/offsets/t"); err != nil {
		t.Fatal(err)
	}
	if err := s.Create("/consumers/g/offsets/t/0", []byte("abc"), false); err != nil {
		t.Fatal(err)
	}
	if err := s.Create("/consumers/g/offsets/t/1", []byte("42\n"), false); err != nil {
		t.Fatal(err)
	}
	f := call[*kmsg.OffsetFetchResponse](t, b, fetchV0("g", map[string][]int32{"t": {0, 1}}), "")
	if got := fetched(f); got["t-0"] != fmt.Sprintf("-1/%d", kerr.UnknownServerError.Code) || got["t-1"] != "42/0" {
		t.Fatalf("fetch %v", got)
	}
	for _, g := range []string{"", "a/b", ".."} {
		r := call[*kmsg.OffsetCommitResponse](t, b, commitV0(g, "t", map[int32]int64{0: 1}, nil), "")
		if got := commitCodes(r); got["t-0"] != kerr.InvalidGroupID.Code {
			t.Fatalf("group %q: %v", g, got)
		}
		f := call[*kmsg.OffsetFetchResponse](t, b, fetchV0(g, map[string][]int32{"t": {0}}), "")
		if got := fetched(f); got["t-0"] != fmt.Sprintf("-1/%d", kerr.InvalidGroupID.Code) {
			t.Fatalf("fetch group %q: %v", g, got)
		}
	}
	if kids, _ := s.Children("/consumers"); fmt.Sprint(kids) != "[g]" {
		t.Fatalf("/consumers children %v", kids)
	}
	// A closed store: UNKNOWN_SERVER_ERROR, never NONE.
	s.Close()
	r := call[*kmsg.OffsetCommitResponse](t, b, commitV0("g", "t", map[int32]int64{2: 1}, nil), "")
	if got := commitCodes(r); got["t-2"] != kerr.UnknownServerError.Code {
		t.Fatalf("closed store commit: %v", got)
	}
	if _, _, err := zkmeta.ReadConsumerOffset(s, "g", "t", 2); !errors.Is(err, metastore.ErrClosed) {
		t.Fatalf("read on closed store: %v", err)
	}
}

// TestOffsetV0ZooKeeperACLs: Read on the group for commits, Describe for
// fetches (else every partition GROUP_AUTHORIZATION_FAILED); Read (commit)
// or Describe (fetch) on each topic, else that topic's partitions
// TOPIC_AUTHORIZATION_FAILED while the others are answered.
func TestOffsetV0ZooKeeperACLs(t *testing.T) {
	b, s := zkOffsetsBroker(t)
	b.Topics.Snapshot().Topics["u"] = &metadata.Topic{Name: "u", Partitions: []metadata.Partition{{Partition: 0}}}
	alice := security.User("alice")
	b.Authorizer = acl.NewAuthorizer(acl.Config{}, nil)
	allow := func(rt acl.ResourceType, name string, op acl.Operation) {
		b.Authorizer.SetResource(acl.ResourcePattern{Type: rt, Name: name, Pattern: acl.PatternLiteral},
			[]acl.Entry{{Principal: "User:alice", Host: "*", Operation: op, Permission: acl.Allow}})
	}
	as := func(req kmsg.Request) kmsg.Response {
		return groupCallAs[kmsg.Response](t, b, alice, req)
	}
	c := commitV0("g", "t", map[int32]int64{0: 3}, nil)
	if got := commitCodes(as(c).(*kmsg.OffsetCommitResponse)); got["t-0"] != kerr.GroupAuthorizationFailed.Code {
		t.Fatalf("no group Read: %v", got)
	}
	f := fetchV0("g", map[string][]int32{"t": {0}})
	if got := fetched(as(f).(*kmsg.OffsetFetchResponse)); got["t-0"] != fmt.Sprintf("-1/%d", kerr.GroupAuthorizationFailed.Code) {
		t.Fatalf("no group Describe: %v", got)
	}
	allow(acl.ResourceGroup, "g", acl.OpRead)
	allow(acl.ResourceTopic, "t", acl.OpRead)
	c.Topics = append(c.Topics, commitV0("g", "u", map[int32]int64{0: 4}, nil).Topics...)
	if got := commitCodes(as(c).(*kmsg.OffsetCommitResponse)); got["t-0"] != 0 || got["u-0"] != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("topic Read on t only: %v", got)
	}
	if ok, _ := s.Exists("/consumers/g/offsets/u/0"); ok {
		t.Fatal("denied topic written")
	}
	f = fetchV0("g", map[string][]int32{"t": {0}, "u": {0}})
	want := map[string]string{"t-0": "3/0", "u-0": fmt.Sprintf("-1/%d", kerr.TopicAuthorizationFailed.Code)}
	if got := fetched(as(f).(*kmsg.OffsetFetchResponse)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("fetch with Describe on t only (Read implies Describe): %v, want %v", got, want)
	}
}

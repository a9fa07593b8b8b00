package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupClient sends raw group requests to one broker over its own
// connection (a client of its own), so a request waiting on the broker
// never holds up another client's.
type groupClient struct {
	t  *testing.T
	cl *kgo.Client
}

func newGroupClient(t *testing.T, addr string) *groupClient {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &groupClient{t: t, cl: cl}
}

func (g *groupClient) do(req kmsg.Request) (kmsg.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	return g.cl.SeedBrokers()[0].Request(ctx, req)
}

func (g *groupClient) must(req kmsg.Request) kmsg.Response {
	g.t.Helper()
	resp, err := g.do(req)
	if err != nil {
		g.t.Fatalf("%T: %v", req, err)
	}
	return resp
}

// joinAndSyncAlone makes one member join group (KIP-394's two JoinGroups)
// and sync an empty assignment: its member id and generation.
func (g *groupClient) joinAndSyncAlone(group string, session time.Duration) (string, int32) {
	g.t.Helper()
	jr := kmsg.NewPtrJoinGroupRequest()
	jr.Group, jr.ProtocolType = group, "consumer"
	jr.SessionTimeoutMillis = int32(session / time.Millisecond)
	jr.RebalanceTimeoutMillis = jr.SessionTimeoutMillis
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", (&kmsg.ConsumerMemberMetadata{Topics: []string{"t"}}).AppendTo(nil)
	jr.Protocols = append(jr.Protocols, p)
	j := g.must(jr).(*kmsg.JoinGroupResponse)
	if j.ErrorCode == kerr.MemberIDRequired.Code {
		jr.MemberID = j.MemberID
		j = g.must(jr).(*kmsg.JoinGroupResponse)
	}
	if j.ErrorCode != 0 || j.LeaderID != j.MemberID {
		g.t.Fatalf("JoinGroup: %s, leader %q member %q", codeName(j.ErrorCode), j.LeaderID, j.MemberID)
	}
	sr := kmsg.NewPtrSyncGroupRequest()
	sr.Group, sr.MemberID, sr.Generation = group, j.MemberID, j.Generation
	a := kmsg.NewSyncGroupRequestGroupAssignment()
	a.MemberID, a.MemberAssignment = j.MemberID, (&kmsg.ConsumerMemberAssignment{}).AppendTo(nil)
	sr.GroupAssignment = append(sr.GroupAssignment, a)
	if s := g.must(sr).(*kmsg.SyncGroupResponse); s.ErrorCode != 0 {
		g.t.Fatalf("SyncGroup: %s", codeName(s.ErrorCode))
	}
	return j.MemberID, j.Generation
}

func (g *groupClient) heartbeat(group, member string, gen int32) (int16, error) {
	hr := kmsg.NewPtrHeartbeatRequest()
	hr.Group, hr.MemberID, hr.Generation = group, member, gen
	resp, err := g.do(hr)
	if err != nil {
		return -1, err
	}
	return resp.(*kmsg.HeartbeatResponse).ErrorCode, nil
}

func (g *groupClient) commit(group, member string, gen int32, topic string, offset int64) (int16, error) {
	cr := kmsg.NewPtrOffsetCommitRequest()
	cr.Group, cr.MemberID, cr.Generation = group, member, gen
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, offset
	rt.Partitions = append(rt.Partitions, rp)
	cr.Topics = append(cr.Topics, rt)
	resp, err := g.do(cr)
	if err != nil {
		return -1, err
	}
	return resp.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode, nil
}

func (g *groupClient) describe(group string) kmsg.DescribeGroupsResponseGroup {
	g.t.Helper()
	dr := kmsg.NewPtrDescribeGroupsRequest()
	dr.Groups = []string{group}
	return g.must(dr).(*kmsg.DescribeGroupsResponse).Groups[0]
}

// delayActors injects a delay of d into every actor of kind on the broker
// whose admin listener is admin and whose path starts with prefix; it
// returns the paths delayed.
func delayActors(t *testing.T, admin, kind, prefix string, d time.Duration) []string {
	t.Helper()
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get(admin + "/actors?kind=" + kind)
	if err != nil {
		t.Fatal(err)
	}
	var list []struct {
		Path string `json:"path"`
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("GET /actors: %v", err)
	}
	var delayed []string
	for _, a := range list {
		if !strings.HasPrefix(a.Path, prefix) {
			continue
		}
		body := fmt.Sprintf(`{"action":"delay","actor":%q,"ms":%d}`, a.Path, d.Milliseconds())
		resp, err := hc.Post(admin+"/faults", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /faults %s: %s", body, resp.Status)
		}
		delayed = append(delayed, a.Path)
	}
	return delayed
}

// TestHeartbeatsAnsweredWhileCommitWaitsForSlowFollower is issue 10's
// point 6: with one follower of the group's __consumer_offsets partition
// delayed by 5 s, a member's commit waits for acks=-1 replication while
// its heartbeats keep being answered, and nobody is evicted. (Before the
// group actor appended off its goroutine, the heartbeats queued behind
// the commit.)
func TestHeartbeatsAnsweredWhileCommitWaitsForSlowFollower(t *testing.T) {
	c := startCluster(t, 3, map[string]string{
		"offsets.topic.num.partitions":     "1",
		"group.initial.rebalance.delay.ms": "0",
		// The delayed follower must stay in the ISR for the whole delay,
		// so the commit waits for it rather than for an ISR shrink.
		"replica.lag.time.max.ms": "30000",
		// And the commit must outlast the delay: at Kafka's default
		// (5000 ms, the same as the delay) it may be answered
		// REQUEST_TIMED_OUT first, as Kafka's would.
		"offsets.commit.timeout.ms": "30000",
	}, nil)
	const group = "slow-follower"

	var coord int32
	c.waitFor("a coordinator for the group", 60*time.Second, func() (bool, string) {
		code, id := findCoordinator(t, c.seeds()[0], group)
		coord = id
		return code == 0, codeName(code)
	})
	c.waitFor("__consumer_offsets-0 with its 3 replicas in the ISR, led by the coordinator", 60*time.Second, func() (bool, string) {
		s, ok := c.partitionState("__consumer_offsets", 0)
		return ok && len(s.ISR) == 3 && s.Leader == coord, fmt.Sprintf("%+v", s)
	})
	addr := c.brokers[coord].Addr()
	hb, committer := newGroupClient(t, addr), newGroupClient(t, addr)

	c.waitFor("the coordinator serving the group", 60*time.Second, func() (bool, string) {
		// It may still be loading the partition: an unknown member's
		// heartbeat is answered UNKNOWN_MEMBER_ID once it serves.
		code, err := hb.heartbeat(group, "nobody", 0)
		return err == nil && code == kerr.UnknownMemberID.Code, fmt.Sprint(codeName(code), err)
	})
	member, gen := hb.joinAndSyncAlone(group, 10*time.Second)
	if code, err := committer.commit(group, member, gen, "t", 1); err != nil || code != 0 {
		t.Fatalf("first commit: %s %v", codeName(code), err)
	}

	var follower int32
	for id := range c.brokers {
		if id != coord {
			follower = id
			break
		}
	}
	if paths := delayActors(t, c.admins[follower], "fetcher", fmt.Sprintf("fetcher-manager/fetcher-%d-", coord), 5*time.Second); len(paths) == 0 {
		t.Fatalf("broker %d has no fetcher from the coordinator %d", follower, coord)
	}

	type result struct {
		code int16
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := committer.commit(group, member, gen, "t", 2)
		done <- result{code, err}
	}()

	// Heartbeat every 200 ms until the commit is answered.
	answered := 0
	var commitRes result
	deadline := time.Now().Add(40 * time.Second)
loop:
	for {
		code, err := hb.heartbeat(group, member, gen)
		if err != nil || code != 0 {
			t.Fatalf("heartbeat %d during the commit: %s %v", answered+1, codeName(code), err)
		}
		select {
		case commitRes = <-done:
			break loop
		default:
			answered++
		}
		if time.Now().After(deadline) {
			t.Fatal("the commit was never answered")
		}
		select {
		case commitRes = <-done:
			break loop
		case <-time.After(200 * time.Millisecond):
		}
	}
	if commitRes.err != nil || commitRes.code != 0 {
		t.Fatalf("commit while a follower was delayed: %s %v", codeName(commitRes.code), commitRes.err)
	}
	// The follower's 5 s delay held the commit for several heartbeat
	// intervals: heartbeats were answered while it waited.
	if answered < 3 {
		t.Fatalf("%d heartbeats answered while the commit waited, want at least 3", answered)
	}
	d := hb.describe(group)
	if d.ErrorCode != 0 || d.State != "Stable" || len(d.Members) != 1 || d.Members[0].MemberID != member {
		t.Fatalf("group after the commit: %s %s with %d members", codeName(d.ErrorCode), d.State, len(d.Members))
	}
	if code, err := hb.heartbeat(group, member, gen); err != nil || code != 0 {
		t.Fatalf("heartbeat after the commit (generation %d): %s %v", gen, codeName(code), err)
	}
	t.Logf("%d heartbeats answered while the commit waited for the delayed follower", answered)
}

package coordinator

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// waitLoads polls until partition p of topic has been loaded n times.
func waitLoads(t *testing.T, topic *MemTopic, p int32, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for topic.Loads(p) < n {
		if time.Now().After(deadline) {
			t.Fatalf("partition %d loaded %d times, want %d", p, topic.Loads(p), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// offsetOf is the committed offset of (topic, part) in an OffsetFetch v7
// answer, -1 when absent.
func offsetOf(f *kmsg.OffsetFetchResponse, topic string, part int32) int64 {
	for _, t := range f.Topics {
		for _, p := range t.Partitions {
			if t.Topic == topic && p.Partition == part {
				return p.Offset
			}
		}
	}
	return -1
}

func TestElectedLoadsEagerlyAndIgnoresStaleEpochs(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic)
	p := c.PartitionFor("g")
	c.Elected(p, 3)
	waitLoads(t, topic, p, 1)
	c.Elected(p, 3) // already loaded: nothing to do
	c.Elected(p, 2) // stale
	// A request after the events: the router handled them before it.
	if f := fetchAll(t, c, "g"); f.ErrorCode != 0 {
		t.Fatalf("fetch %d", f.ErrorCode)
	}
	if n := topic.Loads(p); n != 1 {
		t.Fatalf("%d loads after repeated and stale elections, want 1", n)
	}
	c.ResignEpoch(p, 4)
	c.Elected(p, 3)                                 // older than the resignation: ignored
	if f := fetchAll(t, c, "g"); f.ErrorCode != 0 { // loads lazily (MemTopic says local)
		t.Fatalf("fetch %d", f.ErrorCode)
	}
	if n := topic.Loads(p); n != 2 {
		t.Fatalf("%d loads, want 2 (stale election ignored, one lazy load)", n)
	}
	c.ResignEpoch(p, 5)
	c.Elected(p, 6)
	waitLoads(t, topic, p, 3)
}

func TestResignAnswersPendingJoinsUnlessStale(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic)
	p := c.PartitionFor("g")
	c.Elected(p, 7)
	member, gen := joinAndSync(t, c, "g")
	if code := commit(t, c, "g", member, gen, "orders", 0, 42); code != 0 {
		t.Fatalf("commit %d", code)
	}
	// A second member's join leaves the group rebalancing: the first
	// member's rejoin and the second's join wait.
	ch, reply := chanOf[*kmsg.JoinGroupResponse]()
	c.JoinGroup(context.Background(), "cli", "/127.0.0.1", joinReq("g", ""), reply)
	second := wait(t, ch)
	if second.ErrorCode != kerr.MemberIDRequired.Code {
		t.Fatalf("second join %d", second.ErrorCode)
	}
	pending := make(chan *kmsg.JoinGroupResponse, 1)
	c.JoinGroup(context.Background(), "cli", "/127.0.0.1", joinReq("g", second.MemberID), func(r *kmsg.JoinGroupResponse) { pending <- r })

	c.ResignEpoch(p, 6) // stale: the group stays loaded, the join pending
	if code := heartbeat(t, c, "g", member, gen); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat after stale resignation %d, want REBALANCE_IN_PROGRESS", code)
	}
	select {
	case r := <-pending:
		t.Fatalf("join answered by a stale resignation: %+v", r)
	default:
	}

	topic.SetLocal(p, false) // leadership moved away
	c.ResignEpoch(p, 8)
	if r := wait(t, pending); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("pending join after resignation %d, want NOT_COORDINATOR", r.ErrorCode)
	}
	if code := heartbeat(t, c, "g", member, gen); code != kerr.NotCoordinator.Code {
		t.Fatalf("heartbeat after resignation %d", code)
	}

	// Led here again: the groups come back from the log.
	topic.SetLocal(p, true)
	c.Elected(p, 9)
	if off := offsetOf(fetchAll(t, c, "g"), "orders", 0); off != 42 {
		t.Fatalf("offset after re-election %d, want 42", off)
	}
}

// A load overtaken by a resignation is dropped: when the partition is led
// here again the groups are read again, with what was written meanwhile.
func TestResignDuringLoadDiscardsIt(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic)
	p := c.PartitionFor("g")
	if code := commit(t, c, "g", "", -1, "orders", 0, 1); code != 0 {
		t.Fatal(code)
	}
	topic.SetLocal(p, false)
	c.ResignEpoch(p, 1)
	topic.SetLocal(p, true)

	release := topic.HoldLoads()
	loadsBefore := topic.Loads(p)
	c.Elected(p, 2)
	deadline := time.Now().Add(10 * time.Second)
	for topic.Held() == 0 { // the load has read the partition
		if time.Now().After(deadline) {
			t.Fatal("load never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	queued := make(chan int16, 1)
	r := kmsg.NewPtrHeartbeatRequest()
	r.Version, r.Group, r.MemberID, r.Generation = 4, "g", "m", 1
	c.Heartbeat(context.Background(), r, func(resp *kmsg.HeartbeatResponse) { queued <- resp.ErrorCode })
	c.ResignEpoch(p, 3)
	if code := wait(t, queued); code != kerr.NotCoordinator.Code {
		t.Fatalf("request queued behind the load: %d, want NOT_COORDINATOR", code)
	}
	// Another coordinator commits while this one is not the leader.
	st := &partitionStore{topic: topic, partition: p, ctx: context.Background(), timeout: time.Second, now: time.Now}
	if _, err := st.Append(Batch{Records: []Record{{Key: OffsetKey("g", TopicPartition{"orders", 0}), Value: OffsetValue(OffsetAndMetadata{Offset: 99, LeaderEpoch: -1, CommitTime: time.Now()})}}}); err != nil {
		t.Fatal(err)
	}
	release()
	waitLoads(t, topic, p, loadsBefore+1) // the stale load finished
	c.Elected(p, 4)
	if off := offsetOf(fetchAll(t, c, "g"), "orders", 0); off != 99 {
		t.Fatalf("offset %d after re-election, want 99 (the stale load's 1 was used)", off)
	}
}

func TestDeleteTopicOffsets(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic)
	member, gen := joinAndSync(t, c, "g")
	for _, x := range []struct {
		topic string
		part  int32
		off   int64
	}{{"orders", 0, 10}, {"orders", 1, 11}, {"keep", 0, 12}} {
		if code := commit(t, c, "g", member, gen, x.topic, x.part, x.off); code != 0 {
			t.Fatalf("commit %d", code)
		}
	}
	if code := commit(t, c, "simple", "", -1, "orders", 0, 5); code != 0 {
		t.Fatal(code)
	}
	c.DeleteTopicOffsets([]string{"orders"})

	f := fetchAll(t, c, "g")
	if len(f.Topics) != 1 || f.Topics[0].Topic != "keep" || offsetOf(f, "keep", 0) != 12 {
		t.Fatalf("offsets of g after deleting orders: %+v", f.Topics)
	}
	if code := heartbeat(t, c, "g", member, gen); code != 0 {
		t.Fatalf("the member's group is untouched otherwise: heartbeat %d", code)
	}
	if f := fetchAll(t, c, "simple"); len(f.Topics) != 0 {
		t.Fatalf("simple group still has %+v", f.Topics)
	}
	dch, dreply := chanOf[*kmsg.DescribeGroupsResponse]()
	dr := kmsg.NewPtrDescribeGroupsRequest()
	dr.Version, dr.Groups = 5, []string{"simple"}
	c.DescribeGroups(context.Background(), dr, dreply)
	if d := wait(t, dch); d.Groups[0].State != "Dead" {
		t.Fatalf("simple group %s, want Dead (empty with no offsets)", d.Groups[0].State)
	}
	// Tombstones: g's two orders offsets; simple's offset and its metadata
	// (appended once the offsets left the cache).
	want := []string{"g/orders/0", "g/orders/1", "simple/orders/0", "simple/meta"}
	eventually(t, "tombstones of the deleted topic", func() (bool, string) {
		tomb := map[string]bool{}
		for _, p := range []int32{c.PartitionFor("g"), c.PartitionFor("simple")} {
			for _, r := range topic.Records(p) {
				if r.Value != nil {
					continue
				}
				k, err := DecodeKey(r.Key)
				if err != nil {
					t.Fatal(err)
				}
				if k.Kind == KeyGroup {
					tomb[k.Group+"/meta"] = true
				} else {
					tomb[k.Group+"/"+k.Topic+"/"+string(rune('0'+k.Partition))] = true
				}
			}
		}
		if len(tomb) != len(want) {
			return false, fmt.Sprintf("tombstones %v, want %v", tomb, want)
		}
		for _, w := range want {
			if !tomb[w] {
				return false, fmt.Sprintf("tombstones %v, want %v", tomb, want)
			}
		}
		return true, ""
	})
	c.Stop()

	// What a new coordinator loads agrees.
	c2 := startCoord(t, topic)
	if f := fetchAll(t, c2, "g"); len(f.Topics) != 1 || offsetOf(f, "keep", 0) != 12 {
		t.Fatalf("reloaded offsets of g: %+v", f.Topics)
	}
	if f := fetchAll(t, c2, "simple"); len(f.Topics) != 0 {
		t.Fatalf("reloaded simple group has %+v", f.Topics)
	}
}

// A deletion that arrives while the group's partition loads applies to the
// groups once loaded.
func TestDeleteTopicOffsetsDuringLoad(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic)
	p := c.PartitionFor("simple")
	if code := commit(t, c, "simple", "", -1, "orders", 0, 5); code != 0 {
		t.Fatal(code)
	}
	if code := commit(t, c, "simple", "", -1, "keep", 0, 6); code != 0 {
		t.Fatal(code)
	}
	c.Stop()

	c2 := startCoord(t, topic)
	release := topic.HoldLoads()
	defer release()
	c2.Elected(p, 1)
	// The router marked the partition loading when it handled Elected,
	// before the deletion: the deletion is kept for the load.
	c2.DeleteTopicOffsets([]string{"orders"})
	lch, lreply := chanOf[*kmsg.ListGroupsResponse]()
	c2.ListGroups(context.Background(), kmsg.NewPtrListGroupsRequest(), lreply) // waits for the load
	release()
	if l := wait(t, lch); len(l.Groups) != 1 {
		t.Fatalf("list %+v", l.Groups)
	}
	if f := fetchAll(t, c2, "simple"); len(f.Topics) != 1 || offsetOf(f, "keep", 0) != 6 {
		t.Fatalf("offsets after deletion during load: %+v", f.Topics)
	}
	// The offsets leave the cache first; the tombstones follow, appended
	// off the group actor (as Kafka's cleanupGroupMetadata).
	eventually(t, "the tombstone of simple/orders/0 last", func() (bool, string) {
		recs := topic.Records(p)
		last := recs[len(recs)-1]
		k, _ := DecodeKey(last.Key)
		return last.Value == nil && k.Kind == KeyOffset && k.Topic == "orders", fmt.Sprintf("last record %+v", k)
	})
}

package cluster

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/zkmeta"
	"gregor/storage/record"
	"gregor/test/chaos"
	"gregor/test/harness"
)

func controllerEpoch(t *testing.T, c *cluster) int32 {
	t.Helper()
	data, _, err := c.store.Get(zkmeta.ControllerEpochPath)
	if err != nil {
		t.Fatal(err)
	}
	e, err := zkmeta.DecodeControllerEpoch(data)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestControllerFailover kills the controller's broker with SIGKILL:
// another broker wins /controller within the session timeout plus a few
// seconds with a higher controller epoch, serves topic creation, reports
// itself (alone) in active_controller_count, and UpdateMetadata,
// LeaderAndIsr and StopReplica carrying the old epoch are refused with
// STALE_CONTROLLER_EPOCH.
func TestControllerFailover(t *testing.T) {
	c := startCluster(t, 3, nil, nil)
	c.createTopic("before", 3, 3, nil)
	old := c.controllerID()
	oldEpoch := controllerEpoch(t, c)
	c.brokers[old].Kill()
	killed := time.Now()
	c.waitFor("a new controller", sessionTimeout+10*time.Second, func() (bool, string) {
		id := c.controllerID()
		return id > 0 && id != old, fmt.Sprint(id)
	})
	t.Logf("controller %d → %d in %v", old, c.controllerID(), time.Since(killed).Round(time.Millisecond))
	if e := controllerEpoch(t, c); e <= oldEpoch {
		t.Fatalf("controller epoch %d after failover, was %d", e, oldEpoch)
	}
	c.waitFor("partitions led by live brokers", 20*time.Second, func() (bool, string) {
		for p := int32(0); p < 3; p++ {
			s, _ := c.partitionState("before", p)
			if s.Leader == old || s.Leader < 0 || contains(s.ISR, old) {
				return false, fmt.Sprintf("p%d %+v", p, s)
			}
		}
		return true, ""
	})
	c.createTopic("after", 2, 2, nil)

	// Only the new controller reports itself active.
	if id := c.waitActiveController(20 * time.Second); id == old {
		t.Fatalf("killed broker %d still named controller", old)
	}

	// A zombie controller's requests (old epoch) are refused by every live
	// broker, the new controller included, and change nothing.
	for id, b := range c.brokers {
		if id == old {
			continue
		}
		for api, code := range staleControllerRequests(t, b.Addr(), old, oldEpoch, "before") {
			if code != kerr.StaleControllerEpoch.Code {
				t.Errorf("broker %d: %s with controller epoch %d answered %s, want STALE_CONTROLLER_EPOCH (11)", id, api, oldEpoch, codeName(code))
			}
		}
		d, err := describe(t, b, "before")
		if err != nil || len(d.Partitions) != 3 {
			t.Fatalf("broker %d: metadata cache damaged by the stale requests: %v %v", id, d, err)
		}
	}
	for p := int32(0); p < 3; p++ {
		if l := c.waitServing("before", p, 10*time.Second); l == old {
			t.Errorf("before-%d led by the killed broker %d after the stale requests", p, old)
		}
	}
}

// staleControllerRequests sends broker addr an UpdateMetadata, a
// LeaderAndIsr (making the deposed controller ctrl leader of topic-0) and
// a StopReplica (of topic-0) as controller ctrl with controller epoch
// epoch, and returns each response's top-level error code by API name.
func staleControllerRequests(t *testing.T, addr string, ctrl, epoch int32, topic string) map[string]int16 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := map[string]int16{}

	um := kmsg.NewPtrUpdateMetadataRequest()
	um.ControllerID, um.ControllerEpoch = ctrl, epoch
	umr, err := um.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("UpdateMetadata to %s: %v", addr, err)
	}
	out["UpdateMetadata"] = umr.ErrorCode

	// Both layouts are filled: v0-1 encode PartitionStates, v2+ TopicStates.
	lai := kmsg.NewPtrLeaderAndISRRequest()
	lai.ControllerID, lai.ControllerEpoch, lai.BrokerEpoch = ctrl, epoch, -1
	ps := kmsg.NewLeaderAndISRRequestTopicPartition()
	ps.Topic, ps.Partition, ps.ControllerEpoch = topic, 0, epoch
	ps.Leader, ps.LeaderEpoch = ctrl, 0
	ps.ISR, ps.Replicas = []int32{ctrl}, []int32{1, 2, 3}
	lai.PartitionStates = append(lai.PartitionStates, ps)
	ts := kmsg.NewLeaderAndISRRequestTopicState()
	ts.Topic = topic
	ts.PartitionStates = append(ts.PartitionStates, ps)
	lai.TopicStates = append(lai.TopicStates, ts)
	lair, err := lai.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("LeaderAndIsr to %s: %v", addr, err)
	}
	out["LeaderAndIsr"] = lair.ErrorCode

	// v0-2 encode Partitions (v0 Partition), v3 PartitionStates.
	sr := kmsg.NewPtrStopReplicaRequest()
	sr.ControllerID, sr.ControllerEpoch, sr.BrokerEpoch = ctrl, epoch, -1
	st := kmsg.NewStopReplicaRequestTopic()
	st.Topic, st.Partition, st.Partitions = topic, 0, []int32{0}
	sps := kmsg.NewStopReplicaRequestTopicPartitionState()
	sps.Partition, sps.LeaderEpoch = 0, -1
	st.PartitionStates = append(st.PartitionStates, sps)
	sr.Topics = append(sr.Topics, st)
	srr, err := sr.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("StopReplica to %s: %v", addr, err)
	}
	out["StopReplica"] = srr.ErrorCode
	return out
}

// TestDuplicateBrokerIDRefused: a second broker with a registered
// broker.id exits with an error naming the conflict.
func TestDuplicateBrokerIDRefused(t *testing.T) {
	c := startCluster(t, 1, nil, nil)
	dir := t.TempDir()
	props := fmt.Sprintf("broker.id=1\nzookeeper.connect=%s\nlog.dirs=%s\nlisteners=PLAINTEXT://127.0.0.1:%d\n",
		c.connect, filepath.Join(dir, "data"), harness.FreePort(t))
	cfg := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(cfg, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, harness.Binary(t), "server", cfg).CombinedOutput()
	if err == nil {
		t.Fatalf("second broker.id=1 started:\n%s", out)
	}
	if !strings.Contains(string(out), "already registered") {
		t.Fatalf("error does not name the conflict:\n%s", out)
	}
	if ids := c.registered(); len(ids) != 1 || ids[0] != "1" {
		t.Fatalf("registrations changed: %v", ids)
	}
}

// TestSessionExpiryReregisters cuts a broker that is not the controller
// off from ZooKeeper (through its proxy; every broker has one, so whichever
// broker won the controller the test runs) for longer than its session
// timeout: its registration vanishes, it leaves the ISRs; when traffic
// resumes it registers again on a new session, rejoins the ISRs and serves
// clients.
func TestSessionExpiryReregisters(t *testing.T) {
	c := startCluster(t, 3, nil, []int32{1, 2, 3})
	c.createTopic("expiry", 3, 3, nil)
	ctrl := c.controllerID()
	var cut int32 = 1
	for cut == ctrl {
		cut++
	}
	name := strconv.Itoa(int(cut))
	t.Logf("controller %d; cutting broker %d off from ZooKeeper", ctrl, cut)
	c.proxies[cut].Pause()
	c.waitFor(fmt.Sprintf("/brokers/ids/%d to vanish (session expired)", cut), 3*sessionTimeout+10*time.Second, func() (bool, string) {
		return !slices.Contains(c.registered(), name), fmt.Sprint(c.registered())
	})
	c.waitFor(fmt.Sprintf("broker %d out of every ISR", cut), 30*time.Second, func() (bool, string) {
		for p := int32(0); p < 3; p++ {
			s, _ := c.partitionState("expiry", p)
			if contains(s.ISR, cut) || s.Leader == cut {
				return false, fmt.Sprintf("p%d %+v", p, s)
			}
		}
		return true, ""
	})
	if id := c.waitActiveController(10 * time.Second); id != ctrl {
		t.Fatalf("controller moved %d → %d while a follower was cut off", ctrl, id)
	}
	c.proxies[cut].Resume()
	c.waitFor(fmt.Sprintf("broker %d registered again", cut), 3*sessionTimeout+10*time.Second, func() (bool, string) {
		return slices.Contains(c.registered(), name), fmt.Sprint(c.registered())
	})
	c.waitFor(fmt.Sprintf("broker %d back in every ISR", cut), 60*time.Second, func() (bool, string) {
		for p := int32(0); p < 3; p++ {
			s, _ := c.partitionState("expiry", p)
			if !contains(s.ISR, cut) {
				return false, fmt.Sprintf("p%d %+v", p, s)
			}
		}
		return true, ""
	})
	prod := c.client(kgo.RequiredAcks(kgo.AllISRAcks()))
	produce(t, prod, "expiry", "x", 50)
	// Served by the broker that was cut off too.
	cl := c.client(kgo.SeedBrokers(c.brokers[cut].Addr()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "expiry", Value: []byte("through-" + name)}).FirstErr(); err != nil {
		t.Fatalf("produce through broker %d: %v", cut, err)
	}
}

// TestAcksAllFailover runs a continuous acks=all producer with
// min.insync.replicas=2 while the partition leader is killed: every
// acknowledged record is at its acknowledged offset on the new leader and
// then, after that one is killed too, on the remaining in-sync replica.
// Then both killed brokers come back, every ISR is full again (per
// ZooKeeper), and the chaos checker reads every replica's segment files:
// each acknowledged record at its offset on every replica, no offset below
// the high watermark holding two different records across replicas. The
// first leader's log gets, while it is down, one more batch of its own
// epoch that no follower ever fetched (what a leader killed between its
// append and the followers' fetch leaves behind): after its restart it
// must have truncated that suffix, and anything else the new leader did
// not have, and hold the leader's records there instead.
func TestAcksAllFailover(t *testing.T) {
	c := startCluster(t, 3, map[string]string{"min.insync.replicas": "2"}, nil)
	const topic = "acked"
	c.createTopic(topic, 1, 3, nil)
	prod := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(1000), kgo.RecordDeliveryTimeout(60*time.Second),
		kgo.ProducerLinger(0), kgo.MaxBufferedRecords(64))

	var mu sync.Mutex
	acked := map[int64]string{}
	var failed []error
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprintf("v-%d", i)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			r := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)})[0]
			cancel()
			mu.Lock()
			if r.Err != nil {
				failed = append(failed, r.Err)
			} else {
				if prev, dup := acked[r.Record.Offset]; dup {
					failed = append(failed, fmt.Errorf("offset %d acknowledged twice: %s and %s", r.Record.Offset, prev, v))
				}
				acked[r.Record.Offset] = v
			}
			mu.Unlock()
		}
	}()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	c.waitFor("acks before the kill", 30*time.Second, func() (bool, string) { return count() >= 200, fmt.Sprint(count()) })
	s, _ := c.partitionState(topic, 0)
	first := s.Leader
	c.brokers[first].Kill()
	t.Logf("killed leader %d after %d acks", first, count())
	firstDir := chaos.PartitionDir(c.brokers[first].DataDir, topic, 0)
	atKill := readReplica(t, firstDir)
	injected := appendUnreplicated(t, firstDir)
	before := count()
	c.waitFor("acks after the kill", 60*time.Second, func() (bool, string) { return count() >= before+200, fmt.Sprint(count()) })
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, err := range failed {
		t.Errorf("produce: %v", err)
	}
	verify := func(who string) {
		t.Helper()
		cl := c.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}), kgo.FetchMaxWait(300*time.Millisecond))
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		got := map[int64]string{}
		var maxAcked int64
		for o := range acked {
			if o > maxAcked {
				maxAcked = o
			}
		}
		for {
			if _, ok := got[maxAcked]; ok {
				break
			}
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("%s: read up to offset %d of %d", who, len(got), maxAcked)
			}
			fs.EachRecord(func(r *kgo.Record) { got[r.Offset] = string(r.Value) })
		}
		for o, v := range acked {
			if got[o] != v {
				t.Errorf("%s: offset %d holds %q, acknowledged %q", who, o, got[o], v)
			}
		}
	}
	s, _ = c.partitionState(topic, 0)
	second := s.Leader
	verify(fmt.Sprintf("new leader %d", second))
	if len(s.ISR) < 2 {
		t.Fatalf("ISR %v after the kill: the follower should have stayed in sync", s.ISR)
	}
	c.brokers[second].Kill()
	c.waitFor("the last in-sync replica to lead", 30*time.Second, func() (bool, string) {
		s, _ := c.partitionState(topic, 0)
		return s.Leader > 0 && s.Leader != first && s.Leader != second, fmt.Sprintf("%+v", s)
	})
	verify("last in-sync replica")
	t.Logf("%d records acknowledged, %d produce errors", len(acked), len(failed))

	// Both killed brokers back; every replica's log checked on disk.
	for _, id := range []int32{first, second} {
		c.waitUnregistered(id)
		c.brokers[id].Start()
	}
	c.waitFor("a full ISR", 60*time.Second, func() (bool, string) {
		s, _ := c.partitionState(topic, 0)
		return len(s.ISR) == 3, fmt.Sprintf("%+v", s)
	})
	var list []chaos.Acked
	for o, v := range acked {
		list = append(list, chaos.Acked{Partition: 0, Offset: o, Value: v})
	}
	leader, hw, logs := c.settledReplicas(topic, 0, 30*time.Second)
	res := chaos.CheckPartition(chaos.PartitionInput{Topic: topic, Partition: 0, HighWatermark: hw,
		Leader: leader, Replicas: logs, Acked: list})
	for _, d := range res.Details {
		t.Error(d)
	}
	if !res.OK() {
		t.Fatalf("replicas at high watermark %d (leader %d): %+v", hw, leader, res)
	}

	// The first leader's unreplicated suffix is gone: the injected batch
	// and every record the new leader did not have at the same offset.
	restarted, lead := logs[first], index(logs[leader])
	for id, l := range logs {
		for _, e := range l.Entries {
			if e.Value == injected.Value {
				t.Errorf("broker %d still holds the never-replicated record %q (offset %d)", id, e.Value, e.Offset)
			}
		}
	}
	if e, ok := index(restarted)[injected.Offset]; !ok || e != lead[injected.Offset] {
		t.Errorf("broker %d at offset %d (the injected record's): %+v, leader %d has %+v", first, injected.Offset, e, leader, lead[injected.Offset])
	}
	replaced := 0
	for _, e := range atKill.Entries {
		if lead[e.Offset] != e {
			replaced++
		}
	}
	t.Logf("leader %d at high watermark %d; broker %d's log end at its kill was %d, %d of its records (plus the injected one at %d) replaced by the leader's",
		leader, hw, first, atKill.LogEndOffset(), replaced, injected.Offset)
}

// readReplica reads a partition directory's segment files (test/chaos's
// reader), failing t on any undecodable batch.
func readReplica(t *testing.T, dir string) *chaos.ReplicaLog {
	t.Helper()
	l, err := chaos.ReadReplicaLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Problems) > 0 {
		t.Fatalf("%s: %v", dir, l.Problems)
	}
	return l
}

// index maps a replica log's offsets to their entries.
func index(l *chaos.ReplicaLog) map[int64]chaos.Entry {
	m := make(map[int64]chaos.Entry, len(l.Entries))
	for _, e := range l.Entries {
		m[e.Offset] = e
	}
	return m
}

// appendUnreplicated appends to the last segment of the stopped broker's
// partition directory dir one record batch at the log end offset, stamped
// with the epoch of the log's last batch: a record its leader appended and
// no follower fetched. A torn tail (SIGKILL mid-write) is cut first, as
// recovery would. It returns the record as the checker reads it.
func appendUnreplicated(t *testing.T, dir string) chaos.Entry {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(names) == 0 {
		t.Fatalf("segments of %s: %v %v", dir, names, err)
	}
	slices.Sort(names) // 20-digit zero-padded base offsets
	last := names[len(names)-1]
	data, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	pos, next, epoch := 0, int64(-1), int32(-1)
	for pos+record.HeaderSize <= len(data) {
		h, batch, err := record.ValidateIntegrity(data[pos:])
		if err != nil {
			break
		}
		pos, next, epoch = pos+len(batch), h.LastOffset()+1, h.PartitionLeaderEpoch
	}
	if next < 0 {
		t.Fatalf("%s: no complete batch in the last segment", last)
	}
	value := fmt.Sprintf("never-replicated-%d", next)
	batch, err := record.BuildBatch(record.BatchOptions{BaseOffset: next, PartitionLeaderEpoch: epoch, BaseTimestamp: time.Now().UnixMilli()},
		[]record.BatchRecord{{Value: []byte(value)}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(last, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(pos)); err == nil {
		_, err = f.WriteAt(batch, int64(pos))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	l := readReplica(t, dir)
	if e := l.Entries[len(l.Entries)-1]; e.Offset == next && e.Value == value {
		return e
	}
	t.Fatalf("%s: the appended batch does not read back at offset %d", dir, next)
	return chaos.Entry{}
}

// settledReplicas waits (at most d) until the leader of topic-p answers
// ListOffsets and every broker's log of the partition, read from its
// segment files, ends exactly at the leader's high watermark, and returns
// the leader, the high watermark and the logs by broker id.
func (c *cluster) settledReplicas(topic string, p int32, d time.Duration) (int32, int64, map[int32]*chaos.ReplicaLog) {
	c.t.Helper()
	var (
		leader int32
		hw     int64
		logs   map[int32]*chaos.ReplicaLog
	)
	c.waitFor(fmt.Sprintf("every replica of %s-%d at the high watermark", topic, p), d, func() (bool, string) {
		s, ok := c.partitionState(topic, p)
		b := c.brokers[s.Leader]
		if !ok || b == nil {
			return false, fmt.Sprintf("%+v", s)
		}
		o, code, err := tryEndOffset(b.Addr(), topic, p)
		if err != nil || code != 0 {
			return false, fmt.Sprintf("leader %d: %s %v", s.Leader, codeName(code), err)
		}
		leader, hw, logs = s.Leader, o, map[int32]*chaos.ReplicaLog{}
		var off []string
		for _, id := range sortedIDs(slices.Collect(maps.Keys(c.brokers))) {
			l, err := chaos.ReadReplicaLog(chaos.PartitionDir(c.brokers[id].DataDir, topic, p))
			if err != nil {
				return false, err.Error()
			}
			logs[id] = l
			if l.LogEndOffset() != hw {
				off = append(off, fmt.Sprintf("broker %d at %d", id, l.LogEndOffset()))
			}
		}
		return len(off) == 0, fmt.Sprintf("high watermark %d on leader %d; %s", hw, leader, strings.Join(off, ", "))
	})
	return leader, hw, logs
}

package chaos

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/zkharness"
)

// chaosDuration is how long faults are injected (make chaos DURATION=…).
// Zero means the CI length, ciDuration. GREGOR_CHAOS_DURATION works too.
var chaosDuration = flag.Duration("chaos.duration", 0, "how long TestChaos injects faults (0 = the short CI run)")

const (
	ciDuration = 60 * time.Second
	topic      = "chaos"
	partitions = int32(3)
	group      = "chaos-group"
	// produceEvery paces the producer (about 400 records/s).
	produceEvery = 2500 * time.Microsecond
	// healTimeout bounds every wait after the fault phase.
	healTimeout = 90 * time.Second
)

// actorKinds are the actor kinds the fault loop kills through POST /faults,
// with the most kills it allows per actor path within killWindow: the
// partition and group supervisors give up after 5 and 20 failures in 60 s
// (README "Supervision policy"), which would end the run's guarantees by
// design, not by a bug; fetchers and controller channels never give up;
// the controller actor gives up after 5 (then its broker resigns
// /controller and rejoins), kept within budget too.
var actorKinds = []struct {
	kind    string
	perPath int
}{
	{"partition", 2},
	{"fetcher", 1000},
	{"group", 8},
	{"controller-channel", 1000},
	{"controller", 3},
}

const killWindow = time.Minute

func duration(t *testing.T) time.Duration {
	if *chaosDuration > 0 {
		return *chaosDuration
	}
	if s := os.Getenv("GREGOR_CHAOS_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("GREGOR_CHAOS_DURATION: %v", err)
		}
		return d
	}
	return ciDuration
}

// TestChaos: faults against a producing and consuming 3-broker cluster,
// then proof that nothing acknowledged was lost, duplicated or diverged.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos starts ZooKeeper and three broker processes")
	}
	zkharness.SkipIfUnavailable(t)
	d := duration(t)
	c := startCluster(t, 3)
	two := "2"
	c.createTopic(topic, partitions, map[string]*string{"min.insync.replicas": &two})

	prodCl := c.client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MaxBufferedRecords(2000), kgo.ProduceRequestTimeout(10*time.Second))
	prod := startProducer(prodCl, topic, partitions, produceEvery)
	consCl := c.client(kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond), kgo.AutoCommitInterval(time.Second),
		kgo.SessionTimeout(10*time.Second), kgo.HeartbeatInterval(time.Second))
	cons := startConsumer(consCl)
	watch := startOffsetWatch(kadm.NewClient(c.client()), group, topic, 500*time.Millisecond)
	// On an early failure: stop the loops. The producer's may be blocked
	// in Produce on a full buffer; closing its client (an earlier cleanup,
	// so it runs after this one) releases it.
	t.Cleanup(func() { prod.halt(); cons.finish(); watch.finish() })

	// On failure keep every broker's log (the temp dirs go with the test)
	// and show the lines about the partitions that did not heal.
	t.Cleanup(func() { c.keepLogsOnFailure() })

	f := newFaulter(t, c)
	// Count the group's first rebalance before any broker can be killed: a
	// counter lives in the broker process, so a coordinator SIGKILLed before
	// the first scrape would take the increase with it.
	_, _ = poll(30*time.Second, func() (bool, string) { return cons.consumed.Load() > 0, "consumer has not received a record yet" })
	f.scrapeMetrics()
	start := time.Now()
	f.run(start.Add(d))
	t.Logf("fault phase over after %v: %s", time.Since(start).Round(time.Second), f.summary())

	// Heal: every broker up, producer flushed, full ISRs.
	f.restoreAll()
	flushed := prod.finish(healTimeout)
	offsetsTopic := map[string]int32{topic: partitions, "__consumer_offsets": 3}
	_, isrOK := poll(healTimeout, func() (bool, string) { return c.fullISR(offsetsTopic) })

	hws := highWatermarks(t, c)
	// Let the consumer commit up to the high watermarks (it should), then stop it.
	_, caughtUp := poll(30*time.Second, func() (bool, string) {
		got := watch.committed()
		for p, hw := range hws {
			if got[p] < hw {
				return false, fmt.Sprint(got)
			}
		}
		return true, ""
	})
	cons.finish()
	watch.finish()
	f.scrapeMetrics()

	acked, failed, lastErr := prod.results()
	res := check(t, c, hws, acked)
	if !isrOK {
		_, why := c.fullISR(offsetsTopic)
		res.note("not back to full ISR: %s", why)
	}
	watch.mu.Lock()
	backwards, offNotes, polls := watch.backwards, watch.notes, watch.polls
	watch.mu.Unlock()
	// A committed offset past the high watermark means the consumer read
	// records that were not committed to the log (they could vanish).
	beyond := 0
	for p, o := range watch.committed() {
		if o > hws[p] {
			beyond++
			offNotes = append(offNotes, fmt.Sprintf("partition %d: committed offset %d beyond the high watermark %d", p, o, hws[p]))
		}
	}

	t.Logf("chaos summary: duration=%v faults{%s} acknowledged=%d failed=%d consumed=%d lost=%d duplicated=%d divergent=%d gaps=%d corrupt=%d offsets-backwards=%d offsets-beyond-hw=%d full-isr=%v elections=%v rebalances=%v",
		d, f.summary(), len(acked), failed, cons.consumed.Load(), res.Lost, res.Duplicated, res.Divergent, res.Gaps, res.Corrupt,
		backwards, beyond, isrOK, f.elections, f.rebalances)
	for _, n := range append(res.Details, offNotes...) {
		t.Log("  " + n)
	}
	if failed > 0 {
		t.Logf("last produce failure (not acknowledged, so not a loss): %v", lastErr)
	}
	if !flushed {
		t.Log("producer did not flush within the heal timeout (unflushed records are not acknowledged)")
	}
	if !caughtUp {
		t.Logf("consumer group did not commit up to the high watermarks %v within 30 s (last seen %v)", hws, watch.committed())
	}

	if !res.OK() || backwards > 0 || beyond > 0 || !isrOK {
		t.Errorf("chaos run broke a guarantee (see the summary above)")
	}
	if len(acked) == 0 || polls == 0 {
		t.Errorf("nothing acknowledged (%d) or no committed offsets read (%d polls): the run proved nothing", len(acked), polls)
	}
	if cons.foreign.Load() > 0 {
		t.Errorf("consumer read %d records from the wrong partition", cons.foreign.Load())
	}
	if f.counts["broker-kill"] > 0 && f.elections == 0 {
		t.Errorf("brokers were killed but kafka_controller_controllerstats_leader_elections_total never moved")
	}
	if f.rebalances == 0 {
		t.Errorf("a group joined but kafka_coordinator_group_rebalances_total never moved")
	}
}

// highWatermarks reads each partition's high watermark from its leader.
func highWatermarks(t *testing.T, c *cluster) map[int32]int64 {
	t.Helper()
	cl := c.client()
	adm := kadm.NewClient(cl)
	var out map[int32]int64
	c.waitFor("high watermarks", healTimeout, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		lo, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return false, err.Error()
		}
		out = map[int32]int64{}
		for p := int32(0); p < partitions; p++ {
			o, ok := lo.Lookup(topic, p)
			if !ok || o.Err != nil {
				return false, fmt.Sprintf("partition %d: %v", p, o.Err)
			}
			out[p] = o.Offset
		}
		return true, ""
	})
	return out
}

// check reads every replica's log from the brokers' log dirs (waiting,
// bounded, until each has caught up to the high watermark) and runs the
// checker on every partition.
func check(t *testing.T, c *cluster, hws map[int32]int64, acked []Acked) Result {
	t.Helper()
	byPart := map[int32][]Acked{}
	for _, a := range acked {
		byPart[a.Partition] = append(byPart[a.Partition], a)
	}
	var total Result
	for p := int32(0); p < partitions; p++ {
		st, ok := c.partitionState(topic, p)
		if !ok {
			total.note("%s-%d: no partition state in ZooKeeper", topic, p)
			total.Lost += len(byPart[p])
			continue
		}
		var logs map[int32]*ReplicaLog
		read := func() (bool, string) {
			logs = map[int32]*ReplicaLog{}
			var behind []string
			for _, id := range c.ids() {
				l, err := ReadReplicaLog(PartitionDir(c.nodes[id].DataDir, topic, p))
				if err != nil {
					return false, err.Error()
				}
				logs[id] = l
				if l.LogEndOffset() < hws[p] {
					behind = append(behind, fmt.Sprintf("broker %d at %d", id, l.LogEndOffset()))
				}
			}
			return len(behind) == 0, strings.Join(behind, ", ")
		}
		if why, ok := poll(30*time.Second, read); !ok {
			t.Logf("%s-%d: replicas behind the high watermark %d: %s", topic, p, hws[p], why)
		}
		total.Add(CheckPartition(PartitionInput{Topic: topic, Partition: p, HighWatermark: hws[p],
			Leader: st.Leader, Replicas: logs, Acked: byPart[p]}))
	}
	return total
}

// faulter injects the faults: actor kills through each broker's admin
// listener, and SIGKILL + restart of one broker at a time.
type faulter struct {
	t      *testing.T
	c      *cluster
	counts map[string]int
	kills  map[string][]time.Time // actor path (with broker) → recent kills
	// down is the SIGKILLed broker awaiting restart (0 = none); restartAt
	// is the earliest time to restart it.
	down      int32
	restartAt time.Time
	nextKill  time.Time
	// elections and rebalances sum the increases of those counters over
	// every broker incarnation (a restart resets a broker's counters).
	elections, rebalances float64
	lastMetric            map[string]float64
	nextScrape            time.Time
	bursts                []*burst
}

func newFaulter(t *testing.T, c *cluster) *faulter {
	return &faulter{t: t, c: c, counts: map[string]int{}, kills: map[string][]time.Time{},
		lastMetric: map[string]float64{}, nextKill: time.Now().Add(5 * time.Second)}
}

// burstKills is how many kills in a row a burst sends one actor: more
// than protoactor's default budget (10 within 10 s) and than any budget a
// supervisor that gives up would allow.
const burstKills = 12

// burst is one actor killed burstKills times at once, to prove its
// supervisor never gives up: it must come back with that many restarts.
type burst struct {
	broker   int32
	path     string
	kind     string
	start    int64 // restarts before the burst
	verified bool
}

// startBursts sends a burst to one fetcher and one controller channel.
// Broker kills wait until both are verified: a broker kill moves leaders
// and peers, which legitimately stops fetchers and channels.
func (f *faulter) startBursts() {
	for _, kind := range []string{"fetcher", "controller-channel"} {
		for _, id := range f.c.ids() {
			as := f.c.actors(id, kind)
			if len(as) == 0 {
				continue
			}
			a := as[rand.IntN(len(as))]
			if ok, err := f.c.kill(id, a.Path, burstKills); !ok || err != nil {
				f.t.Logf("burst on %s of broker %d not injected: %v", a.Path, id, err)
				break
			}
			f.counts[kind] += burstKills
			f.bursts = append(f.bursts, &burst{broker: id, path: a.Path, kind: kind, start: a.Restarts})
			f.t.Logf("%s: %d kills in a row of %s on broker %d", time.Now().Format("15:04:05.000"), burstKills, a.Path, id)
			break
		}
	}
}

// checkBursts marks bursts whose actor is back with every restart counted;
// it reports whether all are verified.
func (f *faulter) checkBursts() bool {
	all := true
	for _, b := range f.bursts {
		if b.verified {
			continue
		}
		for _, a := range f.c.actors(b.broker, b.kind) {
			if a.Path == b.path && a.Restarts-b.start >= burstKills {
				b.verified = true
				f.t.Logf("%s: %s on broker %d restarted %d times and lives", time.Now().Format("15:04:05.000"), b.path, b.broker, a.Restarts-b.start)
			}
		}
		all = all && b.verified
	}
	return all
}

// finishBursts waits (bounded by the largest total backoff) for bursts not
// yet verified, and fails the test for any whose actor was given up on.
func (f *faulter) finishBursts() {
	if _, ok := poll(45*time.Second, func() (bool, string) { return f.checkBursts(), "" }); ok {
		return
	}
	for _, b := range f.bursts {
		if !b.verified {
			f.t.Errorf("%s (%s) on broker %d did not come back from %d kills in a row: its supervisor gave up", b.path, b.kind, b.broker, burstKills)
		}
	}
}

// run injects faults until the deadline; every wait inside is bounded.
func (f *faulter) run(deadline time.Time) {
	f.startBursts()
	defer f.finishBursts()
	for time.Now().Before(deadline) {
		// Pacing between faults, not synchronisation.
		time.Sleep(time.Duration(200+rand.IntN(600)) * time.Millisecond)
		if time.Now().After(f.nextScrape) {
			f.scrapeMetrics()
			f.nextScrape = time.Now().Add(3 * time.Second)
		}
		switch {
		case f.down != 0:
			if time.Now().After(f.restartAt) && !f.c.isRegistered(f.down) {
				f.restart()
				continue
			}
		case time.Now().After(f.nextKill) && f.checkBursts():
			if ok, _ := f.c.fullISR(map[string]int32{topic: partitions, "__consumer_offsets": 3}); ok {
				f.killBroker()
				continue
			}
		}
		f.killActor()
	}
}

func (f *faulter) killBroker() {
	ids := f.c.ids()
	id := ids[rand.IntN(len(ids))]
	f.c.nodes[id].Kill()
	f.counts["broker-kill"]++
	f.down = id
	f.restartAt = time.Now().Add(time.Duration(500+rand.IntN(2500)) * time.Millisecond)
	f.t.Logf("%s: SIGKILL broker %d", time.Now().Format("15:04:05.000"), id)
}

// restart starts the killed broker again (after ZooKeeper dropped its
// registration: a live /brokers/ids/<id> would refuse it).
func (f *faulter) restart() {
	id := f.down
	f.c.nodes[id].Start()
	f.down = 0
	for k := range f.lastMetric {
		if strings.HasPrefix(k, fmt.Sprintf("%d/", id)) {
			delete(f.lastMetric, k) // a new incarnation counts from 0
		}
	}
	f.nextKill = time.Now().Add(time.Duration(5000+rand.IntN(5000)) * time.Millisecond)
	f.t.Logf("%s: restarted broker %d", time.Now().Format("15:04:05.000"), id)
}

// restoreAll brings a killed broker back (bounded by the session timeout).
func (f *faulter) restoreAll() {
	if f.down == 0 {
		return
	}
	f.c.waitFor(fmt.Sprintf("broker %d's registration to expire", f.down), 3*sessionTimeout+10*time.Second,
		func() (bool, string) { return !f.c.isRegistered(f.down), "" })
	f.restart()
}

// killActor kills one random actor of a random kind on a random running
// broker, within the per-path budget.
func (f *faulter) killActor() {
	k := actorKinds[rand.IntN(len(actorKinds))]
	var cands []string // "<broker>/<path>"
	now := time.Now()
	for _, id := range f.c.ids() {
		if !f.c.up(id) {
			continue
		}
		for _, a := range f.c.actors(id, k.kind) {
			key := fmt.Sprintf("%d/%s", id, a.Path)
			if f.recentKills(key, now) < k.perPath {
				cands = append(cands, key)
			}
		}
	}
	if len(cands) == 0 {
		return
	}
	key := cands[rand.IntN(len(cands))]
	var id int32
	var path string
	fmt.Sscanf(key[:strings.IndexByte(key, '/')], "%d", &id)
	path = key[strings.IndexByte(key, '/')+1:]
	ok, err := f.c.kill(id, path, 1)
	if err != nil {
		// An admin request that failed (a slow broker under -race) is a
		// fault not injected, not a broken guarantee.
		f.t.Logf("inject: %v", err)
		f.counts["inject-failed"]++
		return
	}
	if ok {
		f.counts[k.kind]++
		f.kills[key] = append(f.kills[key], now)
	}
}

func (f *faulter) recentKills(key string, now time.Time) int {
	kept := f.kills[key][:0]
	for _, at := range f.kills[key] {
		if now.Sub(at) < killWindow {
			kept = append(kept, at)
		}
	}
	f.kills[key] = kept
	return len(kept)
}

// scrapeMetrics adds the increases of the election and rebalance counters
// of every running broker since the last scrape.
func (f *faulter) scrapeMetrics() {
	for _, id := range f.c.ids() {
		if !f.c.up(id) {
			continue
		}
		for _, m := range []struct {
			name string
			sum  *float64
		}{
			{"kafka_controller_controllerstats_leader_elections_total", &f.elections},
			{"kafka_coordinator_group_rebalances_total", &f.rebalances},
		} {
			v, ok := f.c.metric(id, m.name)
			if !ok {
				continue
			}
			key := fmt.Sprintf("%d/%s", id, m.name)
			switch last := f.lastMetric[key]; {
			case v > last:
				*m.sum += v - last
			case v < last: // the broker restarted: its counter began again at 0
				*m.sum += v
			}
			f.lastMetric[key] = v
		}
	}
}

// summary is "kind=count" for every fault kind, sorted (plus
// inject-failed: admin requests that did not get an answer).
func (f *faulter) summary() string {
	kinds := []string{"broker-kill"}
	for _, k := range actorKinds {
		kinds = append(kinds, k.kind)
	}
	if f.counts["inject-failed"] > 0 {
		kinds = append(kinds, "inject-failed")
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s=%d", k, f.counts[k]))
	}
	return strings.Join(parts, " ")
}

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

	"gregor/actors/coordinator"
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

	// The transactional pipeline: GroupTransactSession copies the chaos
	// topic to eosOut in group eosGroup as transactional id eosTxnID.
	eosOut   = "chaos-eos-out"
	eosGroup = "chaos-eos-group"
	eosTxnID = "chaos-eos"
	// txnStatePartitions is the cluster's
	// transaction.state.log.num.partitions (Kafka's 50 would add 150
	// replicas to a 3-broker test).
	txnStatePartitions = int32(3)
)

// healTopics are the topics (with their partition counts) that must be
// back to a full ISR before a broker is killed and after the fault phase.
var healTopics = map[string]int32{topic: partitions, eosOut: partitions, "__consumer_offsets": 3, "__transaction_state": txnStatePartitions}

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
	// Transaction coordinator actors (one per loaded __transaction_state
	// partition) give up after 20 failures in 60 s; the manager never.
	{"txn", 8},
	{"txn-coordinator", 1000},
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

// TestChaos: faults against a producing and consuming 3-broker cluster
// with a transactional consume-transform-produce pipeline alongside, then
// proof that nothing acknowledged was lost, duplicated or diverged, and
// that the pipeline's read_committed output holds every input exactly
// once.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos starts ZooKeeper and three broker processes")
	}
	zkharness.SkipIfUnavailable(t)
	d := duration(t)
	t.Logf("%s: starting", time.Now().Format("15:04:05.000"))
	c := startCluster(t, 3)
	two := "2"
	c.createTopic(topic, partitions, map[string]*string{"min.insync.replicas": &two})
	c.createTopic(eosOut, partitions, map[string]*string{"min.insync.replicas": &two})

	prodCl := c.client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MaxBufferedRecords(2000), kgo.ProduceRequestTimeout(10*time.Second))
	prod := startProducer(prodCl, topic, partitions, produceEvery)
	consCl := c.client(kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond), kgo.AutoCommitInterval(time.Second),
		kgo.SessionTimeout(10*time.Second), kgo.HeartbeatInterval(time.Second))
	cons := startConsumer(consCl)
	watch := startOffsetWatch(kadm.NewClient(c.client()), group, topic, 500*time.Millisecond)
	pipe := startPipeline([]kgo.Opt{c.seedOpt(), kgo.TransactionalID(eosTxnID), kgo.TransactionTimeout(20 * time.Second),
		kgo.ConsumerGroup(eosGroup), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.RequireStableFetchOffsets(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.FetchMaxWait(500 * time.Millisecond),
		kgo.SessionTimeout(10 * time.Second), kgo.HeartbeatInterval(time.Second), kgo.ProduceRequestTimeout(10 * time.Second)}, eosOut)
	eosWatch := startOffsetWatch(kadm.NewClient(c.client()), eosGroup, topic, 500*time.Millisecond)
	// On an early failure: stop the loops. The producer's may be blocked
	// in Produce on a full buffer; closing its client (an earlier cleanup,
	// so it runs after this one) releases it.
	t.Cleanup(func() { prod.halt(); cons.finish(); watch.finish(); pipe.finish(); eosWatch.finish() })

	// On failure keep every broker's log (the temp dirs go with the test)
	// and show the lines about the partitions that did not heal.
	t.Cleanup(func() { c.keepLogsOnFailure() })

	f := newFaulter(t, c)
	// Count the group's first rebalance before any broker can be killed: a
	// counter lives in the broker process, so a coordinator SIGKILLed before
	// the first scrape would take the increase with it.
	_, _ = poll(30*time.Second, func() (bool, string) { return cons.consumed.Load() > 0, "consumer has not received a record yet" })
	// The pipeline's first commit creates __transaction_state; broker
	// kills wait for its full ISR like the other topics'.
	if why, ok := poll(60*time.Second, func() (bool, string) { return pipe.commits.Load() > 0, fmt.Sprint(pipe.err()) }); !ok {
		t.Fatalf("the transactional pipeline committed nothing in 60 s (last error: %s)", why)
	}
	t.Logf("%s: consumer and pipeline running", time.Now().Format("15:04:05.000"))
	f.scrapeMetrics()
	start := time.Now()
	f.run(start.Add(d))
	t.Logf("fault phase over after %v: %s", time.Since(start).Round(time.Second), f.summary())

	// Heal: every broker up, producer flushed, full ISRs.
	f.restoreAll()
	flushed := prod.finish(healTimeout)
	_, isrOK := poll(healTimeout, func() (bool, string) { return c.fullISR(healTopics) })

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
	// The pipeline commits its group's offsets in its transactions: once
	// they reach the high watermarks every input is in a committed
	// transaction.
	_, eosCaughtUp := poll(healTimeout, func() (bool, string) { return caughtUpTo(eosWatch.committed(), hws) })
	pipe.finish()
	eosWatch.finish()
	f.scrapeMetrics()

	acked, failed, lastErr := prod.results()
	res, inLogs := check(t, c, topic, hws, acked, false)
	if !isrOK {
		_, why := c.fullISR(healTopics)
		res.note("not back to full ISR: %s", why)
	}
	t.Logf("%s: healed, logs checked", time.Now().Format("15:04:05.000"))
	eos, eosLogs, outHWs, lsoOK := checkPipeline(t, c, inLogs, hws)
	t.Logf("%s: pipeline output checked", time.Now().Format("15:04:05.000"))
	res.Add(eosLogs)
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

	eosWatch.mu.Lock()
	eosBackwards, eosNotes := eosWatch.backwards, eosWatch.notes
	eosWatch.mu.Unlock()
	for p, o := range eosWatch.committed() {
		if o > hws[p] { // the pipeline read input records that were not committed
			eosBackwards++
			eosNotes = append(eosNotes, fmt.Sprintf("pipeline partition %d: committed offset %d beyond the input high watermark %d", p, o, hws[p]))
		}
	}

	t.Logf("chaos summary: duration=%v faults{%s} acknowledged=%d failed=%d consumed=%d lost=%d duplicated=%d divergent=%d gaps=%d corrupt=%d offsets-backwards=%d offsets-beyond-hw=%d full-isr=%v elections=%v rebalances=%v "+
		"eos{inputs=%d committed=%d lost=%d duplicated=%d unexpected=%d open=%d fetch-mismatch=%d aborted-records=%d markers=%d/%d txns=%d/%d failed-ends=%d sessions=%d poll-errors=%d offsets-backwards-or-beyond-hw=%d lso-stable=%v}",
		d, f.summary(), len(acked), failed, cons.consumed.Load(), res.Lost, res.Duplicated, res.Divergent, res.Gaps, res.Corrupt,
		backwards, beyond, isrOK, f.elections, f.rebalances,
		eos.Inputs, eos.Committed, eos.Lost, eos.Duplicated, eos.Unexpected, eos.Open, eos.FetchMismatch, eos.Aborted,
		eos.Commits, eos.Aborts, pipe.commits.Load(), pipe.aborts.Load(), pipe.failedEnds.Load(), pipe.sessions.Load(), pipe.pollErrors.Load(), eosBackwards, lsoOK)
	for _, n := range append(append(res.Details, offNotes...), append(eos.Details, eosNotes...)...) {
		t.Log("  " + n)
	}
	if err := pipe.err(); err != nil {
		t.Logf("pipeline's last error (its transaction aborted or its session restarted, not a broken guarantee): %v", err)
	}
	if !eosCaughtUp {
		t.Logf("pipeline did not commit its group's offsets up to the high watermarks %v within %v (last seen %v, out topic high watermarks %v)",
			hws, healTimeout, eosWatch.committed(), outHWs)
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
	if !eos.OK() || eosBackwards > 0 || !lsoOK || !eosCaughtUp {
		t.Errorf("the transactional pipeline's output is not exactly its input once, or its transactions did not all complete (see the summary above)")
	}
	if pipe.commits.Load() == 0 || eos.Aborted == 0 || eos.Inputs == 0 {
		t.Errorf("the pipeline committed %d transactions and left %d aborted records over %d inputs: the exactly-once check proved nothing",
			pipe.commits.Load(), eos.Aborted, eos.Inputs)
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

// highWatermarks reads each partition's high watermark of the chaos
// topic from its leader.
func highWatermarks(t *testing.T, c *cluster) map[int32]int64 {
	t.Helper()
	return endOffsets(t, c, topic, false)
}

// endOffsets reads each partition's high watermark (committed: its last
// stable offset) of topic from its leader.
func endOffsets(t *testing.T, c *cluster, topic string, committed bool) map[int32]int64 {
	t.Helper()
	cl := c.client()
	adm := kadm.NewClient(cl)
	list := adm.ListEndOffsets
	if committed {
		list = adm.ListCommittedOffsets
	}
	var out map[int32]int64
	c.waitFor("end offsets of "+topic, healTimeout, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		lo, err := list(ctx, topic)
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

// check reads every replica's log of topic from the brokers' log dirs
// (waiting, bounded, until each has caught up to the high watermark) and
// runs the checker on every partition; it also returns each partition's
// leader log.
func check(t *testing.T, c *cluster, topic string, hws map[int32]int64, acked []Acked, transactional bool) (Result, map[int32]*ReplicaLog) {
	t.Helper()
	leaders := map[int32]*ReplicaLog{}
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
			Leader: st.Leader, Replicas: logs, Acked: byPart[p], Transactional: transactional}))
		leaders[p] = logs[st.Leader]
	}
	return total, leaders
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
			if ok, _ := f.c.fullISR(healTopics); ok {
				f.killBroker()
				continue
			}
		}
		f.killActor()
	}
}

// killBroker SIGKILLs a random broker, or, every other time, the leader
// of the pipeline's __transaction_state partition: its transaction
// coordinator, with whatever transaction is open.
func (f *faulter) killBroker() {
	ids := f.c.ids()
	id := ids[rand.IntN(len(ids))]
	what := ""
	if f.counts["broker-kill"]%2 == 1 {
		if st, ok := f.c.partitionState("__transaction_state", coordinator.PartitionFor(eosTxnID, txnStatePartitions)); ok && st.Leader > 0 {
			id, what = st.Leader, " (the pipeline's transaction coordinator)"
			f.counts["coordinator-broker-kill"]++
		}
	}
	f.c.nodes[id].Kill()
	f.counts["broker-kill"]++
	f.down = id
	f.restartAt = time.Now().Add(time.Duration(500+rand.IntN(2500)) * time.Millisecond)
	f.t.Logf("%s: SIGKILL broker %d%s", time.Now().Format("15:04:05.000"), id, what)
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
	kinds := []string{"broker-kill", "coordinator-broker-kill"}
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

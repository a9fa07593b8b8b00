package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Transaction scenarios shared by the single-node tier (test/integration)
// and the ZooKeeper cluster tier (test/cluster): the same client code runs
// against one broker and against three, so the two tiers prove the same
// properties.

// ProduceInputs writes n records "0".."n-1" (keys k<i%7>) to topic
// through the brokers at seeds, without transactions, acks=all; t fails
// after 30 s.
func ProduceInputs(t testing.TB, seeds []string, topic string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rs := make([]*kgo.Record, n)
	for i := range rs {
		rs[i] = &kgo.Record{Key: []byte("k" + strconv.Itoa(i%7)), Value: []byte(strconv.Itoa(i))}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce inputs: %v", err)
	}
}

// ReadValues reads every partition of topic from the start through the
// brokers at seeds, read_committed when committed is set (else
// read_uncommitted), until it has seen want records or timeout passes, and
// returns the values in the order received. Fetch errors are retried by
// the client and logged.
func ReadValues(t testing.TB, seeds []string, topic string, committed bool, want int, timeout time.Duration) []string {
	t.Helper()
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(iso), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out []string
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fs.EachError(func(tp string, p int32, err error) { t.Logf("fetch %s-%d (retried): %v", tp, p, err) })
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	return out
}

// Pipeline describes a consume-transform-produce run of franz-go's
// GroupTransactSession: it reads In (read_committed, group Group, from
// the start) and writes "out-<value>" to Out in transactions of up to
// Batch records under transactional id TxnID, aborting every AbortEvery-th
// transaction (after flushing its records, so the log holds them).
type Pipeline struct {
	Seeds      []string
	TxnID      string
	Group      string
	In, Out    string
	N          int           // inputs in In ("0".."N-1", see ProduceInputs)
	Batch      int           // records polled per transaction (default 40)
	AbortEvery int           // every AbortEvery-th transaction aborts (default 3; 0 keeps the default)
	Timeout    time.Duration // bound of the whole run (default 90 s)

	// AfterCommit, when set, is called (from Run's goroutine) after each
	// committed transaction with the input records committed so far: a
	// test injects its faults there.
	AfterCommit func(committed int)
	// Faults makes Run survive failures, as an application restarting
	// would: an error from polling, beginning or ending a transaction is
	// logged, the session closed and a new one started with the same
	// transactional id and group (its InitProducerId fences the old
	// one). Run then ends once the group's committed offsets reach the
	// end of In, since a commit whose answer was lost is not counted.
	// Without it any error fails t.
	Faults bool
}

// Run drives the pipeline until every input record was committed (at most
// 5·N/Batch+50 transactions) and returns how many input records it saw
// committed and how many non-empty transactions it aborted.
func (p Pipeline) Run(t testing.TB) (committed, aborted int) {
	t.Helper()
	if p.Batch <= 0 {
		p.Batch = 40
	}
	if p.AbortEvery <= 0 {
		p.AbortEvery = 3
	}
	if p.Timeout <= 0 {
		p.Timeout = 90 * time.Second
	}
	newSession := func() *kgo.GroupTransactSession {
		sess, err := kgo.NewGroupTransactSession(
			kgo.SeedBrokers(p.Seeds...),
			kgo.TransactionalID(p.TxnID),
			kgo.TransactionTimeout(20*time.Second),
			kgo.ConsumerGroup(p.Group),
			kgo.ConsumeTopics(p.In),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.DefaultProduceTopic(p.Out),
			kgo.RequireStableFetchOffsets(),
			kgo.RetryBackoffFn(func(int) time.Duration { return 250 * time.Millisecond }),
		)
		if err != nil {
			t.Fatal(err)
		}
		return sess
	}
	sess := newSession()
	defer func() { sess.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), p.Timeout)
	defer cancel()
	failed := func(what string, err error) {
		t.Helper()
		if !p.Faults {
			t.Fatalf("%s: %v", what, err)
		}
		t.Logf("%s: %v; restarting the session", what, err)
		sess.Close()
		sess = newSession()
	}
	maxTxns := 5*p.N/p.Batch + 50
	for txn := 0; txn < maxTxns; txn++ {
		if !p.Faults && committed >= p.N {
			break
		}
		pctx, pcancel := ctx, context.CancelFunc(func() {})
		if p.Faults {
			pctx, pcancel = context.WithTimeout(ctx, 2*time.Second)
		}
		fs := sess.PollRecords(pctx, p.Batch)
		pcancel()
		if ctx.Err() != nil {
			t.Fatalf("pipeline timed out after %d committed records (%d aborted transactions)", committed, aborted)
		}
		if errs := fs.Errors(); len(errs) > 0 && !(p.Faults && pctx.Err() != nil && fs.NumRecords() == 0) {
			failed("poll", errs[0].Err)
			continue
		}
		if p.Faults && fs.NumRecords() == 0 && p.allCommitted(ctx) {
			break
		}
		if err := sess.Begin(); err != nil {
			failed("begin", err)
			continue
		}
		abort := txn%p.AbortEvery == p.AbortEvery-1
		count := 0
		fs.EachRecord(func(r *kgo.Record) {
			count++
			sess.Produce(ctx, &kgo.Record{Key: r.Key, Value: append([]byte("out-"), r.Value...)}, func(_ *kgo.Record, err error) {
				if err != nil && !abort && !p.Faults {
					t.Errorf("produce: %v", err)
				}
			})
		})
		abort = abort && count > 0
		how := kgo.TryCommit
		if abort {
			// The attempt's records reach the log before the abort, so a
			// read_uncommitted reader sees them.
			if err := sess.Client().Flush(ctx); err != nil {
				t.Fatalf("flush: %v", err)
			}
			how = kgo.TryAbort
		}
		ok, err := sess.End(ctx, how)
		if err != nil {
			failed(fmt.Sprintf("end transaction %d (abort=%v)", txn, abort), err)
			continue
		}
		switch {
		case abort:
			aborted++
		case ok:
			committed += count
			if p.AfterCommit != nil {
				p.AfterCommit(committed)
			}
		}
	}
	return committed, aborted
}

// allCommitted reports whether the group's committed offsets of every
// partition of In are at its end (read_committed: the inputs are not
// transactional, so that is the high watermark).
func (p Pipeline) allCommitted(ctx context.Context) bool {
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Seeds...))
	if err != nil {
		return false
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, p.In)
	if err != nil || ends.Error() != nil {
		return false
	}
	got, err := adm.FetchOffsets(ctx, p.Group)
	if err != nil || got.Error() != nil {
		return false
	}
	all := true
	ends.Each(func(o kadm.ListedOffset) {
		c, ok := got.Lookup(p.In, o.Partition)
		if !ok || c.At < o.Offset {
			all = false
		}
	})
	return all
}

// CheckOutput fails t unless the read_committed output of the pipeline
// holds every input exactly once and nothing else, and the
// read_uncommitted output holds more (the aborted attempts' records).
func (p Pipeline) CheckOutput(t testing.TB) {
	t.Helper()
	got := ReadValues(t, p.Seeds, p.Out, true, p.N, 30*time.Second)
	seen := map[string]int{}
	for _, v := range got {
		seen[v]++
	}
	for i := 0; i < p.N; i++ {
		if c := seen["out-"+strconv.Itoa(i)]; c != 1 {
			t.Errorf("input %d appears %d times in the read_committed output, want exactly once", i, c)
		}
	}
	if len(got) != p.N {
		t.Fatalf("read_committed output has %d records, want %d", len(got), p.N)
	}
	all := ReadValues(t, p.Seeds, p.Out, false, p.N+1, 10*time.Second)
	if len(all) <= p.N {
		t.Fatalf("read_uncommitted output has %d records, want more than %d (the aborted attempts)", len(all), p.N)
	}
}

// confluentTxnScript drives librdkafka's transactional producer through
// confluent-kafka-python: argv is bootstrap servers, topic, transactional
// id. It commits 50 records, aborts 20 (flushed first, so they are in the
// log), commits one more ("last"), then counts what a read_committed and a
// read_uncommitted consumer see.
const confluentTxnScript = `
import sys
from confluent_kafka import Producer, Consumer
addr, topic, tid = sys.argv[1], sys.argv[2], sys.argv[3]
p = Producer({'bootstrap.servers': addr, 'transactional.id': tid, 'transaction.timeout.ms': 20000})
p.init_transactions(30)
p.begin_transaction()
for i in range(50):
    p.produce(topic, key=b'k%d' % (i % 3), value=b'commit-%d' % i)
p.commit_transaction(30)
p.begin_transaction()
for i in range(20):
    p.produce(topic, key=b'k%d' % (i % 3), value=b'abort-%d' % i)
p.flush(30)
p.abort_transaction(30)
p.begin_transaction()
p.produce(topic, value=b'last')
p.commit_transaction(30)

def read(iso, want):
    c = Consumer({'bootstrap.servers': addr, 'group.id': tid + '-' + iso, 'auto.offset.reset': 'earliest',
                  'isolation.level': iso, 'enable.auto.commit': False})
    c.subscribe([topic])
    got = []
    idle = 0
    while idle < 6 and len(got) < want:
        m = c.poll(1.0)
        if m is None:
            idle += 1
            continue
        if m.error():
            raise Exception(m.error())
        got.append(m.value().decode())
    c.close()
    return got

rc = read('read_committed', 51)
ru = read('read_uncommitted', 71)
print('committed', len(rc), sum(v.startswith('abort') for v in rc), 'last' in rc)
print('uncommitted', len(ru), sum(v.startswith('abort') for v in ru))
`

// ConfluentTransactions runs librdkafka's transactional producer (Debian's
// python3-confluent-kafka under /usr/bin/python3; t skips without it, or
// fails under CI) against bootstrap (comma-separated host:port) on topic
// with transactional id tid: a committed transaction of 50 records, an
// aborted one of 20, a committed one of 1. t fails unless a
// read_committed consumer sees exactly the 51 committed records and a
// read_uncommitted one all 71, or when the script runs over 3 minutes.
func ConfluentTransactions(t testing.TB, bootstrap, topic, tid string) {
	t.Helper()
	py := "/usr/bin/python3"
	NeedTool(t, exec.Command(py, "-c", "import confluent_kafka").Run() == nil, "confluent-kafka-python (python3-confluent-kafka)")
	f := filepath.Join(t.TempDir(), "txn.py")
	if err := os.WriteFile(f, []byte(confluentTxnScript), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, f, bootstrap, topic, tid)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("confluent-kafka script: %v (ctx %v)\nstdout:\n%s\nstderr:\n%s", err, ctx.Err(), out, stderr.String())
	}
	if got, want := strings.TrimSpace(string(out)), "committed 51 0 True\nuncommitted 71 20"; got != want {
		t.Fatalf("confluent-kafka said %q, want %q\nstderr:\n%s", got, want, stderr.String())
	}
}

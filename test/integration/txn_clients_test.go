package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// produceInputs writes n records "0".."n-1" (keys k<i%7>) to topic without
// transactions.
func produceInputs(t *testing.T, b *harness.Broker, topic string, n int) {
	t.Helper()
	cl := b.Client(kgo.DefaultProduceTopic(topic))
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

// readAll reads topic from the start with the isolation level until it has
// seen want records or timeout passes, and returns the values.
func readAll(t *testing.T, b *harness.Broker, topic string, committed bool, want int, timeout time.Duration) []string {
	t.Helper()
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl := b.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(iso), kgo.FetchMaxWait(200*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out []string
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	return out
}

// TestGroupTransactSessionExactlyOnce runs franz-go's GroupTransactSession
// as a consume-transform-produce pipeline from in to out, aborting every
// third transaction: a read_committed reader of out sees every input
// exactly once, while a read_uncommitted one also sees the aborted
// attempts' records (so the aborts really wrote something).
func TestGroupTransactSessionExactlyOnce(t *testing.T) {
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "eos-in", 3, nil)
	createTopic(t, b, "eos-out", 3, nil)
	const n = 300
	produceInputs(t, b, "eos-in", n)

	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(b.Addr()),
		kgo.TransactionalID("eos-pipeline"),
		kgo.TransactionTimeout(20*time.Second),
		kgo.ConsumerGroup("eos-group"),
		kgo.ConsumeTopics("eos-in"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.DefaultProduceTopic("eos-out"),
		kgo.RequireStableFetchOffsets(),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	committed, aborted := 0, 0
	for txn := 0; committed < n && txn < 200; txn++ {
		fs := sess.PollRecords(ctx, 40)
		if ctx.Err() != nil {
			t.Fatalf("pipeline timed out after %d committed records (%d aborted transactions)", committed, aborted)
		}
		if errs := fs.Errors(); len(errs) > 0 {
			t.Fatalf("poll: %v", errs)
		}
		if err := sess.Begin(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		abort := txn%3 == 2
		count := 0
		fs.EachRecord(func(r *kgo.Record) {
			count++
			sess.Produce(ctx, &kgo.Record{Key: r.Key, Value: append([]byte("out-"), r.Value...)}, func(_ *kgo.Record, err error) {
				if err != nil && !abort {
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
			t.Fatalf("end transaction %d (abort=%v): %v", txn, abort, err)
		}
		switch {
		case abort:
			aborted++
		case ok:
			committed += count
		}
	}
	if committed != n || aborted == 0 {
		t.Fatalf("committed %d records in all (want %d) with %d aborted transactions (want some)", committed, n, aborted)
	}

	got := readAll(t, b, "eos-out", true, n, 30*time.Second)
	seen := map[string]int{}
	for _, v := range got {
		seen[v]++
	}
	for i := 0; i < n; i++ {
		if c := seen["out-"+strconv.Itoa(i)]; c != 1 {
			t.Errorf("input %d appears %d times in the read_committed output, want exactly once", i, c)
		}
	}
	if len(got) != n {
		t.Fatalf("read_committed output has %d records, want %d", len(got), n)
	}
	all := readAll(t, b, "eos-out", false, n+1, 10*time.Second)
	if len(all) <= n {
		t.Fatalf("read_uncommitted output has %d records, want more than %d (the aborted attempts)", len(all), n)
	}
}

// TestConfluentKafkaTransactions drives librdkafka's transactional
// producer (Debian's python3-confluent-kafka): a committed transaction, an
// aborted one, and a read_committed consumer that sees only the committed
// records, while a read_uncommitted consumer sees both.
func TestConfluentKafkaTransactions(t *testing.T) {
	py := "/usr/bin/python3"
	ok := exec.Command(py, "-c", "import confluent_kafka").Run() == nil
	harness.NeedTool(t, ok, "confluent-kafka-python (python3-confluent-kafka)")
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "rdk-txn", 2, nil)
	script := `
import sys
from confluent_kafka import Producer, Consumer, TopicPartition
addr, topic = sys.argv[1], sys.argv[2]
p = Producer({'bootstrap.servers': addr, 'transactional.id': 'rdk-tx', 'transaction.timeout.ms': 20000})
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
    c = Consumer({'bootstrap.servers': addr, 'group.id': 'rdk-' + iso, 'auto.offset.reset': 'earliest',
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
	f := filepath.Join(t.TempDir(), "txn.py")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out := strings.TrimSpace(run(t, 3*time.Minute, "", py, f, b.Addr(), "rdk-txn"))
	if want := "committed 51 0 True\nuncommitted 71 20"; out != want {
		t.Fatalf("confluent-kafka said %q, want %q", out, want)
	}
}


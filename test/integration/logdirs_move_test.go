package integration

// AlterReplicaLogDirs on one broker with two log.dirs (issue 15 point 4):
// a partition moved between dirs while a producer keeps producing and a
// consumer consumes; every record once, in order; the old dir gone; a
// restart keeps the new dir; kill -9 in the middle of a move; bad input.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/test/harness"
)

// twoDirBroker starts a broker with log.dirs=<dir>/d1,<dir>/d2.
func twoDirBroker(t *testing.T, props map[string]string) (b *harness.Broker, d1, d2 string) {
	t.Helper()
	base := t.TempDir()
	d1, d2 = filepath.Join(base, "d1"), filepath.Join(base, "d2")
	p := map[string]string{"log.dirs": d1 + "," + d2}
	for k, v := range props {
		p[k] = v
	}
	return harness.StartBroker(t, p), d1, d2
}

// alterLogDir sends AlterReplicaLogDirs for one partition and returns its code.
func alterLogDir(t *testing.T, cl *kgo.Client, topic string, p int32, dir string) int16 {
	t.Helper()
	req := kmsg.NewPtrAlterReplicaLogDirsRequest()
	d := kmsg.NewAlterReplicaLogDirsRequestDir()
	d.Dir = dir
	rt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
	rt.Topic, rt.Partitions = topic, []int32{p}
	d.Topics = append(d.Topics, rt)
	req.Dirs = append(req.Dirs, d)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// To broker 0 itself: kgo would shard it by partition leader and
	// answer an unknown topic's partition on its own.
	kresp, err := cl.Broker(0).Request(ctx, req)
	if err != nil {
		t.Fatalf("AlterReplicaLogDirs: %v", err)
	}
	resp := kresp.(*kmsg.AlterReplicaLogDirsResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].Topic != topic || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].Partition != p {
		t.Fatalf("AlterReplicaLogDirs response %+v", resp)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// replicaDirs maps "dir" → replica descriptions ("t-0" or "t-0(future)")
// with their offset lags, from DescribeLogDirs.
func replicaDirs(t *testing.T, cl *kgo.Client, topic string) map[string]map[string]int64 {
	t.Helper()
	req := kmsg.NewPtrDescribeLogDirsRequest()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("DescribeLogDirs: %v", err)
	}
	out := map[string]map[string]int64{}
	for _, d := range resp.Dirs {
		out[d.Dir] = map[string]int64{}
		for _, rt := range d.Topics {
			if rt.Topic != topic {
				continue
			}
			for _, p := range rt.Partitions {
				name := fmt.Sprintf("%s-%d", rt.Topic, p.Partition)
				if p.IsFuture {
					name += "(future)"
				}
				out[d.Dir][name] = p.OffsetLag
			}
		}
	}
	return out
}

// dirOf is the dir holding topic-0's current replica.
func dirOf(t *testing.T, cl *kgo.Client, topic string) string {
	t.Helper()
	for d, rs := range replicaDirs(t, cl, topic) {
		if _, ok := rs[topic+"-0"]; ok {
			return d
		}
	}
	t.Fatalf("%s-0 in no log dir", topic)
	return ""
}

// awaitMoved polls DescribeLogDirs until topic-0 is in dest, with no
// future replica anywhere, failing after timeout.
func awaitMoved(t *testing.T, cl *kgo.Client, topic, dest string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		dirs := replicaDirs(t, cl, topic)
		_, there := dirs[dest][topic+"-0"]
		future := false
		for _, rs := range dirs {
			if _, ok := rs[topic+"-0(future)"]; ok {
				future = true
			}
		}
		if there && !future && len(dirs[dest]) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s-0 not moved to %s: %v", topic, dest, dirs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// partitionDirs lists the directory names of topic's partition 0 in dir.
func partitionDirs(t *testing.T, dir, topic string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), topic+"-0") {
			out = append(out, e.Name())
		}
	}
	return out
}

// awaitNoDir waits until dir holds no directory of topic-0 (the swapped
// out one is removed in the background).
func awaitNoDir(t *testing.T, dir, topic string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(partitionDirs(t, dir, topic)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s still holds %v", dir, partitionDirs(t, dir, topic))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkSequence reads topic-0 from the start and checks the values are
// "0".."n-1" once each, in order.
func checkSequence(t *testing.T, b *harness.Broker, topic string, n int) {
	t.Helper()
	recs := consumeN(t, b, topic, n, 60*time.Second)
	for i, r := range recs {
		if string(r.Value) != strconv.Itoa(i) || r.Offset != int64(i) {
			t.Fatalf("record %d: offset %d value %q", i, r.Offset, r.Value)
		}
	}
}

func TestAlterReplicaLogDirsMovesUnderLoad(t *testing.T) {
	b, d1, d2 := twoDirBroker(t, nil)
	const topic = "mv"
	seg := "65536"
	createTopic(t, b, topic, 1, map[string]*string{"segment.bytes": &seg})
	cl := b.Client()
	defer cl.Close()
	src, dest := moveDirs(t, cl, topic, d1, d2)

	// Records in every codec, from an idempotent producer (kgo's default).
	next := 0
	for _, codec := range []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()} {
		p := b.Client(kgo.ProducerBatchCompression(codec), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		var rs []*kgo.Record
		for i := 0; i < 2000; i++ {
			rs = append(rs, &kgo.Record{Value: []byte(strconv.Itoa(next)), Partition: 0})
			next++
		}
		if err := p.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		p.Close()
	}

	// A producer that keeps producing and a consumer that keeps consuming
	// while the log moves.
	prod := b.Client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(time.Millisecond))
	defer prod.Close()
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var produced int
	var prodErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := next; ctx.Err() == nil && i < next+200000; i++ {
			r := &kgo.Record{Value: []byte(strconv.Itoa(i)), Partition: 0}
			if err := prod.ProduceSync(context.Background(), r).FirstErr(); err != nil {
				prodErr = err
				return
			}
			produced = i + 1
		}
	}()
	cons := b.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	defer cons.Close()
	var consumed []*kgo.Record
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			fs := cons.PollFetches(ctx)
			consumed = append(consumed, fs.Records()...)
		}
	}()

	time.Sleep(200 * time.Millisecond) // let the producer get going (not a synchronisation)
	if code := alterLogDir(t, cl, topic, 0, dest); code != 0 {
		t.Fatalf("AlterReplicaLogDirs: %v", kerr.ErrorForCode(code))
	}
	awaitMoved(t, cl, topic, dest, 60*time.Second)
	time.Sleep(300 * time.Millisecond) // produce a little more into the new log
	stop()
	wg.Wait()
	if prodErr != nil {
		t.Fatalf("producer: %v", prodErr)
	}
	total := produced
	if total <= next {
		t.Fatalf("the producer produced nothing during the move")
	}
	for i, r := range consumed {
		if string(r.Value) != strconv.Itoa(i) {
			t.Fatalf("live consumer: record %d is %q (offset %d)", i, r.Value, r.Offset)
		}
	}
	checkSequence(t, b, topic, total)
	for _, l := range strings.Split(b.Log(), "\n") {
		if strings.Contains(l, "swapping") {
			t.Log(l) // the log end offsets when the swap began
		}
	}
	awaitNoDir(t, src, topic)
	if got := partitionDirs(t, dest, topic); len(got) != 1 || got[0] != topic+"-0" {
		t.Fatalf("%s holds %v", dest, got)
	}

	// A restart keeps the partition in its new dir, every record there.
	b.Stop()
	b.Start()
	cl2 := b.Client()
	defer cl2.Close()
	if got := dirOf(t, cl2, topic); got != dest {
		t.Fatalf("after restart %s-0 is in %s, want %s", topic, got, dest)
	}
	checkSequence(t, b, topic, total)
	otherClientsReadSequence(t, b, topic, total)
}

// otherClientsReadSequence has kcat (librdkafka) and kafka-python read
// topic-0 from the start: each must get the values "0".."n-1" in order,
// every codec decoded. A missing client skips its subtest only.
func otherClientsReadSequence(t *testing.T, b *harness.Broker, topic string, n int) {
	t.Helper()
	want := make([]string, n)
	for i := range want {
		want[i] = strconv.Itoa(i)
	}
	check := func(t *testing.T, who, out string) {
		got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(got) != n {
			t.Fatalf("%s read %d records, want %d: %s", who, len(got), n, head(out))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: record %d is %q, want %q", who, i, got[i], want[i])
			}
		}
	}
	t.Run("kcat", func(t *testing.T) {
		_, err := exec.LookPath("kcat")
		harness.NeedTool(t, err == nil, "kcat")
		check(t, "kcat", run(t, 2*time.Minute, "", "kcat", "-C", "-b", b.Addr(), "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q", "-f", "%s\n"))
	})
	t.Run("kafka-python", func(t *testing.T) {
		py := "/usr/bin/python3"
		harness.NeedTool(t, exec.Command(py, "-c", "import kafka, snappy, lz4, zstandard").Run() == nil, "kafka-python with snappy, lz4 and zstandard")
		script := `
import sys
from kafka import KafkaConsumer, TopicPartition
addr, topic, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = KafkaConsumer(bootstrap_servers=addr, enable_auto_commit=False, consumer_timeout_ms=20000)
tp = TopicPartition(topic, 0)
c.assign([tp])
c.seek_to_beginning(tp)
out = []
for m in c:
    out.append(m.value.decode())
    if len(out) == n:
        break
c.close()
sys.stdout.write("".join(v + "\n" for v in out))
`
		f := filepath.Join(t.TempDir(), "read.py")
		if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		check(t, "kafka-python", run(t, 3*time.Minute, "", py, f, b.Addr(), topic, strconv.Itoa(n)))
	})
}

func TestAlterReplicaLogDirsBadInput(t *testing.T) {
	b, d1, d2 := twoDirBroker(t, nil)
	createTopic(t, b, "bad", 1, nil)
	cl := b.Client()
	defer cl.Close()
	src := dirOf(t, cl, "bad")
	if code := alterLogDir(t, cl, "bad", 0, "/no/such/dir"); code != kerr.LogDirNotFound.Code {
		t.Errorf("unknown dir: %v", kerr.ErrorForCode(code))
	}
	if code := alterLogDir(t, cl, "bad", 0, "relative/d1"); code != kerr.LogDirNotFound.Code {
		t.Errorf("relative dir: %v", kerr.ErrorForCode(code))
	}
	if code := alterLogDir(t, cl, "bad", 0, src); code != 0 {
		t.Errorf("same dir: %v", kerr.ErrorForCode(code))
	}
	if dirs := replicaDirs(t, cl, "bad"); len(dirs[d1])+len(dirs[d2]) != 1 {
		t.Errorf("same dir moved something: %v", dirs)
	}
	long := strings.Repeat("x", 240)
	if code := alterLogDir(t, cl, long, 0, src); code != kerr.InvalidTopicException.Code {
		t.Errorf("long topic: %v", kerr.ErrorForCode(code))
	}
	// Not hosted: REPLICA_NOT_AVAILABLE, and the log is created in that
	// dir when the partition comes (both dirs are empty of it; the
	// broker would otherwise pick d1, the first with fewest logs).
	if code := alterLogDir(t, cl, "later", 0, d2); code != kerr.ReplicaNotAvailable.Code {
		t.Errorf("not hosted: %v", kerr.ErrorForCode(code))
	}
	if code := alterLogDir(t, cl, "later2", 0, d1); code != kerr.ReplicaNotAvailable.Code {
		t.Errorf("not hosted: %v", kerr.ErrorForCode(code))
	}
	createTopic(t, b, "later", 1, nil)
	createTopic(t, b, "later2", 1, nil)
	if got := dirOf(t, cl, "later"); got != d2 {
		t.Errorf("later-0 created in %s, want the preferred %s", got, d2)
	}
	if got := dirOf(t, cl, "later2"); got != d1 {
		t.Errorf("later2-0 created in %s, want the preferred %s", got, d1)
	}
}

// TestAlterReplicaLogDirsKillAndResume kills the broker while a throttled
// move is under way: the restarted broker resumes the copy from the
// future dir and completes the move with every record there.
func TestAlterReplicaLogDirsKillAndResume(t *testing.T) {
	b, d1, d2 := twoDirBroker(t, map[string]string{"replica.alter.log.dirs.io.max.bytes.per.second": "200000"})
	const topic = "kill"
	createTopic(t, b, topic, 1, nil)
	cl := b.Client()
	src, dest := moveDirs(t, cl, topic, d1, d2)
	p := b.Client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	const n = 20000
	var rs []*kgo.Record
	pad := strings.Repeat("p", 100)
	for i := 0; i < n; i++ {
		rs = append(rs, &kgo.Record{Value: []byte(strconv.Itoa(i)), Key: []byte(pad), Partition: 0})
	}
	if err := p.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if code := alterLogDir(t, cl, topic, 0, dest); code != 0 {
		t.Fatalf("AlterReplicaLogDirs: %v", kerr.ErrorForCode(code))
	}
	// Wait until the copy is part way (a future replica with some lag).
	deadline := time.Now().Add(30 * time.Second)
	for {
		lag, ok := replicaDirs(t, cl, topic)[dest][topic+"-0(future)"]
		if ok && lag < n && lag > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no future replica under way: %v", replicaDirs(t, cl, topic))
		}
		time.Sleep(20 * time.Millisecond)
	}
	cl.Close()
	b.Kill()
	b.Stop() // reap
	delete(b.Props, "replica.alter.log.dirs.io.max.bytes.per.second")
	b.Start()
	cl2 := b.Client()
	defer cl2.Close()
	awaitMoved(t, cl2, topic, dest, 60*time.Second)
	checkSequence(t, b, topic, n)
	awaitNoDir(t, src, topic)
	if !strings.Contains(b.Log(), "log dir move resumed") {
		t.Errorf("the restarted broker did not resume the move:\n%s", b.Log())
	}
	for _, l := range strings.Split(b.Log(), "\n") {
		if strings.Contains(l, "future") || strings.Contains(l, "log dir") || strings.Contains(l, "replica was replaced") {
			t.Log(l)
		}
	}
}

// TestCLIReassignLogDirs runs kafka-reassign-partitions.sh with a plan
// carrying log_dirs, throttled by --replica-alter-log-dirs-throttle:
// --execute starts the move, kafka-log-dirs.sh shows the future replica
// (isFuture true), --verify reports progress then completion with
// Kafka's wording, and the copy's rate stays within ±20% of the throttle.
func TestCLIReassignLogDirs(t *testing.T) {
	b, d1, d2 := twoDirBroker(t, nil)
	bs := b.Addr()
	const topic = "cli"
	createTopic(t, b, topic, 1, nil)
	cl := b.Client()
	defer cl.Close()
	src, dest := moveDirs(t, cl, topic, d1, d2)
	// About 3 MB (uncompressed) to copy at 1 MB/s.
	p := b.Client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	var rs []*kgo.Record
	const n = 3000
	for i := 0; i < n; i++ {
		rs = append(rs, &kgo.Record{Value: []byte(strconv.Itoa(i)), Key: []byte(strings.Repeat("k", 1000)), Partition: 0})
	}
	if err := p.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	size := replicaSize(t, cl, topic, src)

	plan := writeFile(t, "plan.json", fmt.Sprintf(`{"version":1,"partitions":[{"topic":%q,"partition":0,"replicas":[0],"log_dirs":[%q]}]}`, topic, dest))
	const rate = 1_000_000
	start := time.Now()
	code, out, errs := cliRun(t, nil, "kafka-reassign-partitions.sh", "--bootstrap-server", bs, "--reassignment-json-file", plan, "--execute",
		"--replica-alter-log-dirs-throttle", strconv.Itoa(rate))
	if code != 0 || !strings.Contains(out, "The replica-alter-dir throttle limit was set to 1000000 B/s") ||
		!strings.Contains(out, "Successfully started partition reassignment for cli-0\n") ||
		!strings.Contains(out, fmt.Sprintf("Successfully started moving log directory to %s for replica cli-0 with broker 0 \n", dest)) {
		t.Fatalf("--execute: %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = cliRun(t, nil, "kafka-log-dirs.sh", "--bootstrap-server", bs, "--describe", "--topic-list", topic)
	if code != 0 || !strings.Contains(out, `{"partition":"cli-0","size":`) || !strings.Contains(out, `"isFuture":true}`) {
		t.Fatalf("kafka-log-dirs.sh during the move: %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = cliRun(t, nil, "kafka-reassign-partitions.sh", "--bootstrap-server", bs, "--reassignment-json-file", plan, "--verify")
	if code != 0 || !strings.Contains(out, "Reassignment of replica cli-0-0 is still in progress.\n") || strings.Contains(out, "Clearing broker-level throttles on broker 0") {
		t.Fatalf("--verify during the move: %d\n%s\n%s", code, out, errs)
	}
	awaitMoved(t, cl, topic, dest, 60*time.Second)
	took := time.Since(start)
	// The throttle bounds the copy: size bytes at rate B/s, within 20%
	// (the upper bound has 2 s more for a loaded machine; the lower one
	// fails without a working throttle).
	want := time.Duration(float64(size) / rate * float64(time.Second))
	t.Logf("moved %d bytes in %v (%.0f B/s); at the throttle: %v", size, took, float64(size)/took.Seconds(), want)
	if took < want*8/10 || took > want*12/10+2*time.Second {
		t.Errorf("move of %d bytes took %v at a %d B/s throttle (want about %v)", size, took, rate, want)
	}
	code, out, errs = cliRun(t, nil, "kafka-reassign-partitions.sh", "--bootstrap-server", bs, "--reassignment-json-file", plan, "--verify")
	if code != 0 || !strings.Contains(out, "Status of partition reassignment:\nReassignment of partition cli-0 is completed.\nReassignment of replica cli-0-0 completed successfully.\n") ||
		!strings.Contains(out, "Clearing broker-level throttles on broker 0") {
		t.Fatalf("--verify after the move: %d\n%s\n%s", code, out, errs)
	}
	checkSequence(t, b, topic, n)
	code, out, _ = cliRun(t, nil, "kafka-log-dirs.sh", "--bootstrap-server", bs, "--describe", "--topic-list", topic)
	if code != 0 || strings.Contains(out, `"isFuture":true`) || !strings.Contains(out, fmt.Sprintf(`"logDir":%q`, dest)) {
		t.Fatalf("kafka-log-dirs.sh after the move: %d\n%s", code, out)
	}
	// A plan naming a dir the broker does not have fails the move.
	bad := writeFile(t, "bad.json", fmt.Sprintf(`{"version":1,"partitions":[{"topic":%q,"partition":0,"replicas":[0],"log_dirs":["/no/such/dir"]}]}`, topic))
	code, out, errs = cliRun(t, nil, "kafka-reassign-partitions.sh", "--bootstrap-server", bs, "--reassignment-json-file", bad, "--execute")
	if code == 0 || !strings.Contains(out+errs, "Failed to alter dir for cli-0-0") {
		t.Fatalf("bad dir: %d\n%s\n%s", code, out, errs)
	}
}

// replicaSize is the DescribeLogDirs size of topic-0 in dir.
func replicaSize(t *testing.T, cl *kgo.Client, topic, dir string) int64 {
	t.Helper()
	resp, err := kmsg.NewPtrDescribeLogDirsRequest().RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Dirs {
		for _, rt := range d.Topics {
			for _, p := range rt.Partitions {
				if d.Dir == dir && rt.Topic == topic && p.Partition == 0 && !p.IsFuture {
					return p.Size
				}
			}
		}
	}
	t.Fatalf("%s-0 not in %s", topic, dir)
	return 0
}

// TestAlterReplicaLogDirsTransactions moves a partition holding committed
// and aborted transactions: after the move a read_committed consumer
// still sees the committed records only (the aborted-transaction index
// came along) and a read_uncommitted one sees both.
func TestAlterReplicaLogDirsTransactions(t *testing.T) {
	b, d1, d2 := twoDirBroker(t, map[string]string{"transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1"})
	const topic = "txmv"
	createTopic(t, b, topic, 1, nil)
	cl := b.Client()
	defer cl.Close()
	src, dest := moveDirs(t, cl, topic, d1, d2)
	tx := b.Client(kgo.TransactionalID("mover"), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer tx.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var committed int
	for round := 0; round < 6; round++ {
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		commit := round%2 == 0
		for i := 0; i < 50; i++ {
			v := fmt.Sprintf("aborted-%d-%d", round, i)
			if commit {
				v = fmt.Sprintf("committed-%d", committed)
				committed++
			}
			if err := tx.ProduceSync(ctx, &kgo.Record{Value: []byte(v), Partition: 0}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	if code := alterLogDir(t, cl, topic, 0, dest); code != 0 {
		t.Fatalf("AlterReplicaLogDirs: %v", kerr.ErrorForCode(code))
	}
	awaitMoved(t, cl, topic, dest, 60*time.Second)
	awaitNoDir(t, src, topic)
	rc := b.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	defer rc.Close()
	var got []string
	for len(got) < committed && ctx.Err() == nil {
		rc.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	for i, v := range got {
		if v != fmt.Sprintf("committed-%d", i) {
			t.Fatalf("read_committed record %d: %q", i, v)
		}
	}
	if len(got) != committed {
		t.Fatalf("read_committed read %d records, want %d", len(got), committed)
	}
	// read_uncommitted: all 300 data records (markers are not records).
	if all := consumeN(t, b, topic, 300, 30*time.Second); string(all[50].Value) != "aborted-1-0" {
		t.Fatalf("read_uncommitted record 50: %q", all[50].Value)
	}
}

// moveDirs is where topic's partition 0 lives (src, one of d1 and d2) and
// the other dir (dest), where a move sends it.
func moveDirs(t *testing.T, cl *kgo.Client, topic, d1, d2 string) (src, dest string) {
	t.Helper()
	src, dest = dirOf(t, cl, topic), d2
	if src == d2 {
		dest = d1
	}
	return src, dest
}

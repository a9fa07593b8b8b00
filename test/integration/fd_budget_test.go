package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// processFDs counts the open descriptors of process pid, and how many of
// them are segment files (.log, .index, .timeindex) under dir.
func processFDs(t *testing.T, pid int, dir string) (total, logs, indexes int) {
	t.Helper()
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(fdDir)
	if err != nil {
		t.Skipf("cannot read %s: %v", fdDir, err)
	}
	for _, e := range ents {
		target, err := os.Readlink(fdDir + "/" + e.Name())
		if err != nil {
			continue // closed meanwhile
		}
		total++
		if !strings.HasPrefix(target, dir) {
			continue
		}
		switch {
		case strings.HasSuffix(target, ".log"):
			logs++
		case strings.HasSuffix(target, ".index"), strings.HasSuffix(target, ".timeindex"):
			indexes++
		}
	}
	return total, logs, indexes
}

// TestDescriptorBudgetWithThousandsOfPartitions runs the real broker with
// log.segment.fd.cache.size=150 and 2,000 partitions (plus the 50 of
// __consumer_offsets), one record in each, and a topic of many small
// segments read from the start by franz-go after every other partition was
// touched (so its old segments were evicted and are reopened on demand).
// With three descriptors per segment, as before, the process would hold
// over 6,000; the bound here is the cache plus the process's own.
func TestDescriptorBudgetWithThousandsOfPartitions(t *testing.T) {
	const cacheSize = 150
	b := harness.StartBroker(t, map[string]string{"log.segment.fd.cache.size": fmt.Sprint(cacheSize)})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	adm := kadm.NewClient(b.Client())
	defer adm.Close()

	const topics, perTopic = 20, 100
	began := time.Now()
	for i := 0; i < topics; i++ {
		resp, err := adm.CreateTopics(ctx, perTopic, 1, nil, fmt.Sprintf("many-%02d", i))
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			t.Fatalf("create topic %d: %v", i, err)
		}
	}
	// A topic of ~40 segments per partition (segment.bytes 16 KiB).
	segBytes := "16384"
	createTopic(t, b, "old", 2, map[string]*string{"segment.bytes": &segBytes})
	t.Logf("created %d partitions in %v", topics*perTopic+2, time.Since(began))

	cl := b.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchMaxBytes(8<<10), kgo.ProducerBatchCompression(kgo.NoCompression()))
	defer cl.Close()
	const oldRecords = 6000
	var old []*kgo.Record
	for i := 0; i < oldRecords; i++ {
		old = append(old, &kgo.Record{Topic: "old", Partition: int32(i % 2), Value: []byte(fmt.Sprintf("%06d-%0200d", i, i))})
	}
	if err := cl.ProduceSync(ctx, old...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	// Then one record to each of the 2,000 partitions: appending pins each
	// active segment, so the old topic's segments are evicted from the
	// cache of 150 and the consumer below reopens them.
	var recs []*kgo.Record
	for i := 0; i < topics; i++ {
		for p := int32(0); p < perTopic; p++ {
			recs = append(recs, &kgo.Record{Topic: fmt.Sprintf("many-%02d", i), Partition: p, Value: []byte("x")})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	for i := 0; i < topics; i++ {
		topic := fmt.Sprintf("many-%02d", i)
		offs, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		offs.Each(func(o kadm.ListedOffset) {
			if o.Err != nil || o.Offset != 1 {
				t.Fatalf("%s/%d: end offset %d, %v; want 1", o.Topic, o.Partition, o.Offset, o.Err)
			}
		})
	}
	total, logs, indexes := processFDs(t, b.Pid(), b.DataDir)
	t.Logf("after producing to %d partitions: %d descriptors (%d .log, %d index)", topics*perTopic+52, total, logs, indexes)
	if indexes != 0 {
		t.Errorf("%d index descriptors open, want 0 (indexes are memory-mapped)", indexes)
	}
	if logs > cacheSize+16 || total > cacheSize+400 {
		t.Errorf("%d descriptors (%d .log), want at most %d .log and %d in all", total, logs, cacheSize+16, cacheSize+400)
	}

	// Consume the old topic from the start: its segments are reopened.
	consumeOld(ctx, t, b, oldRecords)
	total, logs, indexes = processFDs(t, b.Pid(), b.DataDir)
	t.Logf("after consuming the old topic: %d descriptors (%d .log, %d index)", total, logs, indexes)
	if indexes != 0 || logs > cacheSize+16 || total > cacheSize+400 {
		t.Errorf("after consuming: %d descriptors (%d .log, %d index), want at most %d .log, no index, %d in all", total, logs, indexes, cacheSize+16, cacheSize+400)
	}

	// kill -9: the active segments' indexes stay preallocated (10 MiB,
	// zero tail); recovery rebuilds them and every record reads back.
	active := activeIndexSize(t, b.DataDir+"/old-0")
	if active != 10<<20 {
		t.Errorf("old-0 active .index is %d bytes, want preallocated %d", active, 10<<20)
	}
	b.Kill()
	if got := activeIndexSize(t, b.DataDir+"/old-0"); got != active {
		t.Errorf("active .index %d bytes after kill -9, want %d as left", got, active)
	}
	began = time.Now()
	b.Start()
	t.Logf("restarted after kill -9 in %v", time.Since(began))
	consumeOld(ctx, t, b, oldRecords)
	total, logs, indexes = processFDs(t, b.Pid(), b.DataDir)
	t.Logf("after the restart and consuming again: %d descriptors (%d .log, %d index)", total, logs, indexes)
	if indexes != 0 || logs > cacheSize+16 || total > cacheSize+400 {
		t.Errorf("after restart: %d descriptors (%d .log, %d index), want at most %d .log, no index, %d in all", total, logs, indexes, cacheSize+16, cacheSize+400)
	}
	segs, _ := os.ReadDir(b.DataDir + "/old-0")
	n := 0
	for _, e := range segs {
		if strings.HasSuffix(e.Name(), ".log") {
			n++
		}
	}
	if n < 20 {
		t.Errorf("old-0 has %d segments, want many (the test would not cross the cache)", n)
	}
}

// consumeOld reads the "old" topic from the start with franz-go and checks
// every record's value and offset (record i went to partition i%2).
func consumeOld(ctx context.Context, t *testing.T, b *harness.Broker, n int) {
	t.Helper()
	consumer := b.Client(kgo.ConsumeTopics("old"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(64<<10), kgo.FetchMaxPartitionBytes(16<<10))
	defer consumer.Close()
	next := map[int32]int{0: 0, 1: 1}
	for got := 0; got < n; {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records", got, n)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			want := fmt.Sprintf("%06d-%0200d", next[r.Partition], next[r.Partition])
			if string(r.Value) != want || r.Offset != int64(next[r.Partition]/2) {
				t.Fatalf("partition %d offset %d: value %.20q, want %.20q at offset %d", r.Partition, r.Offset, r.Value, want, next[r.Partition]/2)
			}
			next[r.Partition] += 2
			got++
		})
	}
}

// activeIndexSize is the size of the .index of the last segment in dir.
func activeIndexSize(t *testing.T, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	last := ""
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".index") && e.Name() > last {
			last = e.Name()
		}
	}
	fi, err := os.Stat(dir + "/" + last)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

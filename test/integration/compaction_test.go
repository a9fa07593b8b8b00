package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// readCompacted reads the whole topic-0 from the start up to its end offset
// and returns key → values in offset order.
func readCompacted(t *testing.T, b *harness.Broker, topic string) (map[string][]*string, int) {
	t.Helper()
	adm := kadm.NewClient(b.Client())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	cl := b.Client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}), kgo.FetchMaxWait(200*time.Millisecond))
	out := map[string][]*string{}
	n := 0
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %v", topic, ctx.Err())
		}
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			var v *string
			if r.Value != nil {
				s := string(r.Value)
				v = &s
			}
			out[string(r.Key)] = append(out[string(r.Key)], v)
			n++
			if r.Offset+1 >= end.Offset {
				done = true
			}
		})
		if done || end.Offset == 0 {
			return out, n
		}
	}
}

func describe(m map[string][]*string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "%s:", k)
		for _, v := range m[k] {
			if v == nil {
				sb.WriteString(" <tombstone>")
			} else {
				sb.WriteString(" " + *v)
			}
		}
		sb.WriteString("; ")
	}
	return sb.String()
}

// TestCompactedTopicKeepsLastValuePerKey: a compacted topic with repeated
// keys and small segments, after the cleaner ran, reads back exactly the
// last value per key; tombstones survive delete.retention.ms and are gone
// after it; __consumer_offsets shrinks after many commits.
func TestCompactedTopicKeepsLastValuePerKey(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{
		"log.cleaner.backoff.ms":       "200",
		"offsets.topic.num.partitions": "1",
		"offsets.topic.segment.bytes":  "4096",
	})
	const topic = "compacted"
	createTopic(t, b, topic, 1, map[string]*string{
		"cleanup.policy": kadm.StringPtr("compact"), "segment.bytes": kadm.StringPtr("1024"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"), "delete.retention.ms": kadm.StringPtr("1000"),
	})
	cl := b.Client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	produce := func(key string, value *string) {
		r := &kgo.Record{Key: []byte(key)}
		if value != nil {
			r.Value = []byte(*value)
		}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", key, err)
		}
	}
	const keys, rounds = 10, 20
	for r := 0; r < rounds; r++ {
		for k := 0; k < keys; k++ {
			v := fmt.Sprintf("k%d@%d-padding-padding", k, r)
			produce(fmt.Sprintf("k%d", k), &v)
		}
	}
	produce("k0", nil)
	produce("k1", nil)
	// Distinct filler keys roll the tombstones out of the active segment
	// (which is never cleaned), so every key should end up once.
	filler := func(prefix string) {
		for j := 0; j < 20; j++ {
			v := fmt.Sprintf("%s-%d-padding-padding-padding", prefix, j)
			produce(fmt.Sprintf("%s-%d", prefix, j), &v)
		}
	}
	filler("fill")
	total := keys*rounds + 2 + 20

	expect := func(m map[string][]*string, tombstones bool) error {
		for k := 0; k < keys; k++ {
			key := fmt.Sprintf("k%d", k)
			vs := m[key]
			switch {
			case k < 2 && tombstones:
				if len(vs) != 1 || vs[0] != nil {
					return fmt.Errorf("%s: want only its tombstone", key)
				}
			case k < 2:
				if len(vs) != 0 {
					return fmt.Errorf("%s: tombstone not removed", key)
				}
			default:
				if len(vs) != 1 || vs[0] == nil || *vs[0] != fmt.Sprintf("k%d@%d-padding-padding", k, rounds-1) {
					return fmt.Errorf("%s: want only its last value", key)
				}
			}
		}
		for key, vs := range m {
			if strings.HasPrefix(key, "fill") && len(vs) != 1 {
				return fmt.Errorf("%s seen %d times", key, len(vs))
			}
		}
		return nil
	}
	var last map[string][]*string
	var n int
	deadline := time.Now().Add(45 * time.Second)
	for {
		last, n = readCompacted(t, b, topic)
		if err := expect(last, true); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("not compacted after 45 s (%v): %d of %d records: %s", err, n, total, describe(last))
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("compacted: %d of %d records remain", n, total)

	// After delete.retention.ms, a new dirty section makes the cleaner
	// run again and drop the tombstones.
	time.Sleep(1100 * time.Millisecond) // the horizon is wall-clock time on the broker
	filler("more")
	deadline = time.Now().Add(45 * time.Second)
	for {
		last, n = readCompacted(t, b, topic)
		if err := expect(last, false); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("tombstones not removed after 45 s (%v): %s", err, describe(last))
		}
		time.Sleep(250 * time.Millisecond)
	}

	// __consumer_offsets: many commits of one group's offset, then the
	// partition's live .log bytes shrink.
	adm := kadm.NewClient(b.Client())
	for i := 0; i < 300; i++ {
		var os kadm.Offsets
		os.Add(kadm.Offset{Topic: topic, Partition: 0, At: int64(i), LeaderEpoch: -1})
		if _, err := adm.CommitOffsets(ctx, "compaction-group", os); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	offsetsDir := filepath.Join(b.DataDir, "__consumer_offsets-0")
	peak := logBytes(t, offsetsDir)
	deadline = time.Now().Add(45 * time.Second)
	for {
		now := logBytes(t, offsetsDir)
		if now < peak/2 {
			t.Logf("__consumer_offsets-0: %d bytes after 300 commits, %d after cleaning", peak, now)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("__consumer_offsets-0 did not shrink: %d bytes (peak %d)", now, peak)
		}
		time.Sleep(250 * time.Millisecond)
	}
	// The committed offset survives compaction.
	fetched, err := adm.FetchOffsets(ctx, "compaction-group")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fetched.Lookup(topic, 0); !ok || o.At != 299 {
		t.Fatalf("committed offset after compaction: %+v %v", o, ok)
	}
}

// logBytes sums the live .log files of a partition directory.
func logBytes(t *testing.T, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".log") {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
	}
	return n
}

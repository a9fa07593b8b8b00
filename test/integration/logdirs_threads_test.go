package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// dirOfPartition is the dir holding topic-p's current replica.
func dirOfPartition(t *testing.T, cl *kgo.Client, topic string, p int32) string {
	t.Helper()
	for d, rs := range replicaDirs(t, cl, topic) {
		if _, ok := rs[fmt.Sprintf("%s-%d", topic, p)]; ok {
			return d
		}
	}
	t.Fatalf("%s-%d in no log dir", topic, p)
	return ""
}

// moveTwo fills two partitions with n records each, asks to move both to
// the other log dir at once under a 1 MB/s alter-log-dirs throttle, and
// samples DescribeLogDirs until both moved: it returns how often both
// future replicas were part-copied at once (0 < lag < n) and how often one
// was copying or copied while the other had not begun (lag n).
func moveTwo(t *testing.T, threads string) (both, waited int) {
	props := map[string]string{"replica.alter.log.dirs.io.max.bytes.per.second": "1000000"}
	if threads != "" {
		props["num.replica.alter.log.dirs.threads"] = threads
	}
	b, d1, d2 := twoDirBroker(t, props)
	const topic = "threads"
	createTopic(t, b, topic, 2, nil)
	cl := b.Client()
	defer cl.Close()
	p := b.Client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	const n = 20000
	pad := strings.Repeat("p", 100)
	var rs []*kgo.Record
	for part := int32(0); part < 2; part++ {
		for i := 0; i < n; i++ {
			rs = append(rs, &kgo.Record{Value: []byte(strconv.Itoa(i)), Key: []byte(pad), Partition: part})
		}
	}
	if err := p.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	dest := map[int32]string{}
	for part := int32(0); part < 2; part++ {
		dest[part] = d2
		if dirOfPartition(t, cl, topic, part) == d2 {
			dest[part] = d1
		}
		if code := alterLogDir(t, cl, topic, part, dest[part]); code != 0 {
			t.Fatalf("AlterReplicaLogDirs %s-%d: %v", topic, part, kerr.ErrorForCode(code))
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		dirs := replicaDirs(t, cl, topic)
		lags := map[int32]int64{}
		done := 0
		for part := int32(0); part < 2; part++ {
			name := fmt.Sprintf("%s-%d", topic, part)
			if lag, ok := dirs[dest[part]][name+"(future)"]; ok {
				lags[part] = lag
			} else if _, there := dirs[dest[part]][name]; there {
				done++
			}
		}
		partial := func(part int32) bool { l, ok := lags[part]; return ok && l > 0 && l < n }
		begun := func(part int32) bool { l, ok := lags[part]; return !ok || l < n } // copying, copied or swapped in
		switch {
		case partial(0) && partial(1):
			both++
		case partial(0) && lags[1] == n, partial(1) && lags[0] == n:
			waited++
		case begun(0) && lags[1] == n && done == 0, begun(1) && lags[0] == n && done == 0:
			waited++ // one copied (not yet swapped), the other not begun
		}
		if done == 2 {
			return both, waited
		}
		if time.Now().After(deadline) {
			t.Fatalf("moves not done in 60 s: %v", dirs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// num.replica.alter.log.dirs.threads=1: two moves asked for at once copy
// one after the other (never both part-copied, the second seen waiting);
// with the default (the number of log.dirs, 2 here) they copy together.
func TestAlterLogDirsThreads(t *testing.T) {
	both, waited := moveTwo(t, "1")
	t.Logf("threads=1: samples with both copying %d, one waiting %d", both, waited)
	if both != 0 || waited == 0 {
		t.Errorf("threads=1: %d samples with both moves copying, %d with one waiting; want 0 and some", both, waited)
	}
	both, _ = moveTwo(t, "")
	t.Logf("default threads: samples with both copying %d", both)
	if both == 0 {
		t.Error("default threads (2 log dirs): the two moves never copied at once")
	}
}

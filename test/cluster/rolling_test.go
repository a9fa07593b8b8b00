package cluster

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// errLog is a kgo.Logger that counts the errors the client logs (the
// "err" value of any log line, at every level) by text, so a test can
// say which errors the producer met and retried.
type errLog struct {
	mu     sync.Mutex
	counts map[string]int
	fatal  []string // Kafka errors that are not retriable
}

func (l *errLog) Level() kgo.LogLevel { return kgo.LogLevelDebug }

// retryRE finds the partition errors franz-go retried in its debug
// "produced" summary ("retrying@<offset>,<n>(<KAFKA_ERROR>: …)"): it does
// not log retriable produce errors any other way.
var retryRE = regexp.MustCompile(`retrying@-?\d+,\d+\(([A-Z_]+)`)

func (l *errLog) Log(_ kgo.LogLevel, msg string, kv ...any) {
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		if msg == "produced" && k == "to" {
			if s, ok := kv[i+1].(string); ok {
				for _, m := range retryRE.FindAllStringSubmatch(s, -1) {
					l.mu.Lock()
					l.counts["partition error "+m[1]+" (retried)"]++
					l.mu.Unlock()
				}
			}
		}
		if k != "err" {
			continue
		}
		err, ok := kv[i+1].(error)
		if !ok || err == nil {
			continue
		}
		l.mu.Lock()
		l.counts[err.Error()]++
		var ke *kerr.Error
		if errors.As(err, &ke) && !ke.Retriable {
			l.fatal = append(l.fatal, msg+": "+err.Error())
		}
		l.mu.Unlock()
	}
}

func (l *errLog) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := make([]string, 0, len(l.counts))
	for k := range l.counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "\n  %5d × %s", l.counts[k], k)
	}
	return sb.String()
}

// TestRollingRestart restarts every broker in turn under a continuous
// idempotent acks=all producer (RF 3, min.insync.replicas=2): SIGTERM
// (controlled shutdown moves leadership away first), restart, wait until
// it is back in every ISR. No record fails (errors met on the way, such
// as NOT_LEADER_OR_FOLLOWER while leadership moves, are retriable and
// franz-go retries them), every acknowledged record is at its
// acknowledged offset, and no record is in the log twice (the
// idempotent producer's retries are deduplicated across leader changes).
func TestRollingRestart(t *testing.T) {
	c := startCluster(t, 3, map[string]string{"min.insync.replicas": "2"}, nil)
	const topic = "rolling"
	const parts = 3
	c.createTopic(topic, parts, 3, nil)
	for p := int32(0); p < parts; p++ {
		c.waitServing(topic, p, 20*time.Second)
	}
	logger := &errLog{counts: map[string]int{}}
	prod := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordDeliveryTimeout(60*time.Second),
		kgo.ProducerLinger(2*time.Millisecond), kgo.WithLogger(logger), kgo.DefaultProduceTopic(topic))

	type ack struct {
		p int32
		o int64
	}
	var (
		mu       sync.Mutex
		acked    = map[ack]string{}
		failed   []string
		inFlight = make(chan struct{}, 64) // bounds records in flight
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case inFlight <- struct{}{}:
			}
			v := fmt.Sprintf("v-%06d", i)
			prod.Produce(context.Background(), &kgo.Record{Key: []byte(v), Value: []byte(v)}, func(r *kgo.Record, err error) {
				defer func() { <-inFlight }()
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failed = append(failed, fmt.Sprintf("%s: %v", v, err))
					return
				}
				k := ack{r.Partition, r.Offset}
				if prev, dup := acked[k]; dup {
					failed = append(failed, fmt.Sprintf("%s-%d@%d acknowledged for both %s and %s", topic, r.Partition, r.Offset, prev, v))
				}
				acked[k] = v
			})
		}
	}()
	progress := func(what string, n int) {
		t.Helper()
		from := count()
		c.waitFor(what, 30*time.Second, func() (bool, string) { return count() >= from+n, fmt.Sprint(count() - from) })
	}
	progress("acks before the first restart", 300)

	began := time.Now()
	for _, id := range []int32{1, 2, 3} {
		b := c.brokers[id]
		ctrl := c.controllerID()
		stopAt := time.Now()
		b.Stop()
		if code := b.ExitCode(); code != 0 {
			t.Errorf("broker %d exited %d after SIGTERM:\n%s", id, code, tail(b.Log(), 30))
		}
		if strings.Contains(b.Log(), "Proceeding to do an unclean shutdown") {
			t.Errorf("broker %d: controlled shutdown incomplete:\n%s", id, tail(b.Log(), 30))
		}
		stopped := time.Since(stopAt)
		progress(fmt.Sprintf("acks while broker %d is down", id), 100)
		b.Start()
		c.waitFor(fmt.Sprintf("broker %d back in every ISR", id), 60*time.Second, func() (bool, string) {
			for p := int32(0); p < parts; p++ {
				s, _ := c.partitionState(topic, p)
				if len(s.ISR) != 3 || s.Leader < 0 {
					return false, fmt.Sprintf("p%d %+v", p, s)
				}
			}
			return true, ""
		})
		t.Logf("broker %d (controller %d): stopped in %v, back in every ISR %v after SIGTERM; %d acks so far",
			id, ctrl, stopped.Round(time.Millisecond), time.Since(stopAt).Round(time.Millisecond), count())
		progress(fmt.Sprintf("acks after broker %d rejoined", id), 100)
	}
	close(stop)
	wg.Wait()
	fctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	if err := prod.Flush(fctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	cancel()
	t.Logf("rolling restart of 3 brokers took %v; %d records acknowledged; errors the producer met and retried:%s",
		time.Since(began).Round(time.Millisecond), count(), logger.summary())

	mu.Lock()
	defer mu.Unlock()
	for i, f := range failed {
		if i == 20 {
			t.Errorf("… %d more failures", len(failed)-i)
			break
		}
		t.Errorf("record failed: %s", f)
	}
	logger.mu.Lock()
	for _, f := range logger.fatal {
		t.Errorf("non-retriable error logged by the producer: %s", f)
	}
	logger.mu.Unlock()

	ends := map[int32]int64{}
	for k := range acked {
		if k.o+1 > ends[k.p] {
			ends[k.p] = k.o + 1
		}
	}
	seen := map[string]string{}
	for p := int32(0); p < parts; p++ {
		got := readPartition(t, c.seeds(), topic, p, ends[p])
		for o := int64(0); o < ends[p]; o++ {
			v, ok := got[o]
			if !ok {
				t.Errorf("%s-%d: offset %d missing below the last acknowledged offset %d", topic, p, o, ends[p]-1)
				continue
			}
			where := fmt.Sprintf("p%d@%d", p, o)
			if prev, dup := seen[v]; dup {
				t.Errorf("%s is in the log twice: %s and %s", v, prev, where)
			}
			seen[v] = where
		}
		for k, v := range acked {
			if k.p == p && got[k.o] != v {
				t.Errorf("%s-%d: offset %d holds %q, acknowledged %q", topic, p, k.o, got[k.o], v)
			}
		}
	}
}

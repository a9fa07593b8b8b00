package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// layout is the benchmark's topics: count topics named prefix-0000, …
// with perTopic partitions each, the last holding the remainder.
type layout struct {
	prefix   string
	total    int // partitions in all
	perTopic int
}

func (l layout) topics() map[string]int32 {
	out := map[string]int32{}
	for i, left := 0, l.total; left > 0; i++ {
		n := min(left, l.perTopic)
		out[fmt.Sprintf("%s-%04d", l.prefix, i)] = int32(n)
		left -= n
	}
	return out
}

// newClient is a franz-go client over seeds whose requests may take as
// long as the step they belong to (the context bounds them): the default
// 10 s overhead would abandon a CreateTopics the broker is still serving.
func newClient(seeds []string, opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.RequestTimeoutOverhead(10 * time.Minute),
		kgo.RetryTimeout(10 * time.Minute), kgo.MetadataMinAge(100 * time.Millisecond)}, opts...)...)
}

// createTopics creates l's topics with replication factor rf through
// kadm, batch topics per CreateTopics request, one request after the
// other. A topic that already exists or whose creation timed out on the
// broker (REQUEST_TIMED_OUT: Kafka carries on creating it) is not an
// error; the caller waits for leaders anyway.
func createTopics(ctx context.Context, cl *kgo.Client, l layout, rf int16, batch int) error {
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(60000)
	parts := l.topics()
	names := slices.Sorted(maps.Keys(parts))
	for i := 0; i < len(names); {
		// One request holds topics of one partition count (only the
		// last topic can differ).
		j := i + 1
		for j < len(names) && j-i < batch && parts[names[j]] == parts[names[i]] {
			j++
		}
		resp, err := adm.CreateTopics(ctx, parts[names[i]], rf, nil, names[i:j]...)
		if err != nil {
			return fmt.Errorf("CreateTopics %s…: %w", names[i], err)
		}
		for _, t := range resp.Sorted() {
			if t.Err == nil || errors.Is(t.Err, kerr.TopicAlreadyExists) || errors.Is(t.Err, kerr.RequestTimedOut) {
				continue
			}
			return fmt.Errorf("CreateTopics %s: %w %s", t.Topic, t.Err, t.ErrMessage)
		}
		i = j
	}
	return nil
}

// ledState is what one full Metadata answer says of l's partitions.
type ledState struct {
	led        int // partitions of l with a leader that is a live broker (and not excluded)
	byLeader   map[int32]int
	brokers    int
	controller int32
	fullISR    int // partitions whose ISR has every replica
	// grewAt is, in waitUntil's answer, when the led count last grew:
	// where a stalled step stopped progressing.
	grewAt time.Time
}

// metadataAll sends one Metadata request for every topic.
func metadataAll(ctx context.Context, cl *kgo.Client) (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = nil // all topics
	return req.RequestWith(ctx, cl)
}

// led counts l's partitions that Metadata reports led by a live broker
// (one the response lists) other than exclude (-1: none).
func led(ctx context.Context, cl *kgo.Client, l layout, exclude int32) (ledState, error) {
	resp, err := metadataAll(ctx, cl)
	if err != nil {
		return ledState{}, err
	}
	st := ledState{byLeader: map[int32]int{}, brokers: len(resp.Brokers), controller: resp.ControllerID}
	live := map[int32]bool{}
	for _, b := range resp.Brokers {
		live[b.NodeID] = b.NodeID != exclude
	}
	want := l.topics()
	for _, t := range resp.Topics {
		if t.Topic == nil || t.ErrorCode != 0 {
			continue
		}
		if _, ok := want[*t.Topic]; !ok {
			continue
		}
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 && p.Leader >= 0 && live[p.Leader] {
				st.led++
				st.byLeader[p.Leader]++
			}
			if len(p.ISR) == len(p.Replicas) {
				st.fullISR++
			}
		}
	}
	return st, nil
}

// waitLed polls Metadata until every partition of l is led by a live
// broker other than exclude, or ctx ends; it returns the last state seen
// (how far it got) with ctx's error.
func waitLed(ctx context.Context, cl *kgo.Client, l layout, exclude int32) (ledState, error) {
	return waitUntil(ctx, cl, l, exclude, func(s ledState) bool { return s.led == l.total })
}

func waitUntil(ctx context.Context, cl *kgo.Client, l layout, exclude int32, done func(ledState) bool) (ledState, error) {
	var last ledState
	var grew time.Time
	for {
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		st, err := led(rctx, cl, l, exclude)
		cancel()
		if err == nil {
			if st.led > last.led {
				grew = time.Now()
			}
			st.grewAt = grew
			last = st
			if done(st) {
				return st, nil
			}
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(200 * time.Millisecond): // Metadata is polled: no push of leadership to a client
		}
	}
}

// metadataLatency is the median of n full Metadata requests, after one
// warm-up request that is not counted.
func metadataLatency(ctx context.Context, cl *kgo.Client, n int) (time.Duration, []time.Duration, error) {
	if _, err := metadataAll(ctx, cl); err != nil {
		return 0, nil, err
	}
	var ds []time.Duration
	for range n {
		t0 := time.Now()
		if _, err := metadataAll(ctx, cl); err != nil {
			return 0, ds, err
		}
		ds = append(ds, time.Since(t0))
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], ds, nil
}

// produceEach sends one acks=all record to every partition of l and
// waits for every acknowledgement.
func produceEach(ctx context.Context, seeds []string, l layout) error {
	cl, err := newClient(seeds, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.MaxBufferedRecords(l.total+1), kgo.ProducerLinger(0))
	if err != nil {
		return err
	}
	defer cl.Close()
	var recs []*kgo.Record
	for t, n := range l.topics() {
		for p := range n {
			recs = append(recs, &kgo.Record{Topic: t, Partition: p, Value: []byte("scale")})
		}
	}
	return cl.ProduceSync(ctx, recs...).FirstErr()
}

package chaos

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// producer produces unique values ("p<partition>-<seq>") round robin over
// the partitions, paced, with franz-go's idempotent acks=all producer and
// unlimited retries, and keeps every acknowledged (partition, offset).
type producer struct {
	cl       *kgo.Client
	stop     chan struct{} // closed (once, by halt): produce no more
	stopOnce sync.Once
	done     chan struct{} // closed by the loop when it returns

	mu      sync.Mutex
	acked   []Acked
	failed  int
	lastErr error
	sent    atomic.Int64
}

// startProducer starts the produce loop on its own goroutine; the caller
// ends it with finish.
func startProducer(cl *kgo.Client, topic string, partitions int32, every time.Duration) *producer {
	p := &producer{cl: cl, stop: make(chan struct{}), done: make(chan struct{})}
	go p.loop(topic, partitions, every)
	return p
}

func (p *producer) loop(topic string, partitions int32, every time.Duration) {
	defer close(p.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for seq := int64(0); ; seq++ {
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		part := int32(seq % int64(partitions))
		value := fmt.Sprintf("p%d-%09d", part, seq)
		r := &kgo.Record{Topic: topic, Partition: part, Value: []byte(value)}
		p.sent.Add(1)
		// Background context: a record must never be failed by a
		// cancelled context while the producer could still retry it.
		// Produce blocks only while MaxBufferedRecords are in flight.
		p.cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
			p.mu.Lock()
			defer p.mu.Unlock()
			if err != nil {
				p.failed++
				p.lastErr = err
				return
			}
			p.acked = append(p.acked, Acked{Partition: r.Partition, Offset: r.Offset, Value: string(r.Value)})
		})
	}
}

// finish stops producing and waits up to d for every buffered record to
// be acknowledged or failed. It reports whether the flush completed.
func (p *producer) finish(d time.Duration) bool {
	p.halt()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	select {
	case <-p.done:
	case <-ctx.Done():
		return false
	}
	return p.cl.Flush(ctx) == nil
}

// halt ends the produce loop without waiting (idempotent; the test's
// cleanup calls it when a failure ended the test early).
func (p *producer) halt() { p.stopOnce.Do(func() { close(p.stop) }) }

// results returns the acknowledged records, how many failed and the last
// failure.
func (p *producer) results() ([]Acked, int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Acked(nil), p.acked...), p.failed, p.lastErr
}

// consumer is a group member reading the topic and committing
// automatically; it checks each record belongs to its partition.
type consumer struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}

	consumed atomic.Int64
	foreign  atomic.Int64 // records whose value names another partition
}

func startConsumer(cl *kgo.Client) *consumer {
	ctx, cancel := context.WithCancel(context.Background())
	c := &consumer{cl: cl, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(func(r *kgo.Record) {
				c.consumed.Add(1)
				if !strings.HasPrefix(string(r.Value), fmt.Sprintf("p%d-", r.Partition)) {
					c.foreign.Add(1)
				}
			})
		}
	}()
	return c
}

// finish stops polling and waits for the loop (idempotent; the client's
// Close, registered by the test, leaves the group).
func (c *consumer) finish() {
	c.cancel()
	<-c.done
}

// offsetWatch polls the group's committed offsets and counts every time a
// partition's committed offset is lower than one seen before, or vanished.
type offsetWatch struct {
	adm      *kadm.Client
	group    string
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}

	mu        sync.Mutex
	last      map[int32]int64
	backwards int
	notes     []string
	polls     int
}

func startOffsetWatch(adm *kadm.Client, group, topic string, every time.Duration) *offsetWatch {
	w := &offsetWatch{adm: adm, group: group, stop: make(chan struct{}), done: make(chan struct{}), last: map[int32]int64{}}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
			w.poll(topic)
		}
	}()
	return w
}

func (w *offsetWatch) poll(topic string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resps, err := w.adm.FetchOffsets(ctx, w.group)
	if err != nil {
		return // coordinator moving or loading: no answer, not an answer
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.polls++
	got := map[int32]bool{}
	resps.Each(func(o kadm.OffsetResponse) {
		if o.Topic != topic || o.Err != nil || o.At < 0 {
			return
		}
		got[o.Partition] = true
		if prev, ok := w.last[o.Partition]; ok && o.At < prev {
			w.backwards++
			w.note("partition %d: committed offset went from %d back to %d", o.Partition, prev, o.At)
		}
		if o.At > w.last[o.Partition] {
			w.last[o.Partition] = o.At
		}
	})
	for p, prev := range w.last {
		if !got[p] {
			w.backwards++
			w.note("partition %d: committed offset %d vanished", p, prev)
		}
	}
}

func (w *offsetWatch) note(format string, args ...any) {
	if len(w.notes) < 20 {
		w.notes = append(w.notes, fmt.Sprintf(format, args...))
	}
}

// finish stops the watch and waits for it (idempotent).
func (w *offsetWatch) finish() {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
}

// committed returns the highest committed offset seen per partition.
func (w *offsetWatch) committed() map[int32]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[int32]int64, len(w.last))
	for p, o := range w.last {
		out[p] = o
	}
	return out
}

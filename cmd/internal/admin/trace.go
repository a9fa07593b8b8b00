package admin

import (
	"bufio"
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"gregor/actors"
)

// TraceLine is one event of a merged trace: a broker's /trace event plus
// the admin listener it was read from.
type TraceLine struct {
	actors.TraceEvent
	// Admin is the admin listener URL the event came from ("" when read
	// back from a file that did not have it).
	Admin string `json:"admin,omitempty"`
}

// Trace output formats (TraceOptions.Format).
const (
	FormatJSON = "json" // one TraceLine as JSON per line
	FormatText = "text" // one aligned human-readable line per event
)

// TraceOptions configures TraceMerged.
type TraceOptions struct {
	// URLs are the admin listeners to stream from at once (one per broker).
	URLs  []string
	Query TraceQuery
	// Window is how long an event is held back so that slower streams'
	// earlier events can still be put before it (default 300 ms). Events
	// are written in time order; the broker clocks are assumed in sync
	// (one host, or NTP).
	Window time.Duration
	// Format is FormatJSON (default) or FormatText.
	Format string
	// FollowProduce keeps only the first appended produce (its "Produce
	// received", the leader's *partition.Produce), its replication (the
	// followers' fetch responses and appends overlapping its offsets, the
	// leader's follower fetches that reach past it and move the high
	// watermark) and its "Produce sent"; the trace ends there.
	FollowProduce bool
	// Replay, when set, reads events (JSON lines as written with
	// FormatJSON or by /trace) from it instead of the URLs.
	Replay io.Reader
	// Warn receives per-listener failures while the other streams go on
	// (nil: discarded).
	Warn io.Writer
	// Client supplies the HTTP client (its HC) for the streams; nil:
	// http.DefaultClient.
	Client *Client
}

// TraceMerged streams /trace from every URL at once and writes the events
// merged in time order to w, each tagged with its broker id and admin URL,
// until every stream has ended (Query.Seconds, Query.Limit), the followed
// produce was answered, or ctx is cancelled. A listener that cannot be
// reached is reported on Warn; the error is returned only when none could.
func TraceMerged(ctx context.Context, o TraceOptions, w io.Writer) error {
	out := newTraceSink(o, w)
	if o.Replay != nil {
		return replay(o.Replay, out)
	}
	if len(o.URLs) == 0 {
		return errors.New("no admin listener URL")
	}
	if o.Window <= 0 {
		o.Window = 300 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan TraceLine, 1024)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed []error
	)
	for _, u := range o.URLs {
		wg.Add(1)
		go func(u string) {
			defer wg.Done()
			c := &Client{URL: u}
			if o.Client != nil {
				c.HC = o.Client.HC
			}
			err := c.stream(ctx, o.Query, func(line []byte) error {
				var e TraceLine
				if err := json.Unmarshal(line, &e); err != nil {
					return fmt.Errorf("bad trace line %q: %w", line, err)
				}
				e.Admin = u
				select {
				case ch <- e:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
			if err != nil && ctx.Err() == nil {
				mu.Lock()
				failed = append(failed, fmt.Errorf("%s: %w", u, err))
				mu.Unlock()
				if o.Warn != nil {
					fmt.Fprintf(o.Warn, "trace %s: %v\n", u, err)
				}
			}
		}(u)
	}
	go func() { wg.Wait(); close(ch) }()
	// Drain the streams whatever happens, so every goroutine ends.
	defer func() {
		cancel()
		for range ch {
		}
	}()

	var h eventHeap
	seq := 0
	interrupted := ctx.Done()
	tick := time.NewTicker(o.Window / 2)
	defer tick.Stop()
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				for h.Len() > 0 {
					if out.write(heap.Pop(&h).(heapItem).e) {
						break
					}
				}
				if err := out.err; err != nil {
					return err
				}
				if len(failed) == len(o.URLs) {
					return errors.Join(failed...)
				}
				return nil
			}
			heap.Push(&h, heapItem{e: e, seq: seq})
			seq++
		case <-tick.C:
			cut := time.Now().Add(-o.Window)
			for h.Len() > 0 && !h[0].e.Time.After(cut) {
				if out.write(heap.Pop(&h).(heapItem).e) {
					return out.err
				}
			}
		case <-interrupted:
			// Interrupted: the streams end; the close of ch flushes.
			interrupted = nil
		}
	}
}

// replay reads JSON lines, sorts them by time (stable) and writes them.
func replay(r io.Reader, out *traceSink) error {
	var evs []TraceLine
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var e TraceLine
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return fmt.Errorf("bad trace line %q: %w", line, err)
		}
		evs = append(evs, e)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Time.Before(evs[j].Time) })
	for _, e := range evs {
		if out.write(e) {
			break
		}
	}
	return out.err
}

type heapItem struct {
	e   TraceLine
	seq int // arrival order, for equal times
}

type eventHeap []heapItem

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if !h[i].e.Time.Equal(h[j].e.Time) {
		return h[i].e.Time.Before(h[j].e.Time)
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(heapItem)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// traceSink is the end of the pipeline: the optional produce follower,
// the limit and the formatter.
type traceSink struct {
	w      io.Writer
	format string
	limit  int
	n      int
	follow *ProduceFollower
	err    error
	done   bool
}

func newTraceSink(o TraceOptions, w io.Writer) *traceSink {
	s := &traceSink{w: w, format: o.Format, limit: o.Query.Limit}
	if o.FollowProduce {
		s.follow = &ProduceFollower{Topic: o.Query.Topic}
	}
	return s
}

// write outputs e (through the follower); true means stop.
func (s *traceSink) write(e TraceLine) bool {
	if s.done {
		return true
	}
	evs := []TraceLine{e}
	if s.follow != nil {
		evs, _ = s.follow.Next(e)
	}
	for _, e := range evs {
		if err := writeEvent(s.w, s.format, e); err != nil {
			s.err, s.done = err, true
			return true
		}
		s.n++
		if s.limit > 0 && s.n >= s.limit {
			s.done = true
			return true
		}
	}
	if s.follow != nil && s.follow.Done() {
		s.done = true
	}
	return s.done
}

func writeEvent(w io.Writer, format string, e TraceLine) error {
	if format == FormatText {
		_, err := io.WriteString(w, FormatTraceLine(e)+"\n")
		return err
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// FormatTraceLine renders e on one line: time, broker, kind, actor (or
// "-" for request events), message, correlation id, partition and detail.
func FormatTraceLine(e TraceLine) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s broker=%d %-9s", e.Time.Format("15:04:05.000000"), e.Broker, e.Kind)
	a := e.Actor
	if a == "" {
		a = "-"
	}
	fmt.Fprintf(&b, " %-32s %-26s", a, e.Message)
	if e.CorrelationID >= 0 {
		fmt.Fprintf(&b, " corr=%d", e.CorrelationID)
	}
	if e.Client != "" {
		fmt.Fprintf(&b, " client=%s", e.Client)
	}
	if e.Partition != "" {
		fmt.Fprintf(&b, " %s", e.Partition)
	} else if len(e.Topics) > 0 {
		fmt.Fprintf(&b, " topics=%s", strings.Join(e.Topics, ","))
	}
	if e.Detail != "" {
		fmt.Fprintf(&b, ": %s", e.Detail)
	}
	return strings.TrimRight(b.String(), " ")
}

// ProduceFollower picks one produce out of a time-ordered merged trace and
// keeps its path through the cluster: the leader's "Produce received" and
// *partition.Produce (the first produce appended, to Topic if set), every
// event whose Ranges overlap the produce's offsets on its partition (the
// followers' fetch responses and appends), the leader's
// *partition.followerFetch events where a follower first reports a log
// end offset past the batch or the high watermark passes it, and finally
// the leader's "Produce sent" with the same correlation id.
type ProduceFollower struct {
	Topic string // only a produce to this topic ("" = any)

	received    []TraceLine // recent "Produce received" not matched yet
	started     bool
	done        bool
	leader      int32
	corr        int32
	tp          string
	first, last int64
	caughtUp    map[int64]bool // followers seen past last
}

// Done reports whether the followed produce's reply was seen.
func (f *ProduceFollower) Done() bool { return f.done }

// Next feeds the next event (in time order) and returns the events to
// print because of it (maybe an earlier "Produce received" too); end is
// true once the reply was seen.
func (f *ProduceFollower) Next(e TraceLine) (out []TraceLine, end bool) {
	if f.done {
		return nil, true
	}
	if !f.started {
		switch {
		case e.Kind == "request" && e.Message == "Produce received":
			if len(f.received) == 256 {
				f.received = f.received[1:]
			}
			f.received = append(f.received, e)
		case e.Kind == "partition" && e.Message == "*partition.Produce" && len(e.Ranges) > 0 &&
			(f.Topic == "" || topicOf(e.Partition) == f.Topic):
			f.started, f.leader, f.corr = true, e.Broker, e.CorrelationID
			f.tp, f.first, f.last = e.Partition, e.Ranges[0].First, e.Ranges[0].Last
			f.caughtUp = map[int64]bool{}
			for i := len(f.received) - 1; i >= 0; i-- {
				r := f.received[i]
				if r.Broker == e.Broker && r.CorrelationID == e.CorrelationID {
					out = append(out, r)
					break
				}
			}
			f.received = nil
			out = append(out, e)
		}
		return out, false
	}
	switch {
	case e.Broker == f.leader && e.Kind == "request" && e.Message == "Produce sent" && e.CorrelationID == f.corr:
		f.done = true
		return []TraceLine{e}, true
	case e.Broker == f.leader && e.Message == "*partition.followerFetch" && e.Partition == f.tp:
		r, fo := e.Values["replica"], e.Values["fetch_offset"]
		crossed := e.Values["hw_before"] <= f.last && e.Values["hw"] > f.last
		if (fo > f.last && !f.caughtUp[r]) || crossed {
			if fo > f.last {
				f.caughtUp[r] = true
			}
			return []TraceLine{e}, false
		}
	case e.Message != "*partition.Produce" && f.overlaps(e.Ranges):
		return []TraceLine{e}, false
	}
	return nil, false
}

func (f *ProduceFollower) overlaps(rs []actors.TraceRange) bool {
	for _, r := range rs {
		if r.Partition == f.tp && r.First <= f.last && r.Last >= f.first {
			return true
		}
	}
	return false
}

// topicOf is the topic of a "<topic>-<partition>" name.
func topicOf(tp string) string {
	if i := strings.LastIndexByte(tp, '-'); i >= 0 {
		return tp[:i]
	}
	return tp
}

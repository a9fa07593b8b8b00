package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gregor/actors"
)

// traceServer serves GET /trace: after delay it writes evs as JSON lines
// and ends the stream. It records the query it got.
func traceServer(t *testing.T, delay time.Duration, evs ...actors.TraceEvent) (*httptest.Server, chan string) {
	t.Helper()
	queries := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/trace" {
			http.NotFound(w, r)
			return
		}
		queries <- r.URL.RawQuery
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		enc := json.NewEncoder(w)
		for _, e := range evs {
			_ = enc.Encode(e)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, queries
}

func decodeLines(t *testing.T, out string) []TraceLine {
	t.Helper()
	var evs []TraceLine
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var e TraceLine
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("output line %q: %v", l, err)
		}
		evs = append(evs, e)
	}
	return evs
}

// TestTraceMergedOrdersAndTags: broker 2's stream arrives later than
// broker 1's although its events are interleaved in time; the merged
// output is in time order, each event tagged with its listener, and the
// query reaches every listener.
func TestTraceMergedOrdersAndTags(t *testing.T) {
	t0 := time.Now()
	at := func(ms int, broker int32, msg string) actors.TraceEvent {
		return actors.TraceEvent{Time: t0.Add(time.Duration(ms) * time.Millisecond), Broker: broker, Kind: "partition", Message: msg, CorrelationID: -1}
	}
	s1, q1 := traceServer(t, 0, at(0, 1, "a"), at(20, 1, "c"), at(40, 1, "e"))
	s2, q2 := traceServer(t, 150*time.Millisecond, at(10, 2, "b"), at(30, 2, "d"))
	var out, warn bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := TraceMerged(ctx, TraceOptions{URLs: []string{s1.URL, s2.URL}, Window: time.Second, Warn: &warn,
		Query: TraceQuery{Kinds: []string{"partition", "fetcher"}, Topic: "t", Seconds: 5}}, &out)
	if err != nil {
		t.Fatal(err)
	}
	evs := decodeLines(t, out.String())
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%s@%d", e.Message, e.Broker))
		if want := map[int32]string{1: s1.URL, 2: s2.URL}[e.Broker]; e.Admin != want {
			t.Errorf("event %s tagged %q, want %q", e.Message, e.Admin, want)
		}
	}
	if s := strings.Join(got, " "); s != "a@1 b@2 c@1 d@2 e@1" {
		t.Errorf("merged order %s", s)
	}
	for _, q := range []chan string{q1, q2} {
		if got := <-q; got != "kind=partition&kind=fetcher&seconds=5&topic=t" {
			t.Errorf("query %q", got)
		}
	}
	if warn.Len() != 0 {
		t.Errorf("warnings: %s", warn.String())
	}
}

// TestTraceMergedListenerDown: a listener that cannot be reached is
// reported and the others are still streamed; with none reachable the
// call fails.
func TestTraceMergedListenerDown(t *testing.T) {
	up, _ := traceServer(t, 0, actors.TraceEvent{Time: time.Now(), Broker: 1, Message: "a"})
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	var out, warn bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := TraceMerged(ctx, TraceOptions{URLs: []string{up.URL, downURL}, Warn: &warn}, &out); err != nil {
		t.Fatal(err)
	}
	if evs := decodeLines(t, out.String()); len(evs) != 1 || evs[0].Message != "a" {
		t.Errorf("output %q", out.String())
	}
	if !strings.Contains(warn.String(), downURL) {
		t.Errorf("no warning about %s: %q", downURL, warn.String())
	}
	if err := TraceMerged(ctx, TraceOptions{URLs: []string{downURL}}, &out); err == nil {
		t.Error("no error with every listener down")
	}
}

// TestTraceMergedLimitAndCancel: --limit bounds the merged output, and a
// cancelled context ends a stream that would otherwise run on.
func TestTraceMergedLimitAndCancel(t *testing.T) {
	t0 := time.Now()
	s1, _ := traceServer(t, 0, actors.TraceEvent{Time: t0, Message: "a"}, actors.TraceEvent{Time: t0.Add(2 * time.Millisecond), Message: "c"})
	s2, _ := traceServer(t, 0, actors.TraceEvent{Time: t0.Add(time.Millisecond), Message: "b"})
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := TraceMerged(ctx, TraceOptions{URLs: []string{s1.URL, s2.URL}, Query: TraceQuery{Limit: 2}, Window: 50 * time.Millisecond}, &out); err != nil {
		t.Fatal(err)
	}
	if evs := decodeLines(t, out.String()); len(evs) != 2 || evs[0].Message != "a" || evs[1].Message != "b" {
		t.Errorf("limited output %q", out.String())
	}

	forever, _ := traceServer(t, time.Hour)
	cctx, ccancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer ccancel()
	start := time.Now()
	if err := TraceMerged(cctx, TraceOptions{URLs: []string{forever.URL}}, &out); err != nil {
		t.Errorf("cancelled trace: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancelled trace took %v", d)
	}
}

// acksAllTrace is the merged trace of one acks=-1 produce (corr 17,
// offsets 40..49 of t-0) led by broker 1 and replicated to 2 and 3, among
// other traffic.
func acksAllTrace(t0 time.Time) []TraceLine {
	n := 0
	ev := func(broker int32, kind, actor, msg string, corr int32, part string, ranges []actors.TraceRange, vals map[string]int64) TraceLine {
		n++
		return TraceLine{TraceEvent: actors.TraceEvent{Time: t0.Add(time.Duration(n) * time.Millisecond), Broker: broker, Kind: kind,
			Actor: actor, Message: msg, CorrelationID: corr, Partition: part, Ranges: ranges, Values: vals, Topics: []string{"t"}}}
	}
	rng := func(first, last int64) []actors.TraceRange {
		return []actors.TraceRange{{Partition: "t-0", First: first, Last: last}}
	}
	ff := func(replica, fo, hwBefore, hw int64) map[string]int64 {
		return map[string]int64{"replica": replica, "fetch_offset": fo, "hw_before": hwBefore, "hw": hw}
	}
	const pa, fa = "replica-manager/t-0", "fetcher-manager/fetcher-1-0"
	return []TraceLine{
		ev(1, "request", "", "Produce received", 16, "", nil, nil),                                                         // another client's, refused
		ev(1, "partition", pa, "*partition.Produce", 16, "t-0", nil, nil),                                                  // not appended
		ev(1, "request", "", "Produce sent", 16, "", nil, nil),                                                             //
		ev(1, "request", "", "Produce received", 17, "", nil, nil),                                                         // 3: ours
		ev(1, "partition", pa, "*partition.followerFetch", -1, "t-0", nil, ff(2, 40, 40, 40)),                              // before it: not shown
		ev(1, "partition", pa, "*partition.Produce", 17, "t-0", rng(40, 49), nil),                                          // 5
		ev(2, "fetcher", fa, "*fetcher.result", -1, "t-0", rng(40, 49), nil),                                               // 6
		ev(3, "fetcher", fa, "*fetcher.result", -1, "", []actors.TraceRange{{Partition: "u-0", First: 40, Last: 49}}, nil), // other partition
		ev(2, "partition", pa, "*partition.followerAppend", -1, "t-0", rng(40, 49), nil),                                   // 8
		ev(1, "request", "", "Produce received", 18, "", nil, nil),                                                         // a later produce
		ev(1, "partition", pa, "*partition.Produce", 18, "t-0", rng(50, 50), nil),                                          // not overlapping
		ev(1, "partition", pa, "*partition.followerFetch", -1, "t-0", nil, ff(2, 50, 40, 40)),                              // 11: 2 caught up
		ev(3, "fetcher", fa, "*fetcher.result", -1, "t-0", rng(38, 50), nil),                                               // 12: overlaps
		ev(3, "partition", pa, "*partition.followerAppend", -1, "t-0", rng(38, 50), nil),                                   // 13
		ev(1, "partition", pa, "*partition.followerFetch", -1, "t-0", nil, ff(2, 51, 40, 40)),                              // again: not shown
		ev(1, "partition", pa, "*partition.followerFetch", -1, "t-0", nil, ff(3, 51, 40, 50)),                              // 15: HW passes
		ev(1, "request", "", "Produce sent", 18, "", nil, nil),                                                             // not ours
		ev(2, "request", "", "Produce sent", 17, "", nil, nil),                                                             // another broker's corr 17
		ev(1, "request", "", "Produce sent", 17, "", nil, nil),                                                             // 18: ours
		ev(1, "request", "", "Produce received", 19, "", nil, nil),                                                         // after the end
	}
}

// TestProduceFollower picks the chain of the first appended produce out of
// other traffic and stops at its reply.
func TestProduceFollower(t *testing.T) {
	evs := acksAllTrace(time.Now())
	f := &ProduceFollower{Topic: "t"}
	var got []int
	ended := -1
	for i, e := range evs {
		out, end := f.Next(e)
		for _, o := range out {
			for j := range evs {
				if evs[j].Time.Equal(o.Time) {
					got = append(got, j)
				}
			}
		}
		if end && ended < 0 {
			ended = i
		}
	}
	if s := fmt.Sprint(got); s != "[3 5 6 8 11 12 13 15 18]" {
		t.Errorf("followed events %s, want [3 5 6 8 11 12 13 15 18]", s)
	}
	if ended != 18 || !f.Done() {
		t.Errorf("ended at %d (done %v), want 18", ended, f.Done())
	}
	if out, _ := (&ProduceFollower{Topic: "other"}).Next(evs[5]); len(out) != 0 {
		t.Errorf("a produce to another topic was followed: %+v", out)
	}
}

// TestTraceReplayFollowText replays a shuffled file through the follower
// in text format.
func TestTraceReplayFollowText(t *testing.T) {
	evs := acksAllTrace(time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC))
	var in bytes.Buffer
	for i := len(evs) - 1; i >= 0; i-- { // reversed: replay sorts by time
		b, _ := json.Marshal(evs[i])
		in.Write(append(b, '\n'))
	}
	var out bytes.Buffer
	if err := TraceMerged(context.Background(), TraceOptions{Replay: &in, FollowProduce: true, Format: FormatText, Query: TraceQuery{Topic: "t"}}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 9 {
		t.Fatalf("%d lines:\n%s", len(lines), out.String())
	}
	if want := "10:00:00.004000 broker=1 request   -"; !strings.HasPrefix(lines[0], want) || !strings.Contains(lines[0], "Produce received") ||
		!strings.Contains(lines[0], "corr=17") {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.Contains(lines[2], "broker=2 fetcher   fetcher-manager/fetcher-1-0") || !strings.Contains(lines[2], "*fetcher.result") {
		t.Errorf("third line %q", lines[2])
	}
	if !strings.Contains(lines[8], "Produce sent") || !strings.Contains(lines[8], "corr=17") || !strings.Contains(lines[8], "broker=1") {
		t.Errorf("last line %q", lines[8])
	}
}

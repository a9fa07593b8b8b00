package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gregor/actors"
	"gregor/test/harness"
)

// traceLine is one line of `gregor admin trace` (its JSON output).
type traceLine struct {
	actors.TraceEvent
	Admin string `json:"admin"`
}

// lockedBuffer is a bytes.Buffer written by a child process and polled by
// the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// tracedOn reports whether GET /actors on admin lists the actor at path
// with tracing on.
func tracedOn(hc *http.Client, admin, kind, path string) bool {
	resp, err := hc.Get(admin + "/actors?kind=" + kind)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var list []actors.ActorInfo
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&list) != nil {
		return false
	}
	for _, a := range list {
		if a.Traced && (path == "" || a.Path == path) {
			return true
		}
	}
	return false
}

// TestTraceAcksAllAcrossBrokers runs the real `gregor admin trace` CLI on
// the three admin listeners of an RF 3 cluster while one acks=all batch of
// ten records is produced to the leader, then checks that the merged
// output follows it: "Produce received" and the *partition.Produce on the
// leader (offsets base..base+9), on each follower the fetcher's fetch
// response carrying that range and the partition actor's append of it,
// then on the leader each follower's fetch past the batch, the one that
// moves the high watermark past it (releasing the produce), and "Produce
// sent" with the produce's correlation id, in that order, each tagged
// with the broker it happened on. The saved output replayed with
// --follow-produce --format text gives just that chain.
func TestTraceAcksAllAcrossBrokers(t *testing.T) {
	c, admins := startAdminCluster(t, 3)
	hc := &http.Client{Timeout: 10 * time.Second}
	const topic = "t"
	c.createTopic(topic, 1, 3, nil)
	leader := c.waitServing(topic, 0, 20*time.Second)
	var followers []int32
	for id := int32(1); id <= 3; id++ {
		if id != leader {
			followers = append(followers, id)
		}
	}
	urls := []string{admins[1], admins[2], admins[3]}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var stdout, stderr lockedBuffer
	cli := exec.CommandContext(ctx, harness.Binary(t), "admin", "trace",
		"--admin-url", strings.Join(urls, ","), "--kind", "partition,fetcher", "--topic", topic, "--seconds", "60")
	cli.Stdout, cli.Stderr = &stdout, &stderr
	if err := cli.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cli.Wait() }()
	defer func() {
		if cli.ProcessState == nil {
			_ = cli.Process.Kill()
			<-exited
		}
	}()

	// The trace filter is on once every broker's t-0 actor is traced and
	// the followers' fetchers are.
	c.waitFor("tracing on at every broker", 30*time.Second, func() (bool, string) {
		for id, a := range admins {
			if !tracedOn(hc, a, "partition", "replica-manager/"+topic+"-0") {
				return false, fmt.Sprintf("broker %d partition actor not traced; stderr %s", id, stderr.String())
			}
		}
		for _, f := range followers {
			if !tracedOn(hc, admins[f], "fetcher", "") {
				return false, fmt.Sprintf("broker %d fetcher not traced", f)
			}
		}
		return true, ""
	})

	vals := make([]string, 10)
	for i := range vals {
		vals[i] = fmt.Sprintf("v%d", i)
	}
	code, base := rawProduce(t, c.brokers[leader].Addr(), topic, 0, -1, 10*time.Second, vals...)
	if code != 0 {
		t.Fatalf("acks=all produce: %s", codeName(code))
	}
	last := base + int64(len(vals)) - 1

	// Wait until the merged output holds the leader's "Produce sent"
	// (written once the merge window passed), then interrupt the CLI: it
	// flushes what it holds and exits 0.
	c.waitFor("Produce sent in the trace output", 30*time.Second, func() (bool, string) {
		for _, e := range parseTrace(t, stdout.String()) {
			if e.Broker == leader && e.Kind == "request" && e.Message == "Produce sent" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("stderr: %s", stderr.String())
	})
	if err := cli.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("gregor admin trace: %v\nstderr: %s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("gregor admin trace did not exit after SIGINT")
	}
	out := stdout.String()
	evs := parseTrace(t, out)

	// Merged in time order, every event tagged with a broker and the
	// admin listener of that broker.
	for i, e := range evs {
		if i > 0 && e.Time.Before(evs[i-1].Time) {
			t.Errorf("event %d (%s) is before event %d (%s)", i, e.Time, i-1, evs[i-1].Time)
		}
		if e.Broker < 1 || e.Broker > 3 || e.Admin != admins[e.Broker] {
			t.Errorf("event %d tagged broker %d admin %q: %+v", i, e.Broker, e.Admin, e)
		}
	}

	tp := topic + "-0"
	covers := func(e traceLine) bool {
		for _, r := range e.Ranges {
			if r.Partition == tp && r.First <= base && r.Last >= last {
				return true
			}
		}
		return false
	}
	find := func(from int, what string, pred func(traceLine) bool) int {
		t.Helper()
		for i := max(from, 0); i < len(evs); i++ {
			if pred(evs[i]) {
				return i
			}
		}
		t.Fatalf("trace output has no %s after event %d:\n%s", what, from, out)
		return -1
	}
	iProd := find(0, "leader *partition.Produce of the batch", func(e traceLine) bool {
		return e.Broker == leader && e.Kind == "partition" && e.Message == "*partition.Produce" && covers(e)
	})
	prod := evs[iProd]
	corr := prod.CorrelationID
	if prod.Partition != tp || prod.Actor != "replica-manager/"+tp || prod.Values["acks"] != -1 || prod.Values["wait_hw"] != last+1 {
		t.Errorf("leader produce event %+v", prod)
	}
	find(0, "leader Produce received", func(e traceLine) bool {
		return e.Broker == leader && e.Kind == "request" && e.Message == "Produce received" && e.CorrelationID == corr
	})
	iDone := iProd
	for _, f := range followers {
		iFetch := find(iProd, fmt.Sprintf("broker %d fetch response with the batch", f), func(e traceLine) bool {
			return e.Broker == f && e.Kind == "fetcher" && e.Message == "*fetcher.result" && covers(e)
		})
		if a := evs[iFetch].Actor; !strings.HasPrefix(a, fmt.Sprintf("fetcher-manager/fetcher-%d-", leader)) {
			t.Errorf("broker %d fetch response handled by %s, want a fetcher of leader %d", f, a, leader)
		}
		iApp := find(iFetch, fmt.Sprintf("broker %d follower append of the batch", f), func(e traceLine) bool {
			return e.Broker == f && e.Kind == "partition" && e.Message == "*partition.followerAppend" && covers(e)
		})
		iFF := find(iApp, fmt.Sprintf("leader's record of broker %d fetching past the batch", f), func(e traceLine) bool {
			return e.Broker == leader && e.Message == "*partition.followerFetch" && e.Partition == tp &&
				e.Values["replica"] == int64(f) && e.Values["fetch_offset"] > last
		})
		iDone = max(iDone, iFF)
	}
	iHW := find(iProd, "high watermark passing the batch on the leader", func(e traceLine) bool {
		return e.Broker == leader && e.Message == "*partition.followerFetch" && e.Partition == tp &&
			e.Values["hw_before"] <= last && e.Values["hw"] > last && e.Values["released"] >= 1
	})
	if iHW != iDone {
		t.Errorf("the high watermark passed the batch at event %d, want the last follower's fetch past it (event %d): %+v", iHW, iDone, evs[iHW])
	}
	find(iHW, "leader Produce sent", func(e traceLine) bool {
		return e.Broker == leader && e.Kind == "request" && e.Message == "Produce sent" && e.CorrelationID == corr
	})

	// The same output replayed through --follow-produce: only the chain.
	file := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer rcancel()
	chain, err := exec.CommandContext(rctx, harness.Binary(t), "admin", "trace", "--replay", file,
		"--follow-produce", "--format", "text").CombinedOutput()
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, chain)
	}
	t.Logf("followed produce:\n%s", chain)
	lines := strings.Split(strings.TrimSpace(string(chain)), "\n")
	// received, Produce, 2 × (fetch response, append), 2 follower fetches
	// past the batch, Produce sent.
	if len(lines) != 9 {
		t.Fatalf("followed produce has %d lines, want 9:\n%s", len(lines), chain)
	}
	checkChain(t, lines, leader, corr, base, last)

	// Live: --follow-produce ends on its own at the followed produce's
	// reply, long before --seconds.
	var live, liveErr lockedBuffer
	start := time.Now()
	lcli := exec.CommandContext(ctx, harness.Binary(t), "admin", "trace",
		"--admin-url", urls[0], "--admin-url", urls[1], "--admin-url", urls[2], // the repeated form
		"--kind", "partition,fetcher", "--topic", topic, "--seconds", "60", "--follow-produce", "--format", "text")
	lcli.Stdout, lcli.Stderr = &live, &liveErr
	if err := lcli.Start(); err != nil {
		t.Fatal(err)
	}
	lexited := make(chan error, 1)
	go func() { lexited <- lcli.Wait() }()
	defer func() {
		if lcli.ProcessState == nil {
			_ = lcli.Process.Kill()
			<-lexited
		}
	}()
	c.waitFor("tracing on again at every broker", 30*time.Second, func() (bool, string) {
		for id, a := range admins {
			if !tracedOn(hc, a, "partition", "replica-manager/"+topic+"-0") {
				return false, fmt.Sprintf("broker %d partition actor not traced; stderr %s", id, liveErr.String())
			}
		}
		return true, ""
	})
	code, base2 := rawProduce(t, c.brokers[leader].Addr(), topic, 0, -1, 10*time.Second, vals...)
	if code != 0 || base2 != last+1 {
		t.Fatalf("second produce: %s at %d, want offset %d", codeName(code), base2, last+1)
	}
	select {
	case err := <-lexited:
		if err != nil {
			t.Fatalf("gregor admin trace --follow-produce: %v\nstderr: %s", err, liveErr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("gregor admin trace --follow-produce did not end at the reply; output:\n%s", live.String())
	}
	if d := time.Since(start); d > 50*time.Second {
		t.Errorf("--follow-produce ran %v", d)
	}
	t.Logf("live --follow-produce:\n%s", live.String())
	liveLines := strings.Split(strings.TrimSpace(live.String()), "\n")
	if len(liveLines) != 9 {
		t.Fatalf("live followed produce has %d lines, want 9:\n%s", len(liveLines), live.String())
	}
	checkChain(t, liveLines, leader, -1, base2, base2+int64(len(vals))-1)
}

// checkChain checks the fixed lines of a followed acks=all produce in text
// format: received and appended on the leader first, the high watermark
// passing the batch and the reply last (corr < 0: any correlation id).
func checkChain(t *testing.T, lines []string, leader, corr int32, base, last int64) {
	t.Helper()
	c := "corr="
	if corr >= 0 {
		c += fmt.Sprint(corr)
	}
	for i, want := range map[int]string{
		0: fmt.Sprintf("broker=%d request", leader) + "|Produce received|" + c,
		1: fmt.Sprintf("broker=%d partition", leader) + "|*partition.Produce|" + fmt.Sprintf("offsets %d..%d", base, last),
		7: fmt.Sprintf("broker=%d partition", leader) + "|*partition.followerFetch|" + fmt.Sprintf("-> %d", last+1) + "|released 1",
		8: fmt.Sprintf("broker=%d request", leader) + "|Produce sent|" + c,
	} {
		for _, part := range strings.Split(want, "|") {
			if !strings.Contains(lines[i], part) {
				t.Errorf("followed line %d %q lacks %q", i, lines[i], part)
			}
		}
	}
}

// parseTrace decodes the CLI's JSON lines; a trailing partial line (the
// CLI is still writing) is left for the next poll.
func parseTrace(t *testing.T, out string) []traceLine {
	t.Helper()
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[:i+1]
	} else {
		out = ""
	}
	var evs []traceLine
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e traceLine
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		evs = append(evs, e)
	}
	return evs
}

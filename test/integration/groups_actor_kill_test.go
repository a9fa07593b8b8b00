package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// groupActorInfo is one entry of the admin listener's GET /actors.
type groupActorInfo struct {
	Path     string `json:"path"`
	Kind     string `json:"kind"`
	Restarts int64  `json:"restarts"`
}

// groupActors lists the live group actors (GET /actors?kind=group).
func groupActors(t *testing.T, hc *http.Client, admin string) []groupActorInfo {
	t.Helper()
	resp, err := hc.Get(admin + "/actors?kind=group")
	if err != nil {
		t.Fatalf("GET /actors: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /actors: %s: %s", resp.Status, body)
	}
	var out []groupActorInfo
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("GET /actors: %v: %s", err, body)
	}
	return out
}

// groupActor finds the actor of group (path "group-coordinator/group-<n>-<group>").
func groupActor(t *testing.T, hc *http.Client, admin, group string) (groupActorInfo, bool) {
	t.Helper()
	for _, a := range groupActors(t, hc, admin) {
		if a.Kind == "group" && strings.HasPrefix(a.Path, "group-coordinator/group-") && strings.HasSuffix(a.Path, "-"+group) {
			return a, true
		}
	}
	return groupActorInfo{}, false
}

// TestGroupActorKillKeepsConsumerGroup: a franz-go group consumer reads
// and commits; its group's actor is killed through POST /faults. The
// supervisor restarts it (counted in /actors), the actor rebuilds the
// group from __consumer_offsets, and the same consumer goes on consuming
// and committing; a consumer started afterwards in the same group reads
// only what was never committed.
func TestGroupActorKillKeepsConsumerGroup(t *testing.T) {
	adminPort := harness.FreePort(t)
	b := harness.StartBroker(t, map[string]string{"admin.listener": fmt.Sprintf("127.0.0.1:%d", adminPort)})
	admin := fmt.Sprintf("http://127.0.0.1:%d", adminPort)
	hc := &http.Client{Timeout: 10 * time.Second}
	const topic, group = "gkill", "gkill-group"
	createTopic(t, b, topic, 3, nil)
	produceValues(t, b, topic, "a", 0, 30)

	consumer := func() *kgo.Client {
		return b.Client(kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.DisableAutoCommit(), kgo.FetchMaxWait(500*time.Millisecond))
	}
	// readUntil polls cl until every value in want was read (re-reads are
	// kept in the result: the caller decides whether they are allowed).
	readUntil := func(cl *kgo.Client, what string, want map[string]bool) []string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var got []string
		missing := len(want)
		seen := map[string]bool{}
		for missing > 0 {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("%s: %d of %d records read before the deadline (read %v)", what, len(want)-missing, len(want), got)
			}
			fs.EachError(func(tp string, p int32, err error) { t.Logf("%s: fetch %s/%d: %v", what, tp, p, err) })
			fs.EachRecord(func(r *kgo.Record) {
				v := string(r.Value)
				got = append(got, v)
				if want[v] && !seen[v] {
					seen[v] = true
					missing--
				}
			})
		}
		return got
	}
	values := func(prefix string, from, to int) map[string]bool {
		m := map[string]bool{}
		for i := from; i < to; i++ {
			m[fmt.Sprintf("%s-%d", prefix, i)] = true
		}
		return m
	}
	// committed is the group's committed offsets summed over the topic's
	// partitions (-1 while some partition has none).
	adm := kadm.NewClient(b.Client())
	committed := func() int64 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		offs, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			t.Logf("fetch offsets: %v", err)
			return -1
		}
		var sum int64
		for p := int32(0); p < 3; p++ {
			o, ok := offs.Lookup(topic, p)
			if !ok || o.Err != nil {
				return -1
			}
			sum += o.At
		}
		return sum
	}

	cl := consumer()
	readUntil(cl, "before the kill", values("a", 0, 30))
	harness.CommitUncommitted(t, cl, "before the kill")
	if n := committed(); n != 30 {
		t.Fatalf("committed %d records before the kill, want 30", n)
	}

	// Kill the group's actor.
	var before groupActorInfo
	waitFor(t, 20*time.Second, "the group's actor in /actors", func() bool {
		var ok bool
		before, ok = groupActor(t, hc, admin, group)
		return ok
	})
	resp, err := hc.Post(admin+"/faults", "application/json",
		strings.NewReader(`{"action":"kill","actor":"`+before.Path+`"}`))
	if err != nil {
		t.Fatalf("POST /faults: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), before.Path) {
		t.Fatalf("POST /faults kill %s: %s %s", before.Path, resp.Status, body)
	}
	waitFor(t, 20*time.Second, "the group actor's restart in /actors", func() bool {
		a, ok := groupActor(t, hc, admin, group)
		return ok && a.Path == before.Path && a.Restarts == before.Restarts+1
	})

	// The same consumer keeps consuming and committing.
	produceValues(t, b, topic, "b", 0, 20)
	after := readUntil(cl, "after the kill", values("b", 0, 20))
	for _, v := range after {
		if strings.HasPrefix(v, "a-") {
			t.Fatalf("after the kill the consumer re-read %s, consumed and committed before it", v)
		}
	}
	harness.CommitUncommitted(t, cl, "after the kill")
	if n := committed(); n != 50 {
		t.Fatalf("committed %d records after the kill, want 50", n)
	}
	cl.Close()

	// A consumer restarted in the group resumes at the commits: it reads
	// only the records produced since.
	produceValues(t, b, topic, "c", 0, 10)
	cl2 := consumer()
	for _, v := range readUntil(cl2, "restarted consumer", values("c", 0, 10)) {
		if !strings.HasPrefix(v, "c-") {
			t.Fatalf("the restarted consumer re-read %s, committed before", v)
		}
	}
	if a, ok := groupActor(t, hc, admin, group); !ok || a.Restarts != before.Restarts+1 {
		t.Errorf("group actor after the restarted consumer joined: %+v (found %v), want %d restarts", a, ok, before.Restarts+1)
	}
}

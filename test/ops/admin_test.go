// Package ops tests the admin listener of a real broker process:
// /metrics moves with traffic, /actors lists the partition actors, a kill
// through /faults restarts a partition actor that then serves again, a
// request fault reaches a client, and /trace streams a produce through the
// partition actor.
package ops

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

type adminClient struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func (a *adminClient) get(path string) []byte {
	a.t.Helper()
	resp, err := a.hc.Get(a.base + path)
	if err != nil {
		a.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		a.t.Fatalf("GET %s: %s: %s", path, resp.Status, b)
	}
	return b
}

func (a *adminClient) post(path, body string) (int, []byte) {
	a.t.Helper()
	resp, err := a.hc.Post(a.base+path, "application/json", strings.NewReader(body))
	if err != nil {
		a.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

type actorInfo struct {
	Path     string `json:"path"`
	Kind     string `json:"kind"`
	Restarts int64  `json:"restarts"`
	Mailbox  int    `json:"mailbox"`
	Traced   bool   `json:"traced"`
}

func (a *adminClient) actor(path string) (actorInfo, bool) {
	a.t.Helper()
	var list []actorInfo
	if err := json.Unmarshal(a.get("/actors"), &list); err != nil {
		a.t.Fatalf("/actors: %v", err)
	}
	for _, x := range list {
		if x.Path == path {
			return x, true
		}
	}
	return actorInfo{}, false
}

// metric returns the value of the sample whose name and label set match
// exactly (labels as in the exposition, e.g. `topic="ops"`), or -1.
func (a *adminClient) metric(name, labels string) float64 {
	a.t.Helper()
	want := name
	if labels != "" {
		want += "{" + labels + "}"
	}
	for _, line := range strings.Split(string(a.get("/metrics")), "\n") {
		if strings.HasPrefix(line, want+" ") {
			v, err := strconv.ParseFloat(strings.TrimSpace(line[len(want):]), 64)
			if err != nil {
				a.t.Fatalf("metric line %q: %v", line, err)
			}
			return v
		}
	}
	return -1
}

func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func produce(t *testing.T, cl *kgo.Client, topic string, n int, tag string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("%s-%d", tag, i))}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce %s: %v", tag, err)
	}
}

func consumeAll(t *testing.T, b *harness.Broker, topic string, n int) []string {
	t.Helper()
	cl := b.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []string
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records of %s", len(out), n, topic)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	return out
}

func TestAdminListener(t *testing.T) {
	adminPort := harness.FreePort(t)
	b := harness.StartBroker(t, map[string]string{"admin.listener": fmt.Sprintf("127.0.0.1:%d", adminPort)})
	a := &adminClient{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", adminPort), hc: &http.Client{Timeout: 10 * time.Second}}
	const topic = "ops"

	cl := b.Client(kgo.RecordRetries(20), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatalf("create topic: %v", err)
	}

	// 1. Counters move with traffic, by exactly what was produced.
	if v := a.metric("kafka_server_brokertopicmetrics_messages_in_total", `topic="ops"`); v > 0 {
		t.Fatalf("messages_in before producing = %v", v)
	}
	produce(t, cl, topic, 25, "a")
	if got := consumeAll(t, b, topic, 25); got[0] != "a-0" || got[24] != "a-24" {
		t.Fatalf("consumed %v…", got[:2])
	}
	if v := a.metric("kafka_server_brokertopicmetrics_messages_in_total", `topic="ops"`); v != 25 {
		t.Errorf("messages_in{ops} = %v, want 25", v)
	}
	bytesIn := a.metric("kafka_server_brokertopicmetrics_bytes_in_total", `topic="ops"`)
	if bytesIn < 25*3 || bytesIn > 25*200 {
		t.Errorf("bytes_in{ops} = %v, want about the size of 25 small records", bytesIn)
	}
	if v := a.metric("kafka_server_brokertopicmetrics_bytes_out_total", `topic="ops"`); v < bytesIn {
		t.Errorf("bytes_out{ops} = %v after reading everything once, want >= bytes_in %v", v, bytesIn)
	}
	if v := a.metric("kafka_network_requestmetrics_requests_total", `request="Produce"`); v < 1 {
		t.Errorf("requests_total{Produce} = %v", v)
	}
	if v := a.metric("kafka_network_requestmetrics_time_seconds_count", `phase="total",request="Produce"`); v < 1 {
		t.Errorf("Produce total time histogram count = %v", v)
	}
	if v := a.metric("kafka_controller_kafkacontroller_active_controller_count", ""); v != 1 {
		t.Errorf("active controller count = %v on the single node, want 1", v)
	}
	if v := a.metric("kafka_server_replicamanager_under_replicated_partitions", ""); v != 0 {
		t.Errorf("under-replicated = %v, want 0", v)
	}

	// 2. The live tree lists the partition actor.
	const path = "replica-manager/ops-0"
	info, ok := a.actor(path)
	if !ok || info.Kind != "partition" || info.Restarts != 0 {
		t.Fatalf("/actors entry for %s: %+v (found %v)", path, info, ok)
	}

	// 3. /trace follows a produce: request received → partition actor → sent.
	traceDone := make(chan []map[string]any, 1)
	go func() {
		resp, err := a.hc.Get(a.base + "/trace?kind=partition&topic=ops&seconds=15")
		if err != nil {
			traceDone <- nil
			return
		}
		defer resp.Body.Close()
		var evs []map[string]any
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var e map[string]any
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				evs = append(evs, e)
			}
			if e["message"] == "Produce sent" {
				break
			}
		}
		traceDone <- evs
	}()
	poll(t, "tracing on for "+path, func() bool { i, _ := a.actor(path); return i.Traced })
	produce(t, cl, topic, 1, "traced")
	var evs []map[string]any
	select {
	case evs = <-traceDone:
	case <-time.After(20 * time.Second):
		t.Fatal("trace stream did not deliver")
	}
	var corr float64 = -1
	var sawActor bool
	for _, e := range evs {
		if e["message"] == "Produce received" {
			corr = e["correlation_id"].(float64)
		}
		if e["actor"] == path && e["message"] == "*partition.Produce" {
			sawActor = e["correlation_id"].(float64) == corr
		}
	}
	if corr < 0 || !sawActor {
		t.Errorf("trace did not follow the produce (received corr %v, actor event with it %v): %v", corr, sawActor, evs)
	}
	poll(t, "tracing off after the stream", func() bool { i, _ := a.actor(path); return !i.Traced })

	// 4. Kill the partition actor: it restarts, is counted, and serves again.
	code, body := a.post("/faults", `{"action":"kill","actor":"`+path+`"}`)
	if code != http.StatusOK || !bytes.Contains(body, []byte(path)) {
		t.Fatalf("POST /faults kill: %d %s", code, body)
	}
	poll(t, "restart counted in /actors", func() bool { i, _ := a.actor(path); return i.Restarts == 1 })
	if v := a.metric("gregor_actor_restarts_total", `kind="partition"`); v != 1 {
		t.Errorf("gregor_actor_restarts_total{partition} = %v, want 1", v)
	}
	if v := a.metric("gregor_faults_injected_total", `action="kill"`); v != 1 {
		t.Errorf("gregor_faults_injected_total{kill} = %v, want 1", v)
	}
	produce(t, cl, topic, 5, "b")
	got := consumeAll(t, b, topic, 31)
	if got[25] != "traced-0" || got[26] != "b-0" || got[30] != "b-4" {
		t.Errorf("after the kill the log reads %v", got[24:])
	}
	if code, _ := a.post("/faults", `{"action":"kill","actor":"replica-manager/nope-0"}`); code != http.StatusNotFound {
		t.Errorf("kill of an unknown actor: HTTP %d, want 404", code)
	}

	// 5. A request fault reaches the client (non-retriable, so not hidden by retries).
	code, body = a.post("/faults", `{"request":"Produce","action":"error","error":"TOPIC_AUTHORIZATION_FAILED","count":1}`)
	if code != http.StatusOK {
		t.Fatalf("POST request fault: %d %s", code, body)
	}
	err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("refused")}).FirstErr()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("produce under the fault: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	if v := a.metric("kafka_network_requestmetrics_errors_total", `error="TOPIC_AUTHORIZATION_FAILED",request="Produce"`); v != 1 {
		t.Errorf("errors_total{Produce,TOPIC_AUTHORIZATION_FAILED} = %v, want 1", v)
	}
	produce(t, cl, topic, 1, "after-fault") // count 1: the fault cleared itself
	if !bytes.Contains(a.get("/debug/pprof/"), []byte("goroutine")) {
		t.Error("pprof index missing")
	}
}

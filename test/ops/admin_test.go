// Package ops tests the admin listener of a real broker process:
// /metrics moves with traffic, /actors lists the partition actors, a kill
// through /faults restarts a partition actor that then serves again,
// request faults (error, drop, delay) reach a client as documented, an
// actor delay backs up the partition actor's mailbox, a random kill
// restarts whichever actor it hit, and /trace streams a produce through
// the partition actor.
package ops

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/test/harness"
)

type adminClient struct {
	t    *testing.T
	base string
	hc   *http.Client
}

// startAdminBroker starts a broker with an admin listener and returns it,
// a client of that listener, and a Kafka client of the broker that
// retries a record 20 times, 50 ms apart (through injected faults and
// actor restarts), closed at test end.
func startAdminBroker(t *testing.T) (*harness.Broker, *adminClient, *kgo.Client) {
	t.Helper()
	adminPort := harness.FreePort(t)
	b := harness.StartBroker(t, map[string]string{"admin.listener": fmt.Sprintf("127.0.0.1:%d", adminPort)})
	a := &adminClient{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", adminPort), hc: &http.Client{Timeout: 10 * time.Second}}
	cl := b.Client(kgo.RecordRetries(20), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	return b, a, cl
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

// metricSum sums the samples of name whose labels start with labels
// (the first labels in Prometheus's sorted order), over the rest (the
// request version of kafka_network_requestmetrics_requests_total);
// -1 when there is none.
func (a *adminClient) metricSum(name, labels string) float64 {
	a.t.Helper()
	sum, found := 0.0, false
	for _, line := range strings.Split(string(a.get("/metrics")), "\n") {
		rest, ok := strings.CutPrefix(line, name+"{"+labels)
		if !ok || rest == "" || (rest[0] != ',' && rest[0] != '}') {
			continue
		}
		i := strings.LastIndexByte(rest, ' ')
		v, err := strconv.ParseFloat(strings.TrimSpace(rest[i+1:]), 64)
		if err != nil {
			a.t.Fatalf("metric line %q: %v", line, err)
		}
		sum, found = sum+v, true
	}
	if !found {
		return -1
	}
	return sum
}

// metric0 is metric with an absent sample read as 0 (a counter not yet
// incremented for that label set).
func (a *adminClient) metric0(name, labels string) float64 {
	a.t.Helper()
	return max(a.metric(name, labels), 0)
}

// rawConn is a bare Kafka connection: requests are written as they are and
// responses read in order, so a test sees exactly what the broker sends
// (or does not send), with no client retry in between.
type rawConn struct {
	t    *testing.T
	c    net.Conn
	fmtr *kmsg.RequestFormatter
	corr int32
}

func dialRaw(t *testing.T, b *harness.Broker) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", b.Addr(), err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, fmtr: kmsg.NewRequestFormatter(kmsg.FormatterClientID("ops-raw"))}
}

// send writes one request (non-flexible versions only: the response header
// read back is v0) and returns its correlation id.
func (r *rawConn) send(req kmsg.Request) int32 {
	r.t.Helper()
	if req.IsFlexible() {
		r.t.Fatalf("rawConn reads v0 response headers; %s v%d is flexible", kmsg.NameForKey(req.Key()), req.GetVersion())
	}
	r.corr++
	if _, err := r.c.Write(r.fmtr.AppendRequest(nil, req, r.corr)); err != nil {
		r.t.Fatalf("write request: %v", err)
	}
	return r.corr
}

// recv reads the next response frame within d: its correlation id and
// body, or the read error (io.EOF when the broker closed the connection, a
// timeout when it sent nothing).
func (r *rawConn) recv(d time.Duration) (int32, []byte, error) {
	_ = r.c.SetReadDeadline(time.Now().Add(d))
	var size [4]byte
	if _, err := io.ReadFull(r.c, size[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 1<<20 {
		return 0, nil, fmt.Errorf("response frame of %d bytes", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r.c, body); err != nil {
		return 0, nil, err
	}
	return int32(binary.BigEndian.Uint32(body[:4])), body[4:], nil
}

// expect reads the next response and decodes it into resp, failing unless
// it answers correlation id corr.
func (r *rawConn) expect(corr int32, resp kmsg.Response) {
	r.t.Helper()
	got, body, err := r.recv(10 * time.Second)
	if err != nil {
		r.t.Fatalf("response to %d: %v", corr, err)
	}
	if got != corr {
		r.t.Fatalf("response for correlation id %d, want %d", got, corr)
	}
	if err := resp.ReadFrom(body); err != nil {
		r.t.Fatalf("decode %s response: %v", kmsg.NameForKey(resp.Key()), err)
	}
}

// v2 sets m's version to 2. The raw connection's requests are ListGroups
// and ApiVersions at v2: non-flexible (v0 response headers), and no
// client in the test sends ListGroups on its own, so a request fault
// armed on it hits only the requests sent here.
func v2[M interface{ SetVersion(int16) }](m M) M {
	m.SetVersion(2)
	return m
}

func armRequestFault(t *testing.T, a *adminClient, body string) {
	t.Helper()
	if code, resp := a.post("/faults", body); code != http.StatusOK {
		t.Fatalf("POST /faults %s: %d %s", body, code, resp)
	}
}

// closedConn reports whether err is the peer closing the connection.
func closedConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
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
	b, a, cl := startAdminBroker(t)
	const topic = "ops"

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
	// A consumer's Fetch counts as Fetch and FetchConsumer (Kafka's RequestMetrics).
	if f, fc := a.metricSum("kafka_network_requestmetrics_requests_total", `request="Fetch"`), a.metricSum("kafka_network_requestmetrics_requests_total", `request="FetchConsumer"`); fc < 1 || fc > f {
		t.Errorf("requests_total{FetchConsumer} = %v with {Fetch} = %v; want at least 1 and at most Fetch's", fc, f)
	}
	if v := a.metricSum("kafka_network_requestmetrics_requests_total", `request="Produce"`); v < 1 {
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
		// The partition actor's event is published once its Receive
		// returns, which may be after the reply it sent has already gone
		// out as "Produce sent": read until both are in (or the stream's
		// 15 s end).
		var evs []map[string]any
		var sent, inActor bool
		sc := bufio.NewScanner(resp.Body)
		for !(sent && inActor) && sc.Scan() {
			var e map[string]any
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				evs = append(evs, e)
			}
			sent = sent || e["message"] == "Produce sent"
			inActor = inActor || e["actor"] == path && e["message"] == "*partition.Produce"
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
	if v := a.metric("gregor_faults_injected_total", `action="request_error"`); v != 1 {
		t.Errorf("gregor_faults_injected_total{request_error} = %v, want 1", v)
	}

	// 6. drop: the request is never answered and the broker closes the
	// connection (RequestDrop: a lost network path). Requests before it on
	// the connection are answered, those after it are not; a new
	// connection works at once (count 1 cleared the fault).
	armRequestFault(t, a, `{"request":"ListGroups","action":"drop","count":1}`)
	rc := dialRaw(t, b)
	before := rc.send(v2(kmsg.NewPtrApiVersionsRequest()))
	dropped := rc.send(v2(kmsg.NewPtrListGroupsRequest()))
	rc.send(v2(kmsg.NewPtrApiVersionsRequest()))
	rc.expect(before, v2(kmsg.NewPtrApiVersionsResponse()))
	if corr, _, err := rc.recv(5 * time.Second); !closedConn(err) {
		t.Errorf("after a dropped request (correlation id %d): read correlation id %d, error %v; want the connection closed", dropped, corr, err)
	}
	rc2 := dialRaw(t, b)
	lg := v2(kmsg.NewPtrListGroupsResponse())
	rc2.expect(rc2.send(v2(kmsg.NewPtrListGroupsRequest())), lg)
	if lg.ErrorCode != 0 {
		t.Errorf("ListGroups after the drop cleared: error %d", lg.ErrorCode)
	}
	// A real client sees the connection close and retries the request on
	// a new one: one drop costs it a retry, not an error.
	armRequestFault(t, a, `{"request":"ListGroups","action":"drop","count":1}`)
	lctx, lcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer lcancel()
	if _, err := adm.ListGroups(lctx); err != nil {
		t.Errorf("kadm ListGroups through one dropped request: %v (the client should retry)", err)
	}
	if v := a.metric("gregor_faults_injected_total", `action="request_drop"`); v != 2 {
		t.Errorf("gregor_faults_injected_total{request_drop} = %v, want 2", v)
	}

	// 7. delay: the response comes no sooner than ms later, and the
	// connection's next request waits behind it (RequestDelay).
	const delay = 300 * time.Millisecond
	armRequestFault(t, a, fmt.Sprintf(`{"request":"ListGroups","action":"delay","ms":%d,"count":1}`, delay.Milliseconds()))
	rc3 := dialRaw(t, b)
	start := time.Now()
	slow := rc3.send(v2(kmsg.NewPtrListGroupsRequest()))
	next := rc3.send(v2(kmsg.NewPtrApiVersionsRequest()))
	rc3.expect(slow, v2(kmsg.NewPtrListGroupsResponse()))
	if el := time.Since(start); el < delay {
		t.Errorf("delayed ListGroups answered after %v, want >= %v", el, delay)
	}
	rc3.expect(next, v2(kmsg.NewPtrApiVersionsResponse()))
	if el := time.Since(start); el < delay {
		t.Errorf("the request behind the delayed one answered after %v, want >= %v", el, delay)
	}
	if v := a.metric("gregor_faults_injected_total", `action="request_delay"`); v != 1 {
		t.Errorf("gregor_faults_injected_total{request_delay} = %v, want 1", v)
	}
	if list := a.get("/faults"); bytes.Contains(list, []byte(`"action"`)) {
		t.Errorf("request faults still armed after each hit its count: %s", list)
	}

	// 8. An actor delay holds the partition actor while a produce queues
	// behind it: the mailbox depth shows it, in /actors and in
	// gregor_actor_mailbox_depth{kind="partition"}, and drains after.
	code, body = a.post("/faults", `{"action":"delay","actor":"`+path+`","ms":2000}`)
	if code != http.StatusOK || !bytes.Contains(body, []byte(path)) {
		t.Fatalf("POST /faults delay: %d %s", code, body)
	}
	produced := make(chan error, 1)
	pctx, pcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer pcancel()
	cl.Produce(pctx, &kgo.Record{Topic: topic, Value: []byte("behind-delay")}, func(_ *kgo.Record, err error) { produced <- err })
	queued := false
	poll(t, "a queued message in the delayed partition actor's mailbox", func() bool {
		if i, _ := a.actor(path); i.Mailbox > 0 {
			queued = true
		}
		return queued && a.metric("gregor_actor_mailbox_depth", `kind="partition"`) > 0
	})
	select {
	case err := <-produced:
		if err != nil {
			t.Errorf("produce behind the actor delay: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("produce behind the actor delay never completed")
	}
	poll(t, "the partition mailboxes drained", func() bool {
		return a.metric("gregor_actor_mailbox_depth", `kind="partition"`) == 0
	})
	if v := a.metric("gregor_faults_injected_total", `action="delay"`); v != 1 {
		t.Errorf("gregor_faults_injected_total{delay} = %v, want 1", v)
	}

	// 9. A random kill hits some live actor of any kind; whichever it was
	// restarts, is counted in /actors and gregor_actor_restarts_total, and
	// the broker still serves produce and fetch afterwards (a parent too:
	// TestReplicaManagerKillKeepsPartitions).
	var live []actorInfo
	if err := json.Unmarshal(a.get("/actors"), &live); err != nil {
		t.Fatalf("/actors: %v", err)
	}
	kindRestarts := map[string]float64{}
	for _, x := range live {
		kindRestarts[x.Kind] = a.metric0("gregor_actor_restarts_total", `kind="`+x.Kind+`"`)
	}
	code, body = a.post("/faults", `{"action":"kill","random":true}`)
	var fresp struct {
		Injected []struct{ Actor, Kind string }
	}
	if code != http.StatusOK || json.Unmarshal(body, &fresp) != nil || len(fresp.Injected) != 1 {
		t.Fatalf("POST /faults random kill: %d %s", code, body)
	}
	victim := fresp.Injected[0]
	victimRestarts := int64(-1)
	for _, x := range live {
		if x.Path == victim.Actor {
			victimRestarts = x.Restarts
		}
	}
	if victimRestarts < 0 {
		t.Fatalf("random kill hit %q, which /actors did not list", victim.Actor)
	}
	t.Logf("random kill hit %s (%s)", victim.Actor, victim.Kind)
	poll(t, "restart of "+victim.Actor+" counted in /actors", func() bool {
		i, ok := a.actor(victim.Actor)
		return ok && i.Restarts == victimRestarts+1
	})
	if v, want := a.metric0("gregor_actor_restarts_total", `kind="`+victim.Kind+`"`), kindRestarts[victim.Kind]+1; v != want {
		t.Errorf("gregor_actor_restarts_total{%s} = %v after killing %s, want %v", victim.Kind, v, victim.Actor, want)
	}
	if v := a.metric("gregor_faults_injected_total", `action="kill"`); v != 2 {
		t.Errorf("gregor_faults_injected_total{kill} = %v, want 2", v)
	}
	produce(t, cl, topic, 1, "after-random-kill")
	if got := consumeAll(t, b, topic, 34); got[31] != "after-fault-0" || got[32] != "behind-delay" || got[33] != "after-random-kill-0" {
		t.Errorf("after the random kill of %s the log ends %v", victim.Actor, got[30:])
	}

	if !bytes.Contains(a.get("/debug/pprof/"), []byte("goroutine")) {
		t.Error("pprof index missing")
	}
}

// TestReplicaManagerKillKeepsPartitions: a kill of the replica-manager
// actor, like any actor kill (README, Supervision policy: "A panic in an
// actor restarts that actor only; the broker keeps serving everything
// else"), leaves its partitions serving. protoactor restarts an actor by
// stopping its children first; when the partition actors were the
// manager's children, the manager took each of those stops for an outage
// (partition/offline.go childTerminated), marked the replica offline and
// reported it to the controller, and a single-replica partition had no
// leader (LEADER_NOT_AVAILABLE) until the broker restarted. The partition
// actors are now root actors the manager watches, so its restart stops
// none of them.
func TestReplicaManagerKillKeepsPartitions(t *testing.T) {
	b, a, cl := startAdminBroker(t)
	const topic = "rm"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	produce(t, cl, topic, 1, "before")
	if code, body := a.post("/faults", `{"action":"kill","actor":"replica-manager"}`); code != http.StatusOK {
		t.Fatalf("POST /faults kill replica-manager: %d %s", code, body)
	}
	poll(t, "replica-manager restart counted", func() bool { i, _ := a.actor("replica-manager"); return i.Restarts == 1 })
	if i, ok := a.actor("replica-manager/" + topic + "-0"); !ok || i.Restarts != 0 {
		t.Errorf("partition actor after the replica-manager restart: %+v (listed %v), want it running, not restarted", i, ok)
	}
	produce(t, cl, topic, 1, "after")
	if got := consumeAll(t, b, topic, 2); got[0] != "before-0" || got[1] != "after-0" {
		t.Errorf("after the replica-manager kill the log reads %v", got)
	}
	if v := a.metric("kafka_server_replicamanager_offline_replica_count", ""); v > 0 {
		t.Errorf("offline_replica_count = %v after a replica-manager restart, want 0", v)
	}
}

package broker

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/actors/txncoordinator"
)

type actorEntry struct {
	Path     string `json:"path"`
	Kind     string `json:"kind"`
	Restarts int64  `json:"restarts"`
	Traced   bool   `json:"traced"`
}

func listActors(t *testing.T, hc *http.Client, base, kind string) []actorEntry {
	t.Helper()
	resp, err := hc.Get(base + "/actors?kind=" + kind)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []actorEntry
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTransactionActorsTracedAndKillable: the transaction coordinator's
// actors are in /actors (the manager "txn-coordinator", one
// "txn-coordinator/txn-<p>-<n>" of kind txn per __transaction_state
// partition), GET /trace?kind=txn follows a transaction through its
// partition's actor (each request with its API and transactional id, the
// __transaction_state appends, the WriteTxnMarkers answer), and a /faults
// kill restarts the actor, which reloads its partition and serves the
// same transactional id at its next epoch, and a kill of the manager
// restarts it alone, still routing to the partition actors it had.
func TestTransactionActorsTracedAndKillable(t *testing.T) {
	b, cl := startTxnNode(t, map[string]string{"admin.listener": "127.0.0.1:0"})
	base := "http://" + b.AdminAddr()
	hc := &http.Client{Timeout: 5 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "tr"); err != nil {
		t.Fatal(err)
	}
	const id = "tx-traced"
	ir := kmsg.NewPtrInitProducerIDRequest()
	ir.TransactionalID, ir.TransactionTimeoutMillis = kmsg.StringPtr(id), 60000
	init := request(t, cl, ir, func(r *kmsg.InitProducerIDResponse) int16 { return r.ErrorCode }) // creates and loads __transaction_state
	if init.ErrorCode != 0 {
		t.Fatalf("init: %v", kerr.ErrorForCode(init.ErrorCode))
	}
	p := b.txns.PartitionFor(id)
	txns := listActors(t, hc, base, "txn")
	var path string
	for _, a := range txns {
		if strings.HasPrefix(a.Path, fmt.Sprintf("%s/txn-%d-", txncoordinator.ManagerName, p)) {
			path = a.Path
		}
	}
	if len(txns) != 5 || path == "" {
		t.Fatalf("/actors?kind=txn lists %+v, want 5 partition actors including partition %d's", txns, p)
	}
	if m := listActors(t, hc, base, "txn-coordinator"); len(m) != 1 || m[0].Path != txncoordinator.ManagerName {
		t.Fatalf("/actors?kind=txn-coordinator lists %+v", m)
	}

	// Trace the txn actors while one transaction runs and is aborted.
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	treq, _ := http.NewRequestWithContext(sctx, http.MethodGet, base+"/trace?kind=txn&seconds=30", nil)
	events := make(chan map[string]any, 256)
	streamDone := make(chan struct{})
	go func() {
		defer close(streamDone)
		defer close(events)
		resp, err := http.DefaultClient.Do(treq)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var e map[string]any
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				events <- e
			}
		}
		_, _ = io.Copy(io.Discard, resp.Body)
	}()
	pollUntil(t, "tracing on for "+path, func() bool {
		for _, a := range listActors(t, hc, base, "txn") {
			if a.Path == path {
				return a.Traced
			}
		}
		return false
	})
	add := kmsg.NewPtrAddPartitionsToTxnRequest()
	add.Version, add.TransactionalID, add.ProducerID, add.ProducerEpoch = 3, id, init.ProducerID, init.ProducerEpoch
	at := kmsg.NewAddPartitionsToTxnRequestTopic()
	at.Topic, at.Partitions = "tr", []int32{0}
	add.Topics = append(add.Topics, at)
	if r := request(t, cl, add, func(r *kmsg.AddPartitionsToTxnResponse) int16 { return r.Topics[0].Partitions[0].ErrorCode }); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("add: %v", kerr.ErrorForCode(r.Topics[0].Partitions[0].ErrorCode))
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.Version, end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = 3, id, init.ProducerID, init.ProducerEpoch, false
	if r := request(t, cl, end, func(r *kmsg.EndTxnResponse) int16 { return r.ErrorCode }); r.ErrorCode != 0 {
		t.Fatalf("abort: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	// Read until the abort's markers are answered: AddPartitionsToTxn and
	// EndTxn requests, their appends, then the WriteTxnMarkers answer.
	want := map[string]bool{"AddPartitionsToTxn": false, "EndTxn": false, "append": false, "markers": false}
	partName := fmt.Sprintf("%s-%d", txncoordinator.TopicName, p)
	for !(want["AddPartitionsToTxn"] && want["EndTxn"] && want["append"] && want["markers"]) {
		var e map[string]any
		var ok bool
		select {
		case e, ok = <-events:
		case <-time.After(20 * time.Second):
		}
		if !ok {
			t.Fatalf("trace stream ended before the transaction was followed: %v", want)
		}
		if e["actor"] != path || e["kind"] != "txn" {
			continue
		}
		detail, _ := e["detail"].(string)
		switch e["message"] {
		case "*txncoordinator.txnRequest":
			if e["partition"] != partName || !strings.Contains(detail, `transactional.id="`+id+`"`) {
				t.Errorf("request event %v", e)
			}
			for _, api := range []string{"AddPartitionsToTxn", "EndTxn"} {
				if strings.HasPrefix(detail, api+" ") {
					want[api] = true
				}
			}
		case "*txncoordinator.appendedMsg":
			if strings.HasPrefix(detail, "appended ") {
				want["append"] = true
			}
		case "*txncoordinator.markersMsg":
			if strings.Contains(detail, "answered for "+id+": 1 partitions, 0 with an error") {
				want["markers"] = true
			}
		}
	}
	stop()
	<-streamDone
	pollUntil(t, "tracing off after the stream", func() bool {
		for _, a := range listActors(t, hc, base, "txn") {
			if a.Path == path {
				return !a.Traced
			}
		}
		return false
	})

	// Kill the partition's actor through /faults: it restarts, reloads its
	// partition and knows the transactional id (the next epoch; EndTxn v3 bumps none).
	resp, err := hc.Post(base+"/faults", "application/json", strings.NewReader(`{"action":"kill","actor":"`+path+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), path) {
		t.Fatalf("kill: %s %s", resp.Status, body)
	}
	pollUntil(t, "the restart of "+path, func() bool {
		for _, a := range listActors(t, hc, base, "txn") {
			if a.Path == path {
				return a.Restarts == 1
			}
		}
		return false
	})
	again := request(t, cl, ir, func(r *kmsg.InitProducerIDResponse) int16 {
		if r.ErrorCode == kerr.ConcurrentTransactions.Code {
			return kerr.CoordinatorLoadInProgress.Code // the reloaded abort still completing: retry
		}
		return r.ErrorCode
	})
	if again.ErrorCode != 0 || again.ProducerID != init.ProducerID || again.ProducerEpoch != init.ProducerEpoch+1 {
		t.Fatalf("init after the kill: %+v, want producer %d epoch %d", again, init.ProducerID, init.ProducerEpoch+1)
	}

	// Kill the manager: it restarts keeping which partitions are loaded,
	// its partition actors run on (not restarted), requests still route.
	resp, err = hc.Post(base+"/faults", "application/json", strings.NewReader(`{"action":"kill","actor":"`+txncoordinator.ManagerName+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("kill %s: %s", txncoordinator.ManagerName, resp.Status)
	}
	pollUntil(t, "the restart of "+txncoordinator.ManagerName, func() bool {
		m := listActors(t, hc, base, "txn-coordinator")
		return len(m) == 1 && m[0].Restarts == 1
	})
	after := listActors(t, hc, base, "txn")
	if len(after) != 5 {
		t.Fatalf("txn actors after the manager's restart: %+v", after)
	}
	for _, a := range after {
		if a.Path == path && a.Restarts != 1 {
			t.Errorf("%s restarted with its manager: %+v", path, a)
		}
	}
	third := request(t, cl, ir, func(r *kmsg.InitProducerIDResponse) int16 { return r.ErrorCode })
	if third.ErrorCode != 0 || third.ProducerID != init.ProducerID || third.ProducerEpoch != init.ProducerEpoch+2 {
		t.Fatalf("init after the manager's restart: %+v, want epoch %d", third, init.ProducerEpoch+2)
	}
}

package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"gregor/test/harness"
)

// jsonEvents parses a verifiable tool's stdout: one JSON object a line.
func jsonEvents(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if _, ok := m["timestamp"].(float64); !ok || !strings.HasPrefix(l, `{"timestamp":`) {
			t.Fatalf("line %q: no leading timestamp", l)
		}
		evs = append(evs, m)
	}
	return evs
}

// The verifiable producer and consumer exchange N messages; their
// events account for every one, and the group's committed offsets are
// the consumer's last offsets_committed.
func TestCLIVerifiableProducerConsumer(t *testing.T) {
	b := harness.StartBroker(t, nil)
	bs := b.Addr()
	createTopic(t, b, "vt", 2, nil)
	const n = 50
	code, out, errs := cliRun(t, nil, "kafka-verifiable-producer.sh", "--bootstrap-server", bs, "--topic", "vt", "--max-messages", "50", "--value-prefix", "7", "--repeating-keys", "5", "--acks", "1")
	if code != 0 {
		t.Fatalf("producer: %d %q", code, errs)
	}
	evs := jsonEvents(t, out)
	if evs[0]["name"] != "startup_complete" || len(evs) != n+3 || evs[n+1]["name"] != "shutdown_complete" || evs[n+2]["name"] != "tool_data" {
		t.Fatalf("producer events:\n%s", out)
	}
	type tp struct {
		p   float64
		off float64
	}
	seen := map[tp]bool{}
	values := map[string]bool{}
	for _, e := range evs[1 : n+1] {
		if e["name"] != "producer_send_success" || e["topic"] != "vt" {
			t.Fatalf("event %v", e)
		}
		k := tp{e["partition"].(float64), e["offset"].(float64)}
		if seen[k] {
			t.Fatalf("offset twice: %v", e)
		}
		seen[k] = true
		values[e["value"].(string)] = true
	}
	if !values["7.0"] || !values["7.49"] || len(values) != n {
		t.Fatalf("values %v", values)
	}
	if !strings.Contains(out, `"name":"producer_send_success","key":"4","value":"7.4","offset":`) {
		t.Errorf("key/value/field order:\n%s", out)
	}
	td := evs[n+2]
	if td["sent"] != float64(n) || td["acked"] != float64(n) || td["target_throughput"] != float64(-1) || td["avg_throughput"].(float64) <= 0 {
		t.Fatalf("tool_data %v", td)
	}

	code, out, errs = cliRun(t, nil, "kafka-verifiable-consumer.sh", "--bootstrap-server", bs, "--topic", "vt", "--group-id", "vg", "--max-messages", "50")
	if code != 0 {
		t.Fatalf("consumer: %d %q", code, errs)
	}
	evs = jsonEvents(t, out)
	if evs[0]["name"] != "startup_complete" || evs[len(evs)-1]["name"] != "shutdown_complete" {
		t.Fatalf("consumer events:\n%s", out)
	}
	var consumed, assigned int
	committed := map[float64]float64{}
	for _, e := range evs {
		switch e["name"] {
		case "partitions_assigned":
			assigned += len(e["partitions"].([]any))
		case "records_consumed":
			for _, p := range e["partitions"].([]any) {
				s := p.(map[string]any)
				c := s["count"].(float64)
				if s["maxOffset"].(float64)-s["minOffset"].(float64)+1 != c {
					t.Fatalf("summary %v", s)
				}
				consumed += int(c)
			}
		case "offsets_committed":
			if e["success"] != true || e["error"] != nil {
				t.Fatalf("commit %v", e)
			}
			for _, o := range e["offsets"].([]any) {
				m := o.(map[string]any)
				committed[m["partition"].(float64)] = m["offset"].(float64)
			}
		}
	}
	if consumed != n || assigned != 2 {
		t.Fatalf("consumed %d, assigned %d:\n%s", consumed, assigned, out)
	}
	adm := kadm.NewClient(b.Client())
	offs, err := adm.FetchOffsets(ctxFor(t, 10*time.Second), "vg")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for p, o := range committed {
		got, ok := offs.Lookup("vt", int32(p))
		if !ok || float64(got.At) != o {
			t.Fatalf("partition %v: committed %v, group has %+v", p, o, got)
		}
		total += got.At
	}
	if total != n {
		t.Fatalf("committed %d in all", total)
	}

	for _, c := range []struct {
		script string
		args   []string
		want   string
	}{
		{"kafka-verifiable-producer.sh", []string{"--bootstrap-server", bs}, "verifiable-producer: error: argument --topic is required\n"},
		{"kafka-verifiable-producer.sh", []string{"--topic", "vt"}, "verifiable-producer: error: one of the arguments --bootstrap-server --broker-list is required\n"},
		{"kafka-verifiable-producer.sh", []string{"--topic", "vt", "--bootstrap-server", bs, "--acks", "2"}, "verifiable-producer: error: argument --acks: invalid choice: '2' (choose from {0, 1, -1})\n"},
		{"kafka-verifiable-consumer.sh", []string{"--topic", "vt", "--bootstrap-server", bs}, "verifiable-consumer: error: argument --group-id is required\n"},
		{"kafka-verifiable-consumer.sh", []string{"--topic", "vt", "--group-id", "g", "--bootstrap-server", bs, "--group-protocol", "consumer"}, "--group-protocol consumer (KIP-848) is not supported: Gregor serves the classic group protocol\n"},
	} {
		code, out, errs := cliRun(t, nil, c.script, c.args...)
		if code != 1 || errs != c.want || out != "" {
			t.Errorf("%s %v: %d %q %q", c.script, c.args, code, out, errs)
		}
	}
}

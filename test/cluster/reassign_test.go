package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/replication/zkmeta"
	"gregor/test/harness"
)

// script runs bin/<name> with GREGOR_BIN pointing at the test binary and
// returns its exit status, stdout and stderr (bounded to 60 s).
func script(t *testing.T, name string, args ...string) (int, string, string) {
	t.Helper()
	return scriptInput(t, "", name, args...)
}

// scriptInput is script with stdin (lines for a console producer).
func scriptInput(t *testing.T, stdin, name string, args ...string) (int, string, string) {
	t.Helper()
	bin := harness.Binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(harness.RepoRoot(), "bin", name), args...)
	cmd.Env = append(os.Environ(), "GREGOR_BIN="+bin)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s: %v", name, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// startExtraBroker starts broker id against the cluster's ZooKeeper, with
// the same settings as startCluster's brokers.
func (c *cluster) startExtraBroker(id int32) *harness.Broker {
	c.t.Helper()
	b := harness.StartBroker(c.t, map[string]string{
		"broker.id":                            strconv.Itoa(int(id)),
		"zookeeper.connect":                    c.connect,
		"zookeeper.session.timeout.ms":         strconv.Itoa(int(sessionTimeout / time.Millisecond)),
		"default.replication.factor":           "3",
		"offsets.topic.replication.factor":     "3",
		"num.partitions":                       "3",
		"replica.lag.time.max.ms":              "3000",
		"controlled.shutdown.max.retries":      "2", // attempts, as Kafka counts them
		"controlled.shutdown.retry.backoff.ms": "500",
	})
	c.brokers[id] = b
	c.waitFor(fmt.Sprintf("broker %d registered", id), 60*time.Second, func() (bool, string) {
		ids := c.registered()
		return slices.Contains(ids, strconv.Itoa(int(id))), fmt.Sprint(ids)
	})
	return b
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReassignAndPreferredElection runs the seed's commands against three
// brokers plus a fourth started later: --generate prints the current and
// proposed assignments; --execute (through ZooKeeper) moves every partition
// onto the new broker 4 and away from its old preferred leader; --verify
// reports completion; the new replicas serve every record as leaders and
// every broker describes the new Replicas/Isr; after broker 4 stops and
// returns, kafka-preferred-replica-election.sh --zookeeper moves the
// leadership back to it; a --bootstrap-server reassignment (KIP-455) moves
// a partition back and kafka-leader-election.sh finds nothing to elect.
func TestReassignAndPreferredElection(t *testing.T) {
	c := startCluster(t, 3, nil, nil)
	const topic = "moves"
	c.createTopic(topic, 2, 2, nil)
	produce(t, c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.RoundRobinPartitioner())), topic, "before", 200)
	b4 := c.startExtraBroker(4)
	zk := c.connect

	// --generate: both texts, the proposal over brokers 2,3,4 only.
	moveFile := writeFile(t, "topics-to-move.json", `{"topics":[{"topic":"moves"}],"version":1}`)
	code, out, errs := script(t, "kafka-reassign-partitions.sh", "--zookeeper", zk, "--topics-to-move-json-file", moveFile, "--broker-list", "2,3,4", "--generate")
	if code != 0 || !strings.Contains(out, "Current partition replica assignment\n{\"version\":1,\"partitions\":[{\"topic\":\"moves\",\"partition\":0,") ||
		!strings.Contains(out, "\nProposed partition reassignment configuration\n{\"version\":1,") || strings.Contains(out[strings.Index(out, "Proposed"):], `"replicas":[1`) {
		t.Fatalf("--generate: exit %d\n%s\n%s", code, out, errs)
	}

	// Plan: partition p moves from [a,b] to [4,b]: broker 4 is added and
	// becomes the preferred leader, a (the preferred leader) is removed.
	before := map[int32][]int32{}
	var plan []string
	target := map[int32][]int32{}
	for p := int32(0); p < 2; p++ {
		rs := c.assignment(topic)[p]
		before[p] = rs
		target[p] = []int32{4, rs[1]}
		plan = append(plan, fmt.Sprintf(`{"topic":"moves","partition":%d,"replicas":[4,%d]}`, p, rs[1]))
	}
	planFile := writeFile(t, "resign-plan.json", `{"version":1,"partitions":[`+strings.Join(plan, ",")+`]}`)
	start := time.Now()
	code, out, errs = script(t, "kafka-reassign-partitions.sh", "--zookeeper", zk, "--reassignment-json-file", planFile, "--execute")
	if code != 0 || !strings.Contains(out, "Current partition replica assignment\n\n{\"version\":1,") ||
		!strings.Contains(out, "Save this to use as the --reassignment-json-file option during rollback\nSuccessfully started partition reassignments for moves-0,moves-1\n") {
		t.Fatalf("--execute: exit %d\n%s\n%s", code, out, errs)
	}
	c.waitFor("--verify reports completion", 30*time.Second, func() (bool, string) {
		code, out, errs := script(t, "kafka-reassign-partitions.sh", "--zookeeper", zk, "--verify", "--reassignment-json-file", planFile)
		return code == 0 && strings.Contains(out, "Status of partition reassignment:\nReassignment of partition moves-0 is completed.\nReassignment of partition moves-1 is completed.\n"), out + errs
	})
	t.Logf("reassignment completed in %v", time.Since(start).Round(time.Millisecond))
	if ok, _ := c.store.Exists(zkmeta.ReassignPartitionsPath); ok {
		t.Errorf("%s still exists after completion", zkmeta.ReassignPartitionsPath)
	}
	a := c.assignment(topic)
	for p := int32(0); p < 2; p++ {
		if !slices.Equal(a[p], target[p]) {
			t.Errorf("partition %d: /brokers/topics says %v, want %v", p, a[p], target[p])
		}
		st, _ := c.partitionState(topic, p)
		if st.Leader != 4 || !slices.Equal(sortedIDs(st.ISR), sortedIDs(target[p])) {
			t.Errorf("partition %d state %+v: want leader 4 (the old leader %d left), ISR %v", p, st, before[p][0], target[p])
		}
	}
	// Every broker describes the new replicas and ISR.
	for id, b := range c.brokers {
		c.waitFor(fmt.Sprintf("broker %d describes the new assignment", id), 15*time.Second, func() (bool, string) {
			d, err := describe(t, b, topic)
			if err != nil {
				return false, err.Error()
			}
			for p := int32(0); p < 2; p++ {
				pd := d.Partitions[p]
				if pd.Leader != 4 || !slices.Equal(pd.Replicas, target[p]) || !slices.Equal(sortedIDs(pd.ISR), sortedIDs(target[p])) {
					return false, fmt.Sprintf("p%d leader %d replicas %v isr %v", p, pd.Leader, pd.Replicas, pd.ISR)
				}
			}
			return true, ""
		})
	}
	// Broker 4, a new replica, leads both partitions and serves every record.
	if got := consumeAll(t, c, topic, 200); len(got) != 200 {
		t.Fatalf("consumed %d distinct records, want 200", len(got))
	}
	// The removed replicas' logs are deleted.
	for p := int32(0); p < 2; p++ {
		dir := filepath.Join(c.brokers[before[p][0]].DataDir, fmt.Sprintf("%s-%d", topic, p))
		c.waitFor("removed replica's log deleted: "+dir, 15*time.Second, func() (bool, string) {
			_, err := os.Stat(dir)
			return os.IsNotExist(err), fmt.Sprint(err)
		})
	}

	// Broker 4 stops (controlled shutdown moves leadership away) and comes
	// back; it rejoins the ISRs but does not lead until the preferred
	// replica election.
	b4.Stop()
	c.waitFor("leadership moved off broker 4", 20*time.Second, func() (bool, string) {
		for p := int32(0); p < 2; p++ {
			if st, _ := c.partitionState(topic, p); st.Leader == 4 || st.Leader < 0 {
				return false, fmt.Sprintf("p%d %+v", p, st)
			}
		}
		return true, ""
	})
	produce(t, c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.RoundRobinPartitioner())), topic, "while-away", 20)
	b4.Start()
	c.waitFor("broker 4 back in both ISRs", 30*time.Second, func() (bool, string) {
		for p := int32(0); p < 2; p++ {
			if st, _ := c.partitionState(topic, p); !slices.Contains(st.ISR, 4) {
				return false, fmt.Sprintf("p%d %+v", p, st)
			}
		}
		return true, ""
	})
	preferFile := writeFile(t, "prefer.json", `{"partitions":[{"topic":"moves","partition":0},{"topic":"moves","partition":1}]}`)
	code, out, errs = script(t, "kafka-preferred-replica-election.sh", "--zookeeper", zk, "--path-to-json-file", preferFile)
	if code != 0 || !strings.Contains(out, `Created preferred replica election path with {"version":1,"partitions":[{"topic":"moves","partition":0},{"topic":"moves","partition":1}]}`) ||
		!strings.Contains(out, "Successfully started preferred replica election for partitions Set(moves-0, moves-1)") {
		t.Fatalf("preferred replica election: exit %d\n%s\n%s", code, out, errs)
	}
	c.waitFor("broker 4 leads again and the election znode is gone", 20*time.Second, func() (bool, string) {
		for p := int32(0); p < 2; p++ {
			if st, _ := c.partitionState(topic, p); st.Leader != 4 {
				return false, fmt.Sprintf("p%d %+v", p, st)
			}
		}
		ok, _ := c.store.Exists(zkmeta.PreferredReplicaElectionPath)
		return !ok, "znode still there"
	})
	if got := consumeAll(t, c, topic, 220); len(got) != 220 {
		t.Fatalf("consumed %d distinct records, want 220", len(got))
	}

	// --bootstrap-server: move partition 0 back to its original replicas.
	backFile := writeFile(t, "back.json", fmt.Sprintf(`{"version":1,"partitions":[{"topic":"moves","partition":0,"replicas":[%d,%d]}]}`, before[0][0], before[0][1]))
	boot := c.brokers[1].Addr()
	code, out, errs = script(t, "kafka-reassign-partitions.sh", "--bootstrap-server", boot, "--reassignment-json-file", backFile, "--execute")
	if code != 0 || !strings.Contains(out, "Successfully started partition reassignment for moves-0\n") {
		t.Fatalf("--bootstrap-server --execute: exit %d\n%s\n%s", code, out, errs)
	}
	c.waitFor("--bootstrap-server --verify reports completion", 30*time.Second, func() (bool, string) {
		code, out, errs := script(t, "kafka-reassign-partitions.sh", "--bootstrap-server", boot, "--verify", "--reassignment-json-file", backFile)
		return code == 0 && strings.Contains(out, "Status of partition reassignment:\nReassignment of partition moves-0 is completed.\n"), out + errs
	})
	if st, _ := c.partitionState(topic, 0); st.Leader != before[0][0] {
		t.Errorf("after moving back, leader %d, want %d (broker 4 left the replicas)", st.Leader, before[0][0])
	}
	code, out, errs = script(t, "kafka-reassign-partitions.sh", "--bootstrap-server", boot, "--list")
	if code != 0 || !strings.Contains(out, "No partition reassignments found.") {
		t.Errorf("--list: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = script(t, "kafka-leader-election.sh", "--bootstrap-server", boot, "--election-type", "preferred", "--topic", topic, "--partition", "0")
	if code != 0 || out != "Valid replica already elected for partitions moves-0\n" {
		t.Errorf("leader election: exit %d %q %q", code, out, errs)
	}
}

// assignment reads /brokers/topics/<topic>.
func (c *cluster) assignment(topic string) map[int32][]int32 {
	c.t.Helper()
	data, _, err := c.store.Get(zkmeta.TopicPath(topic))
	if err != nil {
		c.t.Fatal(err)
	}
	a, err := zkmeta.DecodeTopicAssignment(topic, data)
	if err != nil {
		c.t.Fatal(err)
	}
	return a.Partitions
}

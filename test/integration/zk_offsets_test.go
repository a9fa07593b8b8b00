package integration

// Offsets the old way (issue 15, point 3): OffsetCommit/OffsetFetch v0 and
// the old console consumer keep a group's offsets in ZooKeeper at
// /consumers/<group>/offsets/<topic>/<partition>, with a broker process on
// a real ZooKeeper.

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/test/harness"
	"gregor/test/zkharness"
)

// TestOldConsoleConsumerOffsetsInZooKeeper runs the seeds' command,
// `kafka-console-consumer.sh --zookeeper localhost:2181/kafka
// --from-beginning --topic topic1 --group group1`, with --max-messages:
// `zookeeper-shell.sh … get /consumers/group1/offsets/topic1/0` shows the
// progress, and the next run resumes there without re-reading.
func TestOldConsoleConsumerOffsetsInZooKeeper(t *testing.T) {
	zk := zkharness.Start(t, zkharness.Options{})
	connect := zk.Addr() + "/kafka"
	b := harness.StartBroker(t, map[string]string{"zookeeper.connect": connect})
	createTopic(t, b, "topic1", 1, nil)
	harness.ProduceInputs(t, []string{b.Addr()}, "topic1", 5) // values "0".."4"

	consume := func(args ...string) string {
		t.Helper()
		code, out, errs := cliRun(t, nil, "kafka-console-consumer.sh", append([]string{"--zookeeper", connect, "--topic", "topic1", "--group", "group1"}, args...)...)
		if code != 0 {
			t.Fatalf("console consumer %q: exit %d: %s", args, code, errs)
		}
		return out
	}
	zkGet := func(path string) string {
		t.Helper()
		code, out, errs := cliRun(t, nil, "zookeeper-shell.sh", connect, "get", path)
		if code != 0 {
			t.Fatalf("zookeeper-shell.sh get %s: exit %d: %s %s", path, code, out, errs)
		}
		return out
	}
	if out := consume("--from-beginning", "--max-messages", "3"); out != "0\n1\n2\n" {
		t.Fatalf("first run printed %q", out)
	}
	if out := zkGet("/consumers/group1/offsets/topic1/0"); !strings.Contains(out, "\n3\n") {
		t.Fatalf("zookeeper-shell get after 3 records:\n%s", out)
	}
	if out := consume("--max-messages", "2"); out != "3\n4\n" {
		t.Fatalf("second run printed %q, want the two records not yet read", out)
	}
	if out := zkGet("/consumers/group1/offsets/topic1/0"); !strings.Contains(out, "\n5\n") {
		t.Fatalf("zookeeper-shell get after 5 records:\n%s", out)
	}
	// The group's ZooKeeper layout, as the seed's era showed it; ids and
	// owners were ephemeral, gone with the consumer.
	code, out, _ := cliRun(t, nil, "zookeeper-shell.sh", connect, "ls", "/consumers/group1")
	if code != 0 || !strings.Contains(out, "[ids, offsets, owners]") {
		t.Fatalf("ls /consumers/group1: %d\n%s", code, out)
	}
	// The new consumer's group (__consumer_offsets) knows nothing of it.
	adm := kadm.NewClient(b.Client())
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	offs, err := adm.FetchOffsets(ctx, "group1")
	if err != nil || len(offs) != 0 {
		t.Fatalf("OffsetFetch v1+ of group1: %v %v", offs, err)
	}
}

// kafka-python with api_version=(0, 8, 1) — "zookeeper-storage offset
// commits" in its documentation — commits and fetches through
// OffsetCommit v0 / OffsetFetch v0 on the least loaded broker (no
// coordinator). ((0, 8, 2) switches kafka-python to v1, Kafka storage.)
const pythonZKOffsets = `
import sys
from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata
addr, topic, group = sys.argv[1:4]
c = KafkaConsumer(bootstrap_servers=addr, group_id=group, api_version=(0, 8, 1), enable_auto_commit=False,
                  session_timeout_ms=10000, max_poll_interval_ms=10000)
tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
c.assign([tp0, tp1])
before = c.committed(tp0)
c.commit({tp0: OffsetAndMetadata(42, "dropped"), tp1: OffsetAndMetadata(7, "")})
print("before=%s after=%s,%s" % (before, c.committed(tp0), c.committed(tp1)))
c.close(autocommit=False)
`

func TestKafkaPythonZooKeeperOffsets(t *testing.T) {
	py := "/usr/bin/python3"
	harness.NeedTool(t, run(t, 30*time.Second, "", py, "-c", "import kafka; print('ok')") == "ok\n", "kafka-python")
	zk := zkharness.Start(t, zkharness.Options{})
	connect := zk.Addr() + "/kafka"
	b := harness.StartBroker(t, map[string]string{"zookeeper.connect": connect})
	createTopic(t, b, "pyzk", 2, nil)
	f := filepath.Join(t.TempDir(), "zk_offsets.py")
	if err := os.WriteFile(f, []byte(pythonZKOffsets), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := run(t, 2*time.Minute, "", py, f, b.Addr(), "pyzk", "pygroup"); strings.TrimSpace(out) != "before=None after=42,7" {
		t.Fatalf("kafka-python said %q", out)
	}
	code, out, errs := cliRun(t, nil, "zookeeper-shell.sh", connect, "get", "/consumers/pygroup/offsets/pyzk/0")
	if code != 0 || !strings.Contains(out, "\n42\n") {
		t.Fatalf("zookeeper-shell get: %d\n%s\n%s", code, out, errs)
	}
}

// TestOffsetsV0EmbeddedStore: the single node (no ZooKeeper) answers
// OffsetCommit/OffsetFetch v0 from its embedded store's /consumers tree;
// v1 reads __consumer_offsets, where this group has nothing.
func TestOffsetsV0EmbeddedStore(t *testing.T) {
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "v0t", 1, nil)
	c, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group = 0, "old"
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic = "v0t"
	cp := kmsg.NewOffsetCommitRequestTopicPartition()
	cp.Partition, cp.Offset = 0, 11
	ct.Partitions = []kmsg.OffsetCommitRequestTopicPartition{cp}
	commit.Topics = []kmsg.OffsetCommitRequestTopic{ct}
	cr := roundTripRaw(t, c, commit, 1).(*kmsg.OffsetCommitResponse)
	if len(cr.Topics) != 1 || cr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("OffsetCommit v0: %+v", cr)
	}
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Version, fetch.Group = 0, "old"
	ft := kmsg.NewOffsetFetchRequestTopic()
	ft.Topic, ft.Partitions = "v0t", []int32{0}
	fetch.Topics = []kmsg.OffsetFetchRequestTopic{ft}
	fr := roundTripRaw(t, c, fetch, 2).(*kmsg.OffsetFetchResponse)
	if len(fr.Topics) != 1 || fr.Topics[0].Partitions[0].Offset != 11 || fr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("OffsetFetch v0: %+v", fr)
	}
	fetch.Version = 1
	fr = roundTripRaw(t, c, fetch, 3).(*kmsg.OffsetFetchResponse)
	if len(fr.Topics) != 1 || fr.Topics[0].Partitions[0].Offset != -1 {
		t.Fatalf("OffsetFetch v1: %+v", fr)
	}
}

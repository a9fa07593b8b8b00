package topics

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/replication/zkstore"
	"gregor/test/zkharness"
)

// zkCluster starts ZooKeeper and registers brokers 1..n under chroot the
// way brokers do (ephemeral /brokers/ids/<id>); it returns the
// --zookeeper value and a store to inspect and play the controller with.
func zkCluster(t *testing.T, chroot string, n int) (string, *zkstore.Store) {
	t.Helper()
	srv := zkharness.Start(t, zkharness.Options{})
	connect := srv.Addr() + chroot
	s, err := zkstore.Open(connect, zkstore.Config{SessionTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := zkmeta.EnsurePersistentPaths(s); err != nil {
		t.Fatal(err)
	}
	for id := int32(1); id <= int32(n); id++ {
		b := zkmeta.BrokerInfo{ID: id, JmxPort: -1, Timestamp: 1, Endpoints: []zkmeta.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 9090 + id}}}
		if err := s.Create(zkmeta.BrokerPath(id), b.Encode(), true); err != nil {
			t.Fatal(err)
		}
	}
	return connect, s
}

func TestZooKeeperCreateDescribeAlterDelete(t *testing.T) {
	zk, s := zkCluster(t, "/kafka", 3)

	code, out, errs := run(t, Options{ZooKeeper: zk, Create: true, Topic: "orders", Partitions: 6, ReplicationFactor: 3, Configs: []string{"retention.ms=1000"}})
	if code != 0 || out != "Created topic orders.\n" || errs != "" {
		t.Fatalf("create: %d %q %q", code, out, errs)
	}
	// The assignment znode is Kafka's TopicZNode JSON: 6 partitions, 3
	// distinct replicas each, leaders spread evenly (2 per broker).
	raw, _, err := s.Get("/brokers/topics/orders")
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Version    int                `json:"version"`
		TopicID    string             `json:"topic_id"`
		Partitions map[string][]int32 `json:"partitions"`
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	if j.Version != 3 || len(j.TopicID) != 22 || len(j.Partitions) != 6 {
		t.Fatalf("assignment znode = %s", raw)
	}
	leaders := map[int32]int{}
	for p, reps := range j.Partitions {
		if len(reps) != 3 || reps[0] == reps[1] || reps[1] == reps[2] || reps[0] == reps[2] {
			t.Fatalf("partition %s replicas %v: want 3 distinct brokers", p, reps)
		}
		leaders[reps[0]]++
	}
	if !reflect.DeepEqual(leaders, map[int32]int{1: 2, 2: 2, 3: 2}) {
		t.Fatalf("preferred leaders per broker = %v, want 2 each", leaders)
	}
	cfgRaw, _, err := s.Get("/config/topics/orders")
	if err != nil || string(cfgRaw) != `{"version":1,"config":{"retention.ms":"1000"}}` {
		t.Fatalf("config znode = %s, %v", cfgRaw, err)
	}

	// Duplicate, too many replicas, missing flags, bad name.
	code, _, errs = run(t, Options{ZooKeeper: zk, Create: true, Topic: "orders", Partitions: 1, ReplicationFactor: 1})
	if code != 1 || errs != "Error while executing topic command : Topic 'orders' already exists.\n" {
		t.Fatalf("duplicate: %d %q", code, errs)
	}
	code, _, errs = run(t, Options{ZooKeeper: zk, Create: true, Topic: "big", Partitions: 1, ReplicationFactor: 4})
	if code != 1 || errs != "Error while executing topic command : Replication factor: 4 larger than available brokers: 3.\n" {
		t.Fatalf("rf 4: %d %q", code, errs)
	}
	if code, _, _ = run(t, Options{ZooKeeper: zk, Create: true, Topic: "nopart", ReplicationFactor: 1}); code == 0 {
		t.Fatal("create without --partitions through ZooKeeper succeeded")
	}
	if code, _, errs = run(t, Options{ZooKeeper: zk, Create: true, Topic: "bad/name", Partitions: 1, ReplicationFactor: 1}); code != 1 || !strings.Contains(errs, "illegal") {
		t.Fatalf("bad name: %d %q", code, errs)
	}

	// The controller's part, played by the test: partition states.
	for p := int32(0); p < 6; p++ {
		reps := j.Partitions[itoa(p)]
		st := zkmeta.PartitionState{Leader: reps[0], LeaderEpoch: 0, ControllerEpoch: 1, ISR: reps[:2]}
		if err := metastore.CreateAll(s, zkmeta.PartitionStatePath("orders", p), st.Encode(), false); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs = run(t, Options{ZooKeeper: zk, Describe: true, Topic: "orders"})
	if code != 0 || errs != "" {
		t.Fatalf("describe: %d %q", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[0], "Topic: orders\tTopicId: "+j.TopicID+"\tPartitionCount: 6\tReplicationFactor: 3\tConfigs: retention.ms=1000") {
		t.Fatalf("describe output:\n%s", out)
	}
	r0 := j.Partitions["0"]
	want0 := "\tTopic: orders\tPartition: 0\tLeader: " + itoa(r0[0]) + "\tReplicas: " + joinIDs(r0) + "\tIsr: " + joinIDs(r0[:2])
	if lines[1] != want0 {
		t.Fatalf("partition 0 line = %q, want %q", lines[1], want0)
	}

	// Alter: 6 → 9 partitions keeps the existing ones and adds 3 with rf 3.
	if code, _, errs = run(t, Options{ZooKeeper: zk, Alter: true, Topic: "orders", Partitions: 9}); code != 0 {
		t.Fatalf("alter: %d %q", code, errs)
	}
	raw, _, _ = s.Get("/brokers/topics/orders")
	asg, err := zkmeta.DecodeTopicAssignment("orders", raw)
	if err != nil || len(asg.Partitions) != 9 || !reflect.DeepEqual(asg.Partitions[0], r0) || len(asg.Partitions[8]) != 3 {
		t.Fatalf("after alter: %+v, %v", asg.Partitions, err)
	}
	if code, _, errs = run(t, Options{ZooKeeper: zk, Alter: true, Topic: "orders", Partitions: 2}); code != 1 || !strings.Contains(errs, "can only be increased") {
		t.Fatalf("shrink: %d %q", code, errs)
	}

	// A partition without a state znode (the controller has not got to it) has no leader.
	code, out, _ = run(t, Options{ZooKeeper: zk, Describe: true, Topic: "orders"})
	if code != 0 || !strings.Contains(out, "\tPartition: 8\tLeader: none\tReplicas: "+joinIDs(asg.Partitions[8])+"\tIsr: \n") {
		t.Fatalf("describe after alter:\n%s", out)
	}

	// The whole ISR gone without unclean election: the controller writes
	// leader -1, which the ZooKeeper describe prints as the seeds show.
	st := zkmeta.PartitionState{Leader: -1, LeaderEpoch: 1, ControllerEpoch: 1, ISR: []int32{}}
	if _, err := s.Set(zkmeta.PartitionStatePath("orders", 1), st.Encode(), metastore.AnyVersion); err != nil {
		t.Fatal(err)
	}
	code, out, _ = run(t, Options{ZooKeeper: zk, Describe: true, Topic: "orders"})
	if code != 0 || !strings.Contains(out, "\tPartition: 1\tLeader: -1\tReplicas: "+joinIDs(asg.Partitions[1])+"\tIsr: \n") {
		t.Fatalf("describe with an offline partition:\n%s", out)
	}

	code, out, _ = run(t, Options{ZooKeeper: zk, List: true})
	if code != 0 || out != "orders\n" {
		t.Fatalf("list: %d %q", code, out)
	}

	// Delete only marks the topic; the controller removes it.
	if code, out, errs = run(t, Options{ZooKeeper: zk, Delete: true, Topic: "orders"}); code != 0 ||
		out != "Topic orders is marked for deletion.\nNote: This will have no impact if delete.topic.enable is not set to true.\n" {
		t.Fatalf("delete: %d %q %q", code, out, errs)
	}
	if code, out, _ = run(t, Options{ZooKeeper: zk, List: true}); code != 0 || out != "orders - marked for deletion\n" {
		t.Fatalf("list after delete: %d %q", code, out)
	}
	if ok, _ := s.Exists("/admin/delete_topics/orders"); !ok {
		t.Fatal("no /admin/delete_topics/orders marker")
	}
	if ok, _ := s.Exists("/brokers/topics/orders"); !ok {
		t.Fatal("delete removed the assignment itself; that is the controller's job")
	}
	if code, _, errs = run(t, Options{ZooKeeper: zk, Delete: true, Topic: "nope"}); code != 1 || !strings.Contains(errs, "does not exist") {
		t.Fatalf("delete missing: %d %q", code, errs)
	}
}

func TestZooKeeperAdminErrorsKeepKafkaCodes(t *testing.T) {
	zk, _ := zkCluster(t, "", 1)
	a, err := OpenZooKeeperAdmin(zk)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	err = a.CreateTopic(t.Context(), "t", 1, 2, nil, nil)
	if !errors.Is(err, kerr.InvalidReplicationFactor) {
		t.Fatalf("err = %v, want InvalidReplicationFactor", err)
	}
	if err := a.CreateTopic(t.Context(), "a.b", 1, 1, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateTopic(t.Context(), "a_b", 1, 1, nil, nil); !errors.Is(err, kerr.InvalidTopicException) {
		t.Fatalf("colliding name err = %v, want InvalidTopicException", err)
	}
	if err := a.CreateTopic(t.Context(), "c", 1, 1, nil, map[string]string{"no.such": "1"}); !errors.Is(err, kerr.InvalidConfig) {
		t.Fatalf("unknown config err = %v, want InvalidConfig", err)
	}
	if _, err := OpenZooKeeperAdmin("host:2181/bad//chroot"); err == nil {
		t.Fatal("bad chroot accepted")
	}
}

func itoa(i int32) string { return joinIDs([]int32{i}) }

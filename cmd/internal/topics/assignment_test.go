package topics

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParseReplicaAssignment(t *testing.T) {
	for _, c := range []struct {
		in   string
		want [][]int32
		err  string
	}{
		{in: "0:1,1:2", want: [][]int32{{0, 1}, {1, 2}}},
		{in: " 3 : 1 ,2:4,", want: [][]int32{{3, 1}, {2, 4}}}, // trimmed ids, trailing ',' dropped as Java's split
		{in: "5", want: [][]int32{{5}}},
		{in: "1:x", err: `For input string: "x"`},
		{in: "1:2,,3:4", err: `For input string: ""`},
		{in: "1:2:1:2", err: "Partition replica lists may not contain duplicate entries: 1,2"},
		{in: "1:2,3", err: "Partition 1 has different replication factor: [3]"},
		{in: "1,2:3", err: "Partition 1 has different replication factor: [2, 3]"},
	} {
		got, err := ParseReplicaAssignment(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// The flag combinations Kafka's TopicCommandOptions refuses, with its
// words, before anything is asked of the cluster.
func TestReplicaAssignmentOptions(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{BootstrapServer: "127.0.0.1:1", Create: true, Topic: "t", ReplicaAssignment: "0", Partitions: 1}, `Option "[replica-assignment]" can't be used with option "[partitions]"`},
		{Options{BootstrapServer: "127.0.0.1:1", Create: true, Topic: "t", ReplicaAssignment: "0", ReplicationFactor: 1}, `Option "[replica-assignment]" can't be used with option "[replication-factor]"`},
		{Options{BootstrapServer: "127.0.0.1:1", Describe: true, ReplicaAssignment: "0"}, `Option "[replica-assignment]" can't be used with option "[describe]"`},
		{Options{BootstrapServer: "127.0.0.1:1", Create: true, Topic: "t", ReplicaAssignment: "0:0"}, "Partition replica lists may not contain duplicate entries: 0"},
		{Options{BootstrapServer: "127.0.0.1:1", Create: true, Topic: "t", Partitions: 1, DisableRackAware: true}, "disable-rack-aware is not a recognized option"},
		{Options{ZooKeeper: "127.0.0.1:1", Create: true, Topic: "t", ReplicaAssignment: "0", DisableRackAware: true}, `Option "[disable-rack-aware]" can't be used with option "[replica-assignment]"`},
	} {
		code, out, errs := run(t, c.o)
		if code != 1 || out != "" || len(errs) < len(ErrorPrefix+c.want) || errs[:len(ErrorPrefix+c.want)] != ErrorPrefix+c.want {
			t.Errorf("%+v: %d %q %q; want %q", c.o, code, out, errs, c.want)
		}
	}
}

// --zookeeper --create / --alter with --replica-assignment write the
// assignment znode as given (Kafka 2.x's createTopicWithAssignment and
// addPartitions), with AdminZkClient's validation.
func TestZooKeeperReplicaAssignment(t *testing.T) {
	zk, s := zkCluster(t, "/kafka", 3)
	partitions := func(topic string) map[string][]int32 {
		t.Helper()
		raw, _, err := s.Get("/brokers/topics/" + topic)
		if err != nil {
			t.Fatal(err)
		}
		var j struct {
			Partitions map[string][]int32 `json:"partitions"`
		}
		if err := json.Unmarshal(raw, &j); err != nil {
			t.Fatal(err)
		}
		return j.Partitions
	}
	code, out, errs := run(t, Options{ZooKeeper: zk, Create: true, Topic: "m", ReplicaAssignment: "3:1,1:2"})
	if code != 0 || out != "Created topic m.\n" || errs != "" {
		t.Fatalf("create: %d %q %q", code, out, errs)
	}
	if got := partitions("m"); !reflect.DeepEqual(got, map[string][]int32{"0": {3, 1}, "1": {1, 2}}) {
		t.Fatalf("assignment = %v", got)
	}
	// As in Kafka 2.x, a broker not registered yet may be named on create.
	if code, _, errs = run(t, Options{ZooKeeper: zk, Create: true, Topic: "future", ReplicaAssignment: "7"}); code != 0 {
		t.Fatalf("create on broker 7: %d %q", code, errs)
	}

	// Alter: the first two entries describe the existing partitions, the
	// third places partition 2.
	if code, out, errs = run(t, Options{ZooKeeper: zk, Alter: true, Topic: "m", Partitions: 3, ReplicaAssignment: "3:1,1:2,2:3"}); code != 0 || errs != "" {
		t.Fatalf("alter: %d %q %q", code, out, errs)
	}
	if got := partitions("m"); !reflect.DeepEqual(got, map[string][]int32{"0": {3, 1}, "1": {1, 2}, "2": {2, 3}}) {
		t.Fatalf("assignment after alter = %v", got)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{ZooKeeper: zk, Alter: true, Topic: "m", Partitions: 4, ReplicaAssignment: "3:1,1:2,2:3,9:1"},
			"Some brokers specified for partition id 3 are not available. Specified brokers: 9, 1, available brokers: 1, 2, 3."},
		{Options{ZooKeeper: zk, Alter: true, Topic: "m", Partitions: 5, ReplicaAssignment: "3:1,1:2,2:3,1:2"},
			"Increasing the number of partitions by 2 but 1 assignments provided."},
		{Options{ZooKeeper: zk, Alter: true, Topic: "m", Partitions: 3, ReplicaAssignment: "3:1,1:2,2:3"},
			"The number of partitions for a topic can only be increased. Topic m currently has 3 partitions, 3 would not be an increase."},
	} {
		code, _, errs := run(t, c.o)
		if code != 1 || errs != ErrorPrefix+c.want+"\n" {
			t.Errorf("%+v: %d %q; want %q", c.o, code, errs, c.want)
		}
	}
	// Nothing half-applied: still three partitions.
	if got := partitions("m"); len(got) != 3 {
		t.Fatalf("assignment after refused alters = %v", got)
	}
}

func TestCheckAddedAssignment(t *testing.T) {
	brokers := []int32{1, 2, 3}
	for _, c := range []struct {
		added [][]int32
		want  string
	}{
		{[][]int32{{}}, "Cannot have replication factor of 0 for partition id 2."},
		{[][]int32{{1, 2}, {3}}, "Inconsistent replication factor between partitions, partition 0 has 2 while partitions [3] have replication factors [1], respectively."},
		{[][]int32{{1, 2}, {2, 3}}, ""},
	} {
		err := checkAddedAssignment(c.added, 2, 2, brokers)
		if got := ""; err != nil {
			got = err.Error()
			if got != c.want {
				t.Errorf("%v: %q, want %q", c.added, got, c.want)
			}
		} else if c.want != "" {
			t.Errorf("%v: accepted, want %q", c.added, c.want)
		}
	}
}

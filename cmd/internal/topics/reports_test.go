package topics

import (
	"strings"
	"testing"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// The replication reports over a real ZooKeeper, with partition states the
// test writes as a controller would: only the selected partition lines are
// printed, without the topic summary, as Kafka's TopicCommand does.
func TestZooKeeperDescribeReports(t *testing.T) {
	zk, s := zkCluster(t, "", 3)
	if code, _, errs := run(t, Options{ZooKeeper: zk, Create: true, Topic: "r", Partitions: 4, ReplicationFactor: 3}); code != 0 {
		t.Fatalf("create: %d %q", code, errs)
	}
	states := []zkmeta.PartitionState{
		{Leader: 1, ISR: []int32{1, 2, 3}}, // healthy
		{Leader: 2, ISR: []int32{2}},       // under-replicated
		{Leader: -1, ISR: []int32{}},       // offline: under-replicated and unavailable
		{Leader: 7, ISR: []int32{1, 2, 3}}, // led by a broker that is not registered: unavailable
	}
	for p, st := range states {
		st.ControllerEpoch = 1
		if err := metastore.CreateAll(s, zkmeta.PartitionStatePath("r", int32(p)), st.Encode(), false); err != nil {
			t.Fatal(err)
		}
	}
	partitions := func(out string) string {
		var ps []string
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if !strings.HasPrefix(l, "\tTopic: r\tPartition: ") {
				t.Fatalf("not a partition line: %q in\n%s", l, out)
			}
			ps = append(ps, strings.Fields(l)[3])
		}
		return strings.Join(ps, ",")
	}
	code, out, errs := run(t, Options{ZooKeeper: zk, Describe: true, Topic: "r", UnderReplicated: true})
	if code != 0 || partitions(out) != "1,2" {
		t.Fatalf("--under-replicated-partitions: %d %q %q", code, out, errs)
	}
	if !strings.Contains(out, "\tPartition: 2\tLeader: -1\t") {
		t.Fatalf("offline partition line: %q", out)
	}
	code, out, errs = run(t, Options{ZooKeeper: zk, Describe: true, UnderReplicated: false, Unavailable: true})
	if code != 0 || partitions(out) != "2,3" {
		t.Fatalf("--unavailable-partitions: %d %q %q", code, out, errs)
	}
	// Healthy again: nothing to print.
	for p, st := range states[1:] {
		st = zkmeta.PartitionState{Leader: 1, ISR: []int32{1, 2, 3}, ControllerEpoch: 1}
		if _, err := s.Set(zkmeta.PartitionStatePath("r", int32(p+1)), st.Encode(), metastore.AnyVersion); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []Options{{UnderReplicated: true}, {Unavailable: true}} {
		o.ZooKeeper, o.Describe = zk, true
		if code, out, errs = run(t, o); code != 0 || out != "" {
			t.Fatalf("%+v on a healthy topic: %d %q %q", o, code, out, errs)
		}
	}
}

// The report flags' argument checks (TopicCommandOptions.checkArgs).
func TestDescribeReportFlagChecks(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{BootstrapServer: "127.0.0.1:1", Describe: true, UnderReplicated: true, Unavailable: true}, `Option "[under-replicated-partitions]" can't be used with option "[unavailable-partitions]"`},
		{Options{BootstrapServer: "127.0.0.1:1", List: true, AtMinISR: true}, `Option "[at-min-isr-partitions]" can't be used with option "[list]"`},
		{Options{ZooKeeper: "127.0.0.1:1", Describe: true, UnderMinISR: true}, `Option "[under-min-isr-partitions]" can't be used with option "[zookeeper]"`},
		{Options{ZooKeeper: "127.0.0.1:1", Describe: true, AtMinISR: true}, `Option "[at-min-isr-partitions]" can't be used with option "[zookeeper]"`},
	} {
		code, out, errs := run(t, c.o)
		if code == 0 || out != "" || errs != ErrorPrefix+c.want+"\n" {
			t.Errorf("%+v: %d %q %q; want %q", c.o, code, out, errs, c.want)
		}
	}
}

package reassign

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"gregor/partition"
)

func TestFormatJSONAndPropose(t *testing.T) {
	cur := map[partition.TopicPartition][]int32{{Topic: "t", Partition: 1}: {2, 3}, {Topic: "t", Partition: 0}: {1, 2}}
	if got := FormatJSON(cur); got != `{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},{"topic":"t","partition":1,"replicas":[2,3],"log_dirs":["any","any"]}]}` {
		t.Fatal(got)
	}
	prop, err := Propose(cur, []int32{3, 4, 5})
	if err != nil || len(prop) != 2 {
		t.Fatal(prop, err)
	}
	for tp, rs := range prop {
		if len(rs) != 2 || rs[0] == rs[1] || rs[0] < 3 || rs[1] < 3 {
			t.Errorf("%s: %v", tp, rs)
		}
	}
	if _, err := Propose(cur, []int32{4}); err == nil || !strings.Contains(err.Error(), "Replication factor: 2 larger than available brokers: 1.") {
		t.Fatal(err)
	}
}

func TestParseExecute(t *testing.T) {
	for in, want := range map[string]string{
		`{"version":1,"partitions":[]}`:                                                                          "Partition reassignment list cannot be empty",
		`{"partitions":[{"topic":"t","partition":0,"replicas":[]}]}`:                                             "Partition replica list cannot be empty",
		`{"partitions":[{"topic":"t","partition":0,"replicas":[1]},{"topic":"t","partition":0,"replicas":[2]}]}`: "Partition reassignment contains duplicate topic partitions: t-0",
		`{"partitions":[{"topic":"t","partition":0,"replicas":[1,1]}]}`:                                          "Partition replica lists may not contain duplicate entries: t-0 contains multiple entries for 1",
	} {
		if _, _, err := ParseExecute([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("%s: %v", in, err)
		}
	}
	m, dirs, err := ParseExecute([]byte(`{"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","/d"]}]}`))
	if err != nil || !dirs || len(m) != 1 {
		t.Fatal(m, dirs, err)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{ZooKeeper: "z:1"}, "exactly one action"},
		{Options{Generate: true, Execute: true, ZooKeeper: "z:1"}, "exactly one action"},
		{Options{Execute: true}, "--bootstrap-server"},
		{Options{List: true, ZooKeeper: "z:1"}, "can only be used with --bootstrap-server"},
		{Options{Execute: true, ZooKeeper: "z:1"}, "reassignment-json-file"},
		{Options{Generate: true, ZooKeeper: "z:1", TopicsToMoveJSONFile: "f"}, "broker-list"},
	} {
		var out, errb bytes.Buffer
		if code := Main(context.Background(), tc.o, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), tc.want) || out.Len() != 0 {
			t.Errorf("%+v: %d %q %q", tc.o, code, out.String(), errb.String())
		}
	}
}

package getoffsets

import (
	"testing"

	"gregor/partition"
)

// --topic-partitions rules as GetOffsetShell reads them.
func TestParsePatternList(t *testing.T) {
	f, err := ParsePatternList("t1:1,t2:0-3,t3,t4:5-,:-2,\"q.*\"")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		topic string
		p     int32
		want  bool
	}{
		{"t1", 1, true}, {"t1", 2, false}, {"t2", 0, true}, {"t2", 2, true}, {"t2", 3, false},
		{"t3", 99, true}, {"t4", 4, false}, {"t4", 5, true}, {"zz", 1, true}, {"zz", 2, false},
		{"qx", 9, true}, {"t10", 5, false},
	} {
		if got := f.PartitionAllowed(partition.TopicPartition{Topic: c.topic, Partition: c.p}); got != c.want {
			t.Errorf("%s-%d: %v", c.topic, c.p, got)
		}
	}
	if _, err := ParsePatternList("t:x"); err == nil || err.Error() != "Invalid rule specification: t:x" {
		t.Errorf("bad rule: %v", err)
	}
	if _, err := ParsePatternList("a(:1"); err == nil || err.Error() != "a( is an invalid regex." {
		t.Errorf("bad regex: %v", err)
	}
	g, err := TopicAndPartitions("a.*,b", "0,2")
	if err != nil || !g.PartitionAllowed(partition.TopicPartition{Topic: "abc", Partition: 2}) ||
		!g.PartitionAllowed(partition.TopicPartition{Topic: "b", Partition: 0}) || g.PartitionAllowed(partition.TopicPartition{Topic: "b", Partition: 1}) ||
		g.TopicAllowed("cb") {
		t.Errorf("topic and partitions: %v", err)
	}
}

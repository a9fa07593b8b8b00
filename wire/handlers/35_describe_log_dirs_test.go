package handlers

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/storage"
)

type fakeDirs []storage.DirDescription

func (f fakeDirs) DescribeDirs() []storage.DirDescription { return f }

// Only asked-for partitions are listed, topics with none are left out,
// an offline dir carries KAFKA_STORAGE_ERROR and nothing else, and a null
// topic list means every partition.
func TestDescribeLogDirsFilter(t *testing.T) {
	tp := func(t string, p int32) storage.TopicPartition { return storage.TopicPartition{Topic: t, Partition: p} }
	b := &Broker{Log: zap.NewNop(), LogDirs: fakeDirs{
		{Dir: "/a", TotalBytes: 100, UsableBytes: 40, Replicas: []storage.ReplicaDescription{
			{TP: tp("t", 0), Size: 10}, {TP: tp("t", 1), Size: 11}, {TP: tp("u", 0), Size: 12, OffsetLag: 3},
		}},
		{Dir: "/b", Err: errors.New("disk gone"), Offline: true},
	}}
	req := kmsg.NewPtrDescribeLogDirsRequest()
	req.Version = 4
	rt := kmsg.NewDescribeLogDirsRequestTopic()
	rt.Topic, rt.Partitions = "t", []int32{1, 7}
	req.Topics = append(req.Topics, rt)
	resp := describeLogDirs(b, req)
	if len(resp.Dirs) != 2 {
		t.Fatalf("dirs %+v", resp.Dirs)
	}
	a, off := resp.Dirs[0], resp.Dirs[1]
	if a.Dir != "/a" || a.ErrorCode != 0 || a.TotalBytes != 100 || a.UsableBytes != 40 || len(a.Topics) != 1 ||
		a.Topics[0].Topic != "t" || len(a.Topics[0].Partitions) != 1 || a.Topics[0].Partitions[0].Partition != 1 || a.Topics[0].Partitions[0].Size != 11 {
		t.Fatalf("dir a %+v", a)
	}
	if off.Dir != "/b" || off.ErrorCode != kerr.KafkaStorageError.Code || len(off.Topics) != 0 {
		t.Fatalf("offline dir %+v", off)
	}
	req.Topics = nil
	resp = describeLogDirs(b, req)
	a = resp.Dirs[0]
	if len(a.Topics) != 2 || len(a.Topics[0].Partitions) != 2 || a.Topics[1].Topic != "u" || a.Topics[1].Partitions[0].OffsetLag != 3 {
		t.Fatalf("all: %+v", a)
	}
}

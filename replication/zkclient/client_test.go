package zkclient

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/partition"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

func openStore(t *testing.T) *metastore.Embedded {
	t.Helper()
	s, err := metastore.OpenEmbedded(filepath.Join(t.TempDir(), "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := zkmeta.EnsurePersistentPaths(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// writeState creates partition tp's state znode and returns its version.
func writeState(t *testing.T, s metastore.Store, tp partition.TopicPartition, st zkmeta.PartitionState) int32 {
	t.Helper()
	if err := metastore.CreateAll(s, zkmeta.PartitionStatePath(tp.Topic, tp.Partition), st.Encode(), false); err != nil {
		t.Fatal(err)
	}
	_, v, err := s.Get(zkmeta.PartitionStatePath(tp.Topic, tp.Partition))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestAlterIsrWritesStateAndNotifies(t *testing.T) {
	s := openStore(t)
	c := New(s, 1, nil)
	tp := partition.TopicPartition{Topic: "t", Partition: 2}
	v := writeState(t, s, tp, zkmeta.PartitionState{ControllerEpoch: 7, Leader: 1, LeaderEpoch: 3, ISR: []int32{1, 2, 3}})
	nv, err := c.AlterIsr(tp, 3, []int32{1, 3}, v)
	if err != nil {
		t.Fatal(err)
	}
	data, got, err := s.Get(zkmeta.PartitionStatePath("t", 2))
	if err != nil {
		t.Fatal(err)
	}
	if got != nv || nv != v+1 {
		t.Fatalf("returned version %d, znode version %d, want %d", nv, got, v+1)
	}
	st, err := zkmeta.DecodePartitionState(data)
	if err != nil {
		t.Fatal(err)
	}
	if st.ControllerEpoch != 7 || st.Leader != 1 || st.LeaderEpoch != 3 || !slices.Equal(st.ISR, []int32{1, 3}) {
		t.Fatalf("state after AlterIsr: %+v", st)
	}
	notes, err := s.Children(zkmeta.IsrChangeNotificationPath)
	if err != nil || len(notes) != 1 {
		t.Fatalf("notifications %v, %v: want one", notes, err)
	}
	// The old version no longer matches: the write is refused.
	if _, err := c.AlterIsr(tp, 3, []int32{1}, v); !errors.Is(err, metastore.ErrBadVersion) {
		t.Fatalf("stale version: %v, want ErrBadVersion", err)
	}
}

func TestAlterIsrFencedByLeaderAndEpoch(t *testing.T) {
	s := openStore(t)
	tp := partition.TopicPartition{Topic: "t", Partition: 0}
	v := writeState(t, s, tp, zkmeta.PartitionState{ControllerEpoch: 1, Leader: 2, LeaderEpoch: 5, ISR: []int32{1, 2}})
	if _, err := New(s, 1, nil).AlterIsr(tp, 5, []int32{1}, v); !errors.Is(err, kerr.FencedLeaderEpoch) {
		t.Fatalf("not the leader: %v, want FENCED_LEADER_EPOCH", err)
	}
	if _, err := New(s, 2, nil).AlterIsr(tp, 4, []int32{2}, v); !errors.Is(err, kerr.FencedLeaderEpoch) {
		t.Fatalf("old leader epoch: %v, want FENCED_LEADER_EPOCH", err)
	}
	if _, v2, _ := s.Get(zkmeta.PartitionStatePath("t", 0)); v2 != v {
		t.Fatalf("fenced write changed the znode: version %d, was %d", v2, v)
	}
}

func TestReserveProducerIDsConsecutiveBlocks(t *testing.T) {
	s := openStore(t)
	a, b := New(s, 1, nil), New(s, 2, nil)
	s1, e1, err := a.ReserveProducerIDs(1000)
	if err != nil || s1 != 0 || e1 != 1000 {
		t.Fatalf("first block [%d,%d) %v, want [0,1000)", s1, e1, err)
	}
	s2, e2, err := b.ReserveProducerIDs(1000)
	if err != nil || s2 != 1000 || e2 != 2000 {
		t.Fatalf("second block [%d,%d) %v, want [1000,2000)", s2, e2, err)
	}
	data, _, _ := s.Get(zkmeta.ProducerIDBlockPath)
	if want := `{"version":1,"broker":2,"block_start":"1000","block_end":"1999"}`; string(data) != want {
		t.Fatalf("znode %s, want %s", data, want)
	}
	if _, err := s.Set(zkmeta.ProducerIDBlockPath, []byte("junk"), metastore.AnyVersion); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.ReserveProducerIDs(10); err == nil {
		t.Fatal("reserved over a malformed znode")
	}
}

func TestControllerEpochFence(t *testing.T) {
	c := New(openStore(t), 1, nil)
	if !c.AcceptControllerEpoch(3) || c.SeenControllerEpoch() != 3 {
		t.Fatalf("first epoch refused or not recorded: seen %d", c.SeenControllerEpoch())
	}
	if c.AcceptControllerEpoch(2) {
		t.Fatal("older controller epoch accepted")
	}
	if !c.AcceptControllerEpoch(3) {
		t.Fatal("same epoch refused")
	}
	c.NoteControllerEpoch(5)
	c.NoteControllerEpoch(4) // never lowers
	if c.SeenControllerEpoch() != 5 || c.AcceptControllerEpoch(4) {
		t.Fatalf("seen %d after noting 5 then 4", c.SeenControllerEpoch())
	}
}

func TestTopicConfigAndBrokerInfo(t *testing.T) {
	s := openStore(t)
	c := New(s, 1, nil)
	if m := c.TopicConfig("none"); len(m) != 0 {
		t.Fatalf("absent config: %v", m)
	}
	if err := metastore.CreateAll(s, zkmeta.TopicConfigPath("t"), zkmeta.EncodeConfig(map[string]string{"retention.ms": "5"}), false); err != nil {
		t.Fatal(err)
	}
	if m := c.TopicConfig("t"); m["retention.ms"] != "5" || len(m) != 1 {
		t.Fatalf("config: %v", m)
	}
	if _, ok := c.BrokerInfo(9); ok {
		t.Fatal("unregistered broker found")
	}
	info := zkmeta.BrokerInfo{ID: 9, Endpoints: []zkmeta.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "h", Port: 9092}}}
	if err := metastore.CreateAll(s, zkmeta.BrokerPath(9), info.Encode(), true); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.BrokerInfo(9); !ok || got.ID != 9 || len(got.Endpoints) != 1 || got.Endpoints[0].Port != 9092 {
		t.Fatalf("broker info %+v %v", got, ok)
	}
}

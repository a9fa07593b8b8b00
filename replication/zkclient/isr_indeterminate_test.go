package zkclient

import (
	"errors"
	"slices"
	"testing"

	"gregor/partition"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// lossyStore applies a Set and then reports a connection loss once, as
// ZooKeeper does when the session's connection drops after the request
// was sent.
type lossyStore struct {
	metastore.Store
	lose bool
}

var errConnLoss = errors.New("zk: connection closed")

func (s *lossyStore) Set(p string, data []byte, v int32) (int32, error) {
	nv, err := s.Store.Set(p, data, v)
	if err == nil && s.lose {
		s.lose = false
		return 0, errConnLoss
	}
	return nv, err
}

// An expansion whose Set landed but whose answer was lost: the leader
// keeps the proposal and retries it at the same version; as Kafka's
// conditionalUpdatePath (ReplicationUtils.checkLeaderAndIsrZkData) the
// BADVERSION is resolved by re-reading the znode, which already holds the
// proposal: success with the znode's current version.
func TestAlterIsrRetryOfALandedWriteSucceeds(t *testing.T) {
	base := openStore(t)
	s := &lossyStore{Store: base, lose: true}
	c := New(s, 1, nil)
	tp := partition.TopicPartition{Topic: "t", Partition: 0}
	v := writeState(t, base, tp, zkmeta.PartitionState{ControllerEpoch: 1, Leader: 1, LeaderEpoch: 3, ISR: []int32{1, 2}})
	if _, err := c.AlterIsr(tp, 3, []int32{1, 2, 3}, v); !errors.Is(err, errConnLoss) {
		t.Fatalf("first write: %v, want the connection loss", err)
	}
	_, zkv, err := base.Get(zkmeta.PartitionStatePath("t", 0))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.AlterIsr(tp, 3, []int32{1, 2, 3}, v)
	if err != nil {
		t.Fatalf("retry of the ISR ZooKeeper already holds: %v", err)
	}
	if got != zkv || got == v {
		t.Fatalf("retry returned version %d, want the znode's %d (written over %d)", got, zkv, v)
	}
}

// A BADVERSION whose znode holds something else (the controller changed
// the ISR) stays an error.
func TestAlterIsrBadVersionOfADifferentStateFails(t *testing.T) {
	s := openStore(t)
	c := New(s, 1, nil)
	tp := partition.TopicPartition{Topic: "t", Partition: 0}
	v := writeState(t, s, tp, zkmeta.PartitionState{ControllerEpoch: 1, Leader: 1, LeaderEpoch: 3, ISR: []int32{1, 2}})
	ctl := zkmeta.PartitionState{ControllerEpoch: 1, Leader: 1, LeaderEpoch: 3, ISR: []int32{1}}
	if _, err := s.Set(zkmeta.PartitionStatePath("t", 0), ctl.Encode(), v); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AlterIsr(tp, 3, []int32{1, 2, 3}, v); !errors.Is(err, metastore.ErrBadVersion) {
		t.Fatalf("write over a changed state: %v, want ErrBadVersion", err)
	}
	data, _, _ := s.Get(zkmeta.PartitionStatePath("t", 0))
	st, _ := zkmeta.DecodePartitionState(data)
	if !slices.Equal(st.ISR, []int32{1}) {
		t.Fatalf("znode ISR = %v, want the controller's [1]", st.ISR)
	}
}

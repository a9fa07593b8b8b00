package clustertest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/actors/coordinator"
	"gregor/cmd/internal/clustertest"
)

// txnInit sends InitProducerId for id to broker, answering the codes
// clients retry (coordinator moving or loading) with ok false.
func txnInit(t testing.TB, c *clustertest.Cluster, broker int32, id string) (resp *kmsg.InitProducerIDResponse, ok bool) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr(broker)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r := kmsg.NewPtrInitProducerIDRequest()
	r.TransactionalID, r.TransactionTimeoutMillis = &id, 30000
	resp, err = r.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return nil, false
	}
	switch resp.ErrorCode {
	case kerr.NotCoordinator.Code, kerr.CoordinatorLoadInProgress.Code, kerr.CoordinatorNotAvailable.Code:
		return resp, false
	}
	return resp, true
}

// TestTransactionCoordinatorFailover: on 3 brokers over ZooKeeper,
// __transaction_state is created with replication factor 3 and
// min.insync.replicas 2; the coordinator of a transactional id is its
// partition's leader; when that broker dies, the new leader loads the
// replicated state (a new coordinator epoch) and keeps the producer id,
// handing out the next epoch.
func TestTransactionCoordinatorFailover(t *testing.T) {
	c := clustertest.MakeClusterWith(t, 3, clustertest.Options{Props: map[string]string{
		"transaction.state.log.num.partitions":     "3",
		"transaction.state.log.replication.factor": "3",
	}})
	const id = "tx-failover"
	p := coordinator.PartitionFor(id, 3)
	var first *kmsg.InitProducerIDResponse
	c.WaitFor("InitProducerId served", 10*time.Second, func() (bool, string) {
		leader := c.Leader("__transaction_state", p)
		if leader <= 0 {
			// FindCoordinator creates the topic.
			cl := c.Client()
			defer cl.Close()
			fc := kmsg.NewPtrFindCoordinatorRequest()
			fc.CoordinatorType, fc.CoordinatorKey = 1, id
			_, _ = fc.RequestWith(context.Background(), cl)
			return false, "no leader yet"
		}
		r, ok := txnInit(t, c, leader, id)
		first = r
		return ok, fmt.Sprintf("leader %d answered %+v", leader, r)
	})
	if first.ErrorCode != 0 || first.ProducerEpoch != 0 {
		t.Fatalf("init %+v", first)
	}
	if a := c.Assignment("__transaction_state"); len(a) != 3 || len(a[p]) != 3 {
		t.Fatalf("assignment %v, want 3 partitions of 3 replicas", a)
	}
	cfgs, err := c.Admin().DescribeTopicConfigs(context.Background(), "__transaction_state")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := cfgs[0].Configs, cfgs[0].Err; err != nil || !hasConfig(v, "min.insync.replicas", "2") {
		t.Fatalf("configs %v %v", v, err)
	}
	old := c.Leader("__transaction_state", p)
	c.Kill(old)
	var again *kmsg.InitProducerIDResponse
	c.WaitFor("the new coordinator to serve", 15*time.Second, func() (bool, string) {
		leader := c.Leader("__transaction_state", p)
		if leader <= 0 || leader == old {
			return false, fmt.Sprintf("leader %d", leader)
		}
		r, ok := txnInit(t, c, leader, id)
		again = r
		return ok, fmt.Sprintf("leader %d answered %+v", leader, r)
	})
	if again.ErrorCode != 0 || again.ProducerID != first.ProducerID || again.ProducerEpoch != 1 {
		t.Fatalf("init on the new coordinator %+v, want producer id %d epoch 1", again, first.ProducerID)
	}
}

func hasConfig(cs []kadm.Config, key, value string) bool {
	for _, c := range cs {
		if c.Key == key && c.MaybeValue() == value {
			return true
		}
	}
	return false
}

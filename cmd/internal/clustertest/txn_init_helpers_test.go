package clustertest_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clustertest"
)

// initTxnProducer waits until transactional id id gets a producer id from
// its coordinator, the leader of __transaction_state-0 (the clusters of
// these tests have one partition of it; FindCoordinator creates the
// topic), and returns the producer id, its epoch and the coordinator
// broker. A non-retriable InitProducerId error fails tb.
func initTxnProducer(tb testing.TB, c *clustertest.Cluster, id string) (pid int64, epoch int16, coord int32) {
	tb.Helper()
	c.WaitFor("InitProducerId served", 10*time.Second, func() (bool, string) {
		if coord = c.Leader("__transaction_state", 0); coord <= 0 {
			r := kmsg.NewPtrFindCoordinatorRequest()
			r.CoordinatorKey, r.CoordinatorType = id, 1
			_, _ = r.RequestWith(context.Background(), c.Client())
			return false, "no __transaction_state leader yet"
		}
		resp, ok := txnInit(tb, c, coord, id)
		if !ok {
			return false, "retriable InitProducerId answer"
		}
		if resp.ErrorCode != 0 {
			tb.Fatalf("InitProducerId: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		pid, epoch = resp.ProducerID, resp.ProducerEpoch
		return true, ""
	})
	return pid, epoch, coord
}

// txnCluster is the two-broker cluster of the KIP-890 verification tests
// and benchmarks: one unreplicated __transaction_state partition (so its
// leader is the coordinator of every id), unreplicated __consumer_offsets,
// plus extra properties.
func txnCluster(tb testing.TB, extra map[string]string) *clustertest.Cluster {
	tb.Helper()
	props := map[string]string{
		"transaction.state.log.num.partitions":     "1",
		"transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr":            "1",
		"offsets.topic.replication.factor":         "1",
	}
	for k, v := range extra {
		props[k] = v
	}
	return clustertest.MakeClusterWith(tb, 2, clustertest.Options{Props: props})
}

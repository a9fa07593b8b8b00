package handlers

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestTxnOffsetVerifyCode: a verification answer becomes what Kafka's
// TxnOffsetCommit answers at each version (maybeConvertOffsetCommitError,
// the v0–v1 load rewrite; PRODUCER_FENCED is already INVALID_PRODUCER_EPOCH
// from replication/txnverify, as Kafka's AddPartitionsToTxnManager).
func TestTxnOffsetVerifyCode(t *testing.T) {
	for _, c := range []struct {
		v        int16
		in, want int16
	}{
		{3, 0, 0},
		{3, kerr.TransactionAbortable.Code, kerr.InvalidTxnState.Code},
		{4, kerr.TransactionAbortable.Code, kerr.TransactionAbortable.Code},
		{3, kerr.InvalidProducerIDMapping.Code, kerr.InvalidProducerIDMapping.Code},
		{3, kerr.ConcurrentTransactions.Code, kerr.ConcurrentTransactions.Code},
		{3, kerr.NetworkException.Code, kerr.CoordinatorLoadInProgress.Code},
		{1, kerr.NetworkException.Code, kerr.CoordinatorNotAvailable.Code},
		{2, kerr.CoordinatorLoadInProgress.Code, kerr.CoordinatorLoadInProgress.Code},
		{1, kerr.CoordinatorLoadInProgress.Code, kerr.CoordinatorNotAvailable.Code},
		{3, kerr.UnknownTopicOrPartition.Code, kerr.CoordinatorNotAvailable.Code},
		{3, kerr.NotEnoughReplicas.Code, kerr.CoordinatorNotAvailable.Code},
		{3, kerr.NotLeaderForPartition.Code, kerr.NotCoordinator.Code},
		{3, kerr.KafkaStorageError.Code, kerr.NotCoordinator.Code},
		{3, kerr.NotCoordinator.Code, kerr.NotCoordinator.Code},
		{3, kerr.MessageTooLarge.Code, kerr.InvalidCommitOffsetSize.Code},
	} {
		if got := txnOffsetCommitVerifyError(c.in, c.v); got != c.want {
			t.Errorf("v%d %v → %v, want %v", c.v, kerr.ErrorForCode(c.in), kerr.ErrorForCode(got), kerr.ErrorForCode(c.want))
		}
	}
}

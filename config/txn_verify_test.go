package config

import "testing"

// TestTransactionPartitionVerificationEnable: Kafka's default is true;
// false and true are applied; anything else is a configuration error.
func TestTransactionPartitionVerificationEnable(t *testing.T) {
	const key = "transaction.partition.verification.enable"
	b, err := Parse(map[string]string{"log.dirs": t.TempDir()}, nil)
	if err != nil || !b.TransactionPartitionVerificationEnable {
		t.Fatalf("default: %v %v, want true", b.TransactionPartitionVerificationEnable, err)
	}
	b, err = Parse(map[string]string{"log.dirs": t.TempDir(), key: "false"}, nil)
	if err != nil || b.TransactionPartitionVerificationEnable {
		t.Fatalf("false: %v %v", b.TransactionPartitionVerificationEnable, err)
	}
	if _, err := Parse(map[string]string{"log.dirs": t.TempDir(), key: "maybe"}, nil); err == nil {
		t.Fatal("a non-boolean value was accepted")
	}
}

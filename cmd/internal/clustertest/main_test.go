package clustertest_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives the tests: every
// broker MakeCluster started, with its sessions, clients and actors, must
// be stopped by the cluster's cleanup. The search retries for about 2 s:
// protoactor's dead-letter throttle (a dead letter at a broker's stop
// starts it) is a goroutine that ends on its own after
// DeadLetterThrottleInterval, 1 s, which goleak's default retries (about
// half a second) would report when the last test stopped a broker just
// before.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		// Each Find retries with goleak's own backoff; a few in a row
		// cover the throttle's second.
		err := goleak.Find()
		for deadline := time.Now().Add(2 * time.Second); err != nil && time.Now().Before(deadline); {
			err = goleak.Find()
		}
		if err != nil {
			fmt.Println("goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

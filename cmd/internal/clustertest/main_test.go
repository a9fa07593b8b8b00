package clustertest_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives the tests: every
// broker MakeCluster started, with its sessions, clients and actors, must
// be stopped by the cluster's cleanup. protoactor's dead-letter throttle
// goroutine is not ours: a message reaching a stopped actor (a
// transaction coordinator's timer, a reply after a broker stopped)
// starts it, and it ends on its own after the throttle period.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1")); err != nil {
			fmt.Println("goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

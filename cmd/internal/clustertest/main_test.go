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
// is the exception (as in actors/txncoordinator): a message to an actor
// stopped during a broker's shutdown starts it, and it ends by itself
// after one throttle interval, which the last test's cleanup may not
// outlast on a loaded machine.
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

package fetcher

import (
	"testing"

	"go.uber.org/goleak"
)

// Every fetcher goroutine, kgo connection and actor must be gone when the
// brokers of a test are stopped. protoactor's dead-letter throttle starts
// a timer goroutine of its own after a burst of dead letters (a resize's
// stopped fetchers can leave one) that ends by itself within its period:
// not ours to stop, as in actors/txncoordinator.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"))
}

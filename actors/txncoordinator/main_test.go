package txncoordinator

import (
	"testing"

	"go.uber.org/goleak"
)

// Every partition actor's goroutine (loads, appends, marker sends, id
// allocations) must be gone once a test's coordinator is stopped.
// protoactor's dead-letter throttle goroutine (a timer's message reaching
// an actor that has stopped) ends on its own and is not ours.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"))
}

package fetcher

import (
	"testing"

	"go.uber.org/goleak"
)

// Every fetcher goroutine, kgo connection and actor must be gone when the
// brokers of a test are stopped.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

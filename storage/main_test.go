package storage

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind (the
// manager's open workers, readers in the concurrent test).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

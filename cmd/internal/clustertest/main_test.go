package clustertest_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives the tests: every
// broker MakeCluster started, with its sessions, clients and actors, must
// be stopped by the cluster's cleanup.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Println("goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

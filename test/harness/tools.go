package harness

import (
	"os"
	"testing"
)

// NeedTool skips t when an external client (kcat, kafka-python…) named by
// what is missing (ok false) outside CI; in CI (CI set) test/install-deps.sh
// installed it, so a missing tool fails t instead.
func NeedTool(t testing.TB, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is missing in CI (test/install-deps.sh should have installed it)", what)
	}
	t.Skipf("%s not installed (make test-deps installs it)", what)
}

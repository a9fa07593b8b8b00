package ops

import (
	"testing"

	"gregor/test/harness"
)

// TestMain removes the gregor binary the harness built once the tests end.
func TestMain(m *testing.M) { harness.Main(m) }

// Package harness starts real Gregor broker processes for integration tests:
// it builds the gregor binary once per test binary, writes a
// server.properties for each broker in a temporary directory, picks free
// loopback ports, waits until the broker answers ApiVersions, and stops it
// with SIGTERM or SIGKILL.
package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	buildDir  string // the temporary directory holding buildPath ("" until built)
	buildPath string
	buildErr  error
	buildOut  []byte
)

// Main runs a test package's tests and then removes the binary Binary
// built (its /tmp/gregor-bin-* directory), so nothing outlives the test
// binary. Every package that uses the harness calls it from its TestMain:
//
//	func TestMain(m *testing.M) { harness.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	removeBuild()
	os.Exit(code)
}

// removeBuild deletes the directory Binary built into, if it built one.
// The brokers the tests started were stopped by their cleanups already
// (and a running process keeps its executable open anyway).
func removeBuild() {
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
}

// Binary returns the path of a gregor binary built from this checkout (with
// the race detector when the tests run with it), building it on first use
// into a temporary directory that Main removes when the tests end.
// GREGOR_BIN overrides it with a prebuilt binary (nothing is built).
// Under -short it skips t: broker processes are the slow tier of the tests.
func Binary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the slow tier (gregor broker processes)")
	}
	if p := os.Getenv("GREGOR_BIN"); p != "" {
		return p
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gregor-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildDir = dir
		buildPath = filepath.Join(dir, "gregor")
		args := []string{"build", "-o", buildPath}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "./cmd/gregor")
		cmd := exec.Command("go", args...)
		cmd.Dir = repoRoot()
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building gregor: %v\n%s", buildErr, buildOut)
	}
	return buildPath
}

// repoRoot is the module root (two levels above this file).
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// RepoRoot exposes the module root for tests that run repo scripts (bin/).
func RepoRoot() string { return repoRoot() }

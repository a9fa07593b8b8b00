package ops

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"gregor/test/harness"
)

// pid.file is written while the server runs and removed on a clean stop
// (SIGHUP stops cleanly, as SIGTERM, and does not reload the config);
// log.format=json makes every log line a JSON object; `gregor admin`
// reaches the admin listener.
func TestDaemonOptionsAndAdminCLI(t *testing.T) {
	adminPort := harness.FreePort(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "gregor.pid")
	b := harness.StartBroker(t, map[string]string{
		"admin.listener": fmt.Sprintf("127.0.0.1:%d", adminPort),
		"pid.file":       pidFile,
		"log.format":     "json",
	})
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("pid.file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("pid.file holds %q", raw)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), "server") {
		t.Errorf("pid %d is not the server (%q, %v)", pid, cmdline, err)
	}

	url := fmt.Sprintf("http://127.0.0.1:%d", adminPort)
	out, err := exec.Command(harness.Binary(t), "admin", "actors", "--admin-url", url, "--kind", "replica-manager").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PATH") || !strings.Contains(string(out), "replica-manager") {
		t.Errorf("gregor admin actors: %v\n%s", err, out)
	}
	out, err = exec.Command(harness.Binary(t), "admin", "fault", "delay", "--admin-url", url, "--kind", "log-manager", "--ms", "10").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"actor":"log-manager"`) {
		t.Errorf("gregor admin fault delay: %v\n%s", err, out)
	}
	out, err = exec.Command(harness.Binary(t), "admin", "fault", "kill", "--admin-url", url, "--actor", "replica-manager/none-0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "404") {
		t.Errorf("killing an unknown actor: want an error with 404, got %v\n%s", err, out)
	}

	if !b.Signal(syscall.SIGHUP) {
		t.Fatal("no exit within 30 s of SIGHUP")
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("pid.file after a clean stop: %v", err)
	}
	for _, want := range []string{"does not reload the configuration", "shut down cleanly"} {
		if !strings.Contains(b.Log(), want) {
			t.Errorf("SIGHUP: no %q in the log:\n%s", want, b.Log())
		}
	}
	lines := 0
	for _, line := range strings.Split(strings.TrimSpace(b.Log()), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue // lines before the config was read are console lines
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		lines++
	}
	if lines < 3 {
		t.Errorf("only %d JSON log lines:\n%s", lines, b.Log())
	}
}

package integration

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gregor/test/harness"
)

// cliRun runs a bin/ wrapper (or, with script "", the gregor binary) and
// returns its exit status, stdout and stderr; a hang past 2 minutes fails.
func cliRun(t *testing.T, env []string, script string, args ...string) (int, string, string) {
	t.Helper()
	return cliRunIn(t, env, "", script, args...)
}

// cliRunIn is cliRun with stdin.
func cliRunIn(t *testing.T, env []string, stdin, script string, args ...string) (int, string, string) {
	t.Helper()
	bin := harness.Binary(t)
	name := bin
	if script != "" {
		name = filepath.Join(harness.RepoRoot(), "bin", script)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(append(os.Environ(), "GREGOR_BIN="+bin), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = strings.NewReader(stdin)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), out.String(), errb.String()
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s %v: timed out\nstdout:\n%s\nstderr:\n%s", name, args, out.String(), errb.String())
	}
	return -1, "", ""
}

// Errors print once: dump-log's file error was printed by the tool and
// again by main ("Error: …").
func TestCLIErrorPrintedOnce(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "00000000000000000000.log")
	code, _, errs := cliRun(t, nil, "kafka-dump-log.sh", "--files", missing)
	if code != 1 || strings.Count(errs, "no such file or directory") != 1 {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	code, _, errs = cliRun(t, nil, "", "nosuchcommand")
	if code != 1 || strings.Count(errs, "unknown command") != 1 {
		t.Fatalf("unknown command: exit %d %q", code, errs)
	}
	// An unreadable --command-config file, before any connection is tried.
	noProps := filepath.Join(t.TempDir(), "client.properties")
	for s, action := range map[string]string{"kafka-topics.sh": "--list", "kafka-configs.sh": "--describe", "kafka-consumer-groups.sh": "--list"} {
		code, _, errs = cliRun(t, nil, s, "--bootstrap-server", "127.0.0.1:1", "--command-config", noProps, action)
		if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "reading "+noProps) {
			t.Errorf("%s --command-config missing: exit %d %q", s, code, errs)
		}
	}
}

// The cluster tools (once placeholders) are real commands now: without an
// action they fail with one usage line, not the placeholder's.
func TestCLIPendingTools(t *testing.T) {
	for _, s := range []string{"kafka-reassign-partitions.sh", "kafka-preferred-replica-election.sh", "kafka-leader-election.sh"} {
		code, _, errs := cliRun(t, nil, s, "--bootstrap-server", "127.0.0.1:1")
		if code != 1 || strings.Count(errs, "\n") != 1 || strings.Contains(errs, "is not implemented yet") {
			t.Errorf("%s: exit %d %q", s, code, errs)
		}
	}
}

// kafka-server-start.sh -daemon writes the broker's output to
// logs/kafkaServer.out next to bin/ (LOG_DIR overrides), not /dev/null,
// appending: two brokers started from one checkout both keep their lines,
// as does an earlier run's. It prints the started PID and the log on
// stderr.
func TestCLIServerStartDaemonLog(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "bin", "kafka-server-start.sh"))
	if err != nil {
		t.Fatal(err)
	}
	start := filepath.Join(home, "bin", "kafka-server-start.sh")
	if err := os.WriteFile(start, script, 0o755); err != nil {
		t.Fatal(err)
	}
	defaultLog := filepath.Join(home, "logs", "kafkaServer.out")
	if err := os.MkdirAll(filepath.Dir(defaultLog), 0o755); err != nil {
		t.Fatal(err)
	}
	const earlier = "an earlier run's line\n"
	if err := os.WriteFile(defaultLog, []byte(earlier), 0o644); err != nil {
		t.Fatal(err)
	}
	// startDaemon starts a broker with -daemon and returns its log.dirs
	// (which its "started" line names) and the log file it reported.
	startDaemon := func(logDir string) (string, string) {
		port := harness.FreePort(t)
		dataDir := filepath.Join(home, "data", strconv.Itoa(port))
		cfg := filepath.Join(home, fmt.Sprintf("server-%d.properties", port))
		body := fmt.Sprintf("broker.id=0\nlisteners=PLAINTEXT://127.0.0.1:%d\nlog.dirs=%s\noffsets.topic.replication.factor=1\n", port, dataDir)
		if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		var env []string
		if logDir != "" {
			env = []string{"LOG_DIR=" + logDir}
		}
		cmd := exec.Command(start, "-daemon", cfg)
		cmd.Env = append(append(os.Environ(), "GREGOR_BIN="+harness.Binary(t)), env...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil || out.Len() != 0 {
			t.Fatalf("start -daemon: %v %q %q", err, out.String(), errb.String())
		}
		pid := daemonPID(t, cfg)
		t.Cleanup(func() { stopPID(pid) })
		var gotPID int
		var logFile string
		if n, _ := fmt.Sscanf(errb.String(), "Started gregor server, pid %d, log %s\n", &gotPID, &logFile); n != 2 || gotPID != pid || strings.Count(errb.String(), "\n") != 1 {
			t.Fatalf("start -daemon stderr %q, want the pid %d and the log", errb.String(), pid)
		}
		return dataDir, logFile
	}
	// waitLog waits until file holds the "started" line of the broker with dataDir.
	waitLog := func(file, dataDir string) string {
		deadline := time.Now().Add(60 * time.Second)
		for {
			b, _ := os.ReadFile(file)
			for _, l := range strings.Split(string(b), "\n") {
				if strings.Contains(l, "started") && strings.Contains(l, dataDir) {
					return string(b)
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s has no started line for %s: %q", file, dataDir, b)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	d1, f1 := startDaemon("")
	waitLog(defaultLog, d1)
	d2, f2 := startDaemon("")
	if f1 != defaultLog || f2 != defaultLog {
		t.Fatalf("reported logs %s, %s; want %s", f1, f2, defaultLog)
	}
	all := waitLog(defaultLog, d2)
	if !strings.HasPrefix(all, earlier) || !strings.Contains(all, d1) {
		t.Fatalf("the second start truncated %s:\n%s", defaultLog, all)
	}

	custom := filepath.Join(home, "custom")
	d3, f3 := startDaemon(custom)
	if f3 != filepath.Join(custom, "kafkaServer.out") {
		t.Fatalf("LOG_DIR=%s: reported log %s", custom, f3)
	}
	waitLog(f3, d3)
	if b, _ := os.ReadFile(defaultLog); strings.Contains(string(b), d3) {
		t.Fatalf("the LOG_DIR broker wrote to %s too", defaultLog)
	}
}

// daemonPID finds the backgrounded `gregor server cfg` by its (unique)
// config path, waiting for it to appear.
func daemonPID(t *testing.T, cfg string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		out, _ := exec.Command("ps", "ax", "-o", "pid=", "-o", "args=").Output()
		for _, l := range strings.Split(string(out), "\n") {
			f := strings.Fields(l)
			if len(f) >= 4 && f[2] == "server" && f[3] == cfg {
				if pid, err := strconv.Atoi(f[0]); err == nil {
					return pid
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no daemon for %s", cfg)
	return 0
}

// stopPID sends SIGTERM and waits (bounded) for the process to go, then SIGKILLs.
func stopPID(pid int) {
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 300; i++ {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// Against the real broker: its ErrorMessage reaches the user, internal
// topics are refused, configs round-trips, replay copies a topic, and the
// console consumer warns about an unknown topic.
func TestCLIToolsAgainstBroker(t *testing.T) {
	b := harness.StartBroker(t, nil)
	bs := b.Addr()
	code, out, errs := cliRun(t, nil, "kafka-topics.sh", "--bootstrap-server", bs, "--create", "--topic", "my.topic", "--partitions", "1", "--replication-factor", "1")
	if code != 0 {
		t.Fatalf("create: %d %q %q", code, out, errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--topic", "my_topic"}, "collides"},
		{[]string{"--topic", "bad/name"}, "bad/name"},
		{[]string{"--topic", "cfg1", "--config", "nosuch.config=1"}, "nosuch.config"},
		{[]string{"--topic", "cfg2", "--config", "retention.ms=abc"}, "abc"},
	} {
		args := append([]string{"--bootstrap-server", bs, "--create", "--partitions", "1", "--replication-factor", "1"}, c.args...)
		code, out, errs = cliRun(t, nil, "kafka-topics.sh", args...)
		if code != 1 || !strings.HasPrefix(errs, "Error while executing topic command : ") || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d %q %q", c.args, code, out, errs)
		}
	}

	// configs: alter, describe, delete.
	code, out, errs = cliRun(t, nil, "kafka-configs.sh", "--bootstrap-server", bs, "--entity-type", "topics", "--entity-name", "my.topic", "--alter", "--add-config", "retention.ms=12345")
	if code != 0 || out != "Completed updating config for topic my.topic.\n" {
		t.Fatalf("configs alter: %d %q %q", code, out, errs)
	}
	code, out, errs = cliRun(t, nil, "kafka-configs.sh", "--bootstrap-server", bs, "--topic", "my.topic", "--describe")
	if code != 0 || !strings.HasPrefix(out, "Dynamic configs for topic my.topic are:\n  retention.ms=12345 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=12345") {
		t.Fatalf("configs describe: %d %q %q", code, out, errs)
	}
	code, out, errs = cliRun(t, nil, "kafka-configs.sh", "--bootstrap-server", bs, "--topic", "my.topic", "--alter", "--add-config", "retention.ms=abc")
	if code != 1 || !strings.HasPrefix(errs, "Error while executing config command with args") || !strings.Contains(errs, "abc") {
		t.Fatalf("configs bad value: %d %q %q", code, out, errs)
	}
	code, out, errs = cliRun(t, nil, "kafka-configs.sh", "--bootstrap-server", bs, "--broker", "0", "--describe", "--all")
	if code != 0 || !strings.HasPrefix(out, "All configs for broker 0 are:\n") || !strings.Contains(out, "  log.dirs=") {
		t.Fatalf("configs broker: %d %q %q", code, out, errs)
	}

	// replay: my.topic → copy.
	cmd := exec.Command(filepath.Join(harness.RepoRoot(), "bin", "kafka-console-producer.sh"), "--bootstrap-server", bs, "--topic", "my.topic")
	cmd.Env = append(os.Environ(), "GREGOR_BIN="+harness.Binary(t))
	cmd.Stdin = strings.NewReader("one\ntwo\n" + strings.Repeat("z", 40000) + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("producer: %v %s", err, out)
	}
	createTopic(t, b, "copy", 1, nil)
	if code, out, errs = cliRun(t, nil, "kafka-replay-log-producer.sh", "--broker-list", bs, "--inputtopic", "my.topic", "--outputtopic", "copy"); code != 0 {
		t.Fatalf("replay: %d %q %q", code, out, errs)
	}
	code, out, errs = cliRun(t, nil, "kafka-console-consumer.sh", "--bootstrap-server", bs, "--topic", "copy", "--from-beginning", "--max-messages", "3", "--timeout-ms", "20000")
	if code != 0 || out != "one\ntwo\n"+strings.Repeat("z", 40000)+"\n" {
		t.Fatalf("consume copy: %d %d bytes %q", code, len(out), errs)
	}

	// console consumer: unknown topic warns; a partition the topic lacks fails.
	code, out, errs = cliRun(t, nil, "kafka-console-consumer.sh", "--bootstrap-server", bs, "--topic", "nosuch", "--timeout-ms", "500")
	if code != 0 || !strings.Contains(errs, "Error while fetching metadata: {nosuch=UNKNOWN_TOPIC_OR_PARTITION}") {
		t.Fatalf("unknown topic: %d %q %q", code, out, errs)
	}
	code, _, errs = cliRun(t, nil, "kafka-console-consumer.sh", "--bootstrap-server", bs, "--topic", "copy", "--partition", "9", "--timeout-ms", "5000")
	if code != 1 || !strings.Contains(errs, "Partition copy-9 does not exist") {
		t.Fatalf("--partition 9: %d %q", code, errs)
	}
}

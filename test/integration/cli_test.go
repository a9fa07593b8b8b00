package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"gregor/test/harness"
)

// binScript runs one of the bin/kafka-*.sh wrappers with the test's gregor
// binary (GREGOR_BIN tells the wrappers which binary to exec).
func binScript(t *testing.T, stdin string, script string, args ...string) string {
	t.Helper()
	path := filepath.Join(harness.RepoRoot(), "bin", script)
	t.Setenv("GREGOR_BIN", harness.Binary(t))
	return run(t, 2*time.Minute, stdin, path, args...)
}

// TestSeedWalkthrough runs the seed articles' single-node commands as
// written (through bin/kafka-*.sh): create a topic, list and describe it,
// produce lines with the console producer, read them with the console consumer.
func TestSeedWalkthrough(t *testing.T) {
	b := harness.StartBroker(t, nil)
	out := binScript(t, "", "kafka-topics.sh", "--create", "--bootstrap-server", b.Addr(), "--topic", "test", "--partitions", "1", "--replication-factor", "1")
	if !strings.Contains(out, "Created topic test") {
		t.Fatalf("create said %q", out)
	}
	out = binScript(t, "", "kafka-topics.sh", "--list", "--bootstrap-server", b.Addr())
	if strings.TrimSpace(out) != "test" {
		t.Fatalf("list said %q, want just test", out)
	}
	out = binScript(t, "", "kafka-topics.sh", "--describe", "--bootstrap-server", b.Addr(), "--topic", "test")
	for _, want := range []string{"Topic: test", "PartitionCount: 1", "ReplicationFactor: 1", "Partition: 0", "Leader: 0", "Replicas: 0", "Isr: 0"} {
		if !strings.Contains(out, want) {
			t.Fatalf("describe lacks %q:\n%s", want, out)
		}
	}
	lines := []string{"This is a message", "This is another message", "三个 bytes", "last"}
	binScript(t, strings.Join(lines, "\n")+"\n", "kafka-console-producer.sh", "--broker-list", b.Addr(), "--topic", "test")
	out = binScript(t, "", "kafka-console-consumer.sh", "--bootstrap-server", b.Addr(), "--topic", "test", "--from-beginning", "--max-messages", "4")
	got := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if strings.Join(got, "|") != strings.Join(lines, "|") {
		t.Fatalf("consumer printed %q, want %q", got, lines)
	}

	// Keyed lines: parse.key on the way in, print.key on the way out.
	binScript(t, "a:1\nb:2\n", "kafka-console-producer.sh", "--bootstrap-server", b.Addr(), "--topic", "test",
		"--property", "parse.key=true", "--property", "key.separator=:")
	out = binScript(t, "", "kafka-console-consumer.sh", "--bootstrap-server", b.Addr(), "--topic", "test",
		"--partition", "0", "--offset", "4", "--max-messages", "2", "--property", "print.key=true")
	got = strings.Split(strings.TrimRight(out, "\n"), "\n")
	sort.Strings(got)
	if strings.Join(got, "|") != "a\t1|b\t2" {
		t.Fatalf("keyed consumer printed %q", got)
	}
}

// TestServerRejectsBadConfigValue: a bad value in server.properties is an
// error naming the key and the value, with exit status 1.
func TestServerRejectsBadConfigValue(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "server.properties")
	body := "broker.id=0\nlisteners=PLAINTEXT://127.0.0.1:0\nlog.dirs=" + filepath.Join(dir, "data") + "\nnum.partitions=lots\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(harness.Binary(t), "server", cfg)
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1; output:\n%s", err, out)
	}
	if !strings.Contains(string(out), "num.partitions") || !strings.Contains(string(out), "lots") {
		t.Fatalf("error does not name the key and value:\n%s", out)
	}
}

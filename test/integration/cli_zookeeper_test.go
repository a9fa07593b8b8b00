package integration

// zookeeper-shell.sh, zookeeper-server-start.sh / -stop.sh (Debian's
// ZooKeeper) and kafka-run-class.sh's dispatch (issue 15, point 6).

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"gregor/test/harness"
	"gregor/test/zkharness"
)

func TestCLIZooKeeperShell(t *testing.T) {
	s := zkharness.Start(t, zkharness.Options{})
	code, out, errs := cliRun(t, nil, "zookeeper-shell.sh", s.Addr(), "ls", "/")
	if code != 0 || !strings.Contains(out, "\n[zookeeper]\n") {
		t.Fatalf("ls /: %d %q %q", code, out, errs)
	}
	if code, out, errs = cliRun(t, nil, "zookeeper-shell.sh", s.Addr(), "create", "/gregor-zk", "hello"); code != 0 || !strings.Contains(out+errs, "Created /gregor-zk") { // ZooKeeper 3.8's CLI prints it on stderr
		t.Fatalf("create: %d %q %q", code, out, errs)
	}
	if code, out, _ = cliRun(t, nil, "zookeeper-shell.sh", s.Addr(), "get", "/gregor-zk"); code != 0 || !strings.Contains(out, "\nhello\n") {
		t.Fatalf("get: %d %q", code, out)
	}
	// A chroot: / is /gregor-zk.
	if code, out, _ = cliRun(t, nil, "zookeeper-shell.sh", s.Addr()+"/gregor-zk", "ls", "/"); code != 0 || !strings.Contains(out, "\n[]\n") {
		t.Fatalf("chroot ls: %d %q", code, out)
	}
	code, _, errs = cliRun(t, nil, "zookeeper-shell.sh")
	if code != 1 || !strings.Contains(errs, "USAGE: ") {
		t.Fatalf("no args: %d %q", code, errs)
	}
	code, _, errs = cliRun(t, []string{"ZKCLI=/nonexistent/zkCli.sh"}, "zookeeper-shell.sh", s.Addr(), "ls", "/")
	if code != 1 || !strings.Contains(errs, "install the zookeeper package") {
		t.Fatalf("no zkCli: %d %q", code, errs)
	}
}

func TestCLIZooKeeperServerStartStop(t *testing.T) {
	zkharness.SkipIfUnavailable(t)
	dir := t.TempDir()
	port := harness.FreePort(t)
	cfg := filepath.Join(dir, "zookeeper.properties")
	props := fmt.Sprintf("dataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n", filepath.Join(dir, "data"), port)
	if err := os.WriteFile(cfg, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"LOG_DIR=" + filepath.Join(dir, "logs"), "KAFKA_HEAP_OPTS=-Xmx128m"}
	code, _, errs := cliRun(t, env, "zookeeper-server-start.sh", "-daemon", cfg)
	m := regexp.MustCompile(`Started zookeeper, pid (\d+), log (\S+)`).FindStringSubmatch(errs)
	if code != 0 || m == nil {
		t.Fatalf("start: %d %q", code, errs)
	}
	pid, _ := strconv.Atoi(m[1])
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // ours, if the stop failed
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	conn, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var kids []string
	waitFor(t, 60*time.Second, "zookeeper serving", func() bool {
		kids, _, err = conn.Children("/")
		return err == nil
	})
	if len(kids) != 1 || kids[0] != "zookeeper" {
		t.Fatalf("children %v", kids)
	}
	// The data dir is the config's.
	if _, err := os.Stat(filepath.Join(dir, "data", "version-2")); err != nil {
		t.Fatalf("data dir: %v", err)
	}
	code, out, errs := cliRun(t, nil, "zookeeper-server-stop.sh", cfg)
	if code != 0 {
		t.Fatalf("stop: %d %q %q", code, out, errs)
	}
	waitFor(t, 30*time.Second, "zookeeper exited", func() bool { return syscall.Kill(pid, 0) != nil })
	code, out, _ = cliRun(t, nil, "zookeeper-server-stop.sh", cfg)
	if code != 1 || out != "No zookeeper server to stop\n" {
		t.Fatalf("second stop: %d %q", code, out)
	}
	if log, err := os.ReadFile(m[2]); err != nil || !strings.Contains(string(log), "QuorumPeerMain") {
		t.Errorf("log %s: %v %q", m[2], err, log)
	}

	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, nil, "USAGE: "},
		{nil, []string{"-daemon"}, "USAGE: "},
		{[]string{"ZOOKEEPER_JAR=/nonexistent/zookeeper.jar"}, []string{cfg}, "install the zookeeper package"},
		{nil, []string{filepath.Join(dir, "nosuch.properties")}, "cannot read"},
	} {
		code, _, errs := cliRun(t, c.env, "zookeeper-server-start.sh", c.args...)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("start %v: %d %q", c.args, code, errs)
		}
	}
}

// kafka-run-class.sh runs the subcommand of a Kafka tool class, old or new
// name; an unknown class fails as java does.
func TestCLIRunClassDispatch(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "00000000000000000000.log")
	_, _, want := cliRun(t, nil, "kafka-dump-log.sh", "--files", missing)
	for _, class := range []string{"kafka.tools.DumpLogSegments", "org.apache.kafka.tools.DumpLogSegments"} {
		code, _, errs := cliRun(t, nil, "kafka-run-class.sh", class, "--files", missing)
		if code != 1 || errs != want || want == "" {
			t.Errorf("%s: %d %q, want %q", class, code, errs, want)
		}
	}
	for class, wantErr := range map[string]string{
		"kafka.admin.TopicCommand":                                   "Command must include exactly one action",
		"kafka.admin.DeleteRecordsCommand":                           `Missing required argument "[bootstrap-server]"`,
		"kafka.admin.LogDirsCommand":                                 `Missing required argument "[bootstrap-server]"`,
		"kafka.admin.BrokerApiVersionsCommand":                       `Missing required argument "[bootstrap-server]"`,
		"org.apache.kafka.tools.VerifiableProducer":                  "verifiable-producer: error: argument --topic is required",
		"kafka.tools.VerifiableConsumer":                             "verifiable-consumer: error: one of the arguments --bootstrap-server --broker-list is required",
		"org.apache.kafka.tools.consumer.group.ConsumerGroupCommand": "",
	} {
		code, _, errs := cliRun(t, nil, "kafka-run-class.sh", class)
		if code == 0 || !strings.Contains(errs, wantErr) {
			t.Errorf("%s: %d %q", class, code, errs)
		}
	}
	code, _, errs := cliRun(t, nil, "kafka-run-class.sh", "kafka.tools.NoSuchTool", "--x")
	if code != 1 || errs != "Error: Could not find or load main class kafka.tools.NoSuchTool\nCaused by: java.lang.ClassNotFoundException: kafka.tools.NoSuchTool\n" {
		t.Errorf("unknown class: %d %q", code, errs)
	}
	if code, _, errs = cliRun(t, nil, "kafka-run-class.sh"); code != 1 || !strings.HasPrefix(errs, "USAGE: ") {
		t.Errorf("no class: %d %q", code, errs)
	}
}

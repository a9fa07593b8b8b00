package harness

import (
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/bench/benchproc"
)

// Broker is one gregor server process started by a test.
type Broker struct {
	t       testing.TB
	ID      int32
	Port    int
	Dir     string // working dir: server.properties, broker.log, data/
	DataDir string
	Props   map[string]string
	// Args follow "server <server.properties>" on the command line
	// (kafka-server-start.sh's --override property=value).
	Args    []string
	cmd     *exec.Cmd
	done    chan struct{}
	logFile *os.File
}

// Addr is the broker's bootstrap address, "127.0.0.1:port".
func (b *Broker) Addr() string { return fmt.Sprintf("127.0.0.1:%d", b.Port) }

// FreePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// StartBroker writes a server.properties (single node, embedded metadata,
// data in a temp dir) overlaid with props (a listeners value is appended to
// the harness's own PLAINTEXT listener), starts `gregor server`, waits until
// it answers, and registers a cleanup that stops it.
func StartBroker(t testing.TB, props map[string]string) *Broker {
	t.Helper()
	return StartBrokerArgs(t, props)
}

// StartBrokerArgs is StartBroker with args after the properties file on
// the server's command line (b.Args).
func StartBrokerArgs(t testing.TB, props map[string]string, args ...string) *Broker {
	t.Helper()
	dir := t.TempDir()
	b := &Broker{t: t, Dir: dir, DataDir: filepath.Join(dir, "data"), Port: FreePort(t), Props: map[string]string{}, Args: args}
	defaults := map[string]string{
		"broker.id":                        "0",
		"log.dirs":                         b.DataDir,
		"num.partitions":                   "1",
		"offsets.topic.replication.factor": "1",
		"group.initial.rebalance.delay.ms": "0",
	}
	for k, v := range defaults {
		b.Props[k] = v
	}
	for k, v := range props {
		b.Props[k] = v
	}
	// The harness's PLAINTEXT listener (Port, which readiness and Client
	// use) comes first; props' listeners, if any, are added after it.
	b.Props["listeners"] = fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", b.Port)
	if extra := props["listeners"]; extra != "" {
		b.Props["listeners"] += "," + extra
	}
	b.Start()
	t.Cleanup(func() { b.Stop() })
	return b
}

// Start (re)starts the process with the broker's properties and waits until
// it serves ApiVersions.
func (b *Broker) Start() {
	b.t.Helper()
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(b.Props)) {
		fmt.Fprintf(&sb, "%s=%s\n", k, b.Props[k])
	}
	cfg := filepath.Join(b.Dir, "server.properties")
	if err := os.WriteFile(cfg, []byte(sb.String()), 0o644); err != nil {
		b.t.Fatalf("write config: %v", err)
	}
	lf, err := os.OpenFile(filepath.Join(b.Dir, "broker.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		b.t.Fatalf("broker log: %v", err)
	}
	b.logFile = lf
	b.cmd = exec.Command(Binary(b.t), append([]string{"server", cfg}, b.Args...)...)
	b.cmd.Dir = b.Dir
	b.cmd.Stdout, b.cmd.Stderr = lf, lf
	if err := b.cmd.Start(); err != nil {
		lf.Close()
		b.t.Fatalf("start broker: %v", err)
	}
	b.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(b.cmd, b.done)
	if err := b.waitReady(60 * time.Second); err != nil {
		b.t.Fatalf("broker did not become ready: %v\n--- broker.log ---\n%s", err, b.Log())
	}
}

func (b *Broker) waitReady(d time.Duration) error {
	deadline := time.Now().Add(d)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-b.done:
			return fmt.Errorf("process exited: %v", b.cmd.ProcessState)
		default:
		}
		err := benchproc.AnswersKafka(b.Addr())
		if err == nil {
			return nil
		}
		last = err
		time.Sleep(50 * time.Millisecond) // polling a process that gives no readiness event
	}
	return fmt.Errorf("timeout after %v: %v", d, last)
}

// Pid is the server process's id; 0 when it was never started.
func (b *Broker) Pid() int {
	if b.cmd == nil || b.cmd.Process == nil {
		return 0
	}
	return b.cmd.Process.Pid
}

// Log returns what the broker wrote to stdout/stderr so far.
func (b *Broker) Log() string {
	data, _ := os.ReadFile(filepath.Join(b.Dir, "broker.log"))
	return string(data)
}

// Signal sends sig and waits up to 30 s for the process to exit; it reports
// whether the process exited.
func (b *Broker) Signal(sig syscall.Signal) bool {
	if b.cmd == nil || b.cmd.Process == nil {
		return true
	}
	_ = b.cmd.Process.Signal(sig)
	select {
	case <-b.done:
	case <-time.After(30 * time.Second):
		return false
	}
	b.logFile.Close()
	return true
}

// Stop terminates the broker with SIGTERM (SIGKILL after 30 s).
func (b *Broker) Stop() {
	if b.done == nil {
		return
	}
	select {
	case <-b.done:
		return
	default:
	}
	if !b.Signal(syscall.SIGTERM) {
		b.t.Errorf("broker did not stop on SIGTERM within 30s; killing")
		b.Signal(syscall.SIGKILL)
	}
}

// Kill terminates the broker with SIGKILL (an unclean shutdown).
func (b *Broker) Kill() { b.Signal(syscall.SIGKILL) }

// Running reports whether the process is running (ExitCode cannot tell:
// it is -1 for a process killed by a signal too).
func (b *Broker) Running() bool {
	select {
	case <-b.done:
		return false
	default:
		return true
	}
}

// ExitCode is the process exit status after it stopped (-1 while running,
// and after a kill by a signal).
func (b *Broker) ExitCode() int {
	select {
	case <-b.done:
		return b.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

// Client returns a franz-go client seeded with this broker, closed at test end.
func (b *Broker) Client(opts ...kgo.Opt) *kgo.Client {
	b.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.Addr())}, opts...)...)
	if err != nil {
		b.t.Fatalf("client: %v", err)
	}
	b.t.Cleanup(cl.Close)
	return cl
}

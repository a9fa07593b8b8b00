// Package zkharness runs a real standalone ZooKeeper server for tests:
// Debian's zookeeper package (/usr/share/java/zookeeper.jar) started with
// java directly, so the process we hold is the server itself and Kill really
// kills it. It binds 127.0.0.1 on a free port and keeps its data in a
// temporary directory; Stop, Kill and Start allow fault injection, and
// Proxy (proxy.go) sits in front of it to cut traffic and force a session
// expiry.
//
// When the jar or java is missing the test is skipped, except when the CI
// environment variable is set, where it fails (CI must install the
// zookeeper package, as test/install-deps.sh does).
package zkharness

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Jar is Debian's ZooKeeper server jar; its manifest Class-Path names the
// dependency jars beside it.
const Jar = "/usr/share/java/zookeeper.jar"

// slf4jSimple gives the server a logging backend (without it ZooKeeper
// logs nothing at all); it writes to the server's log file.
const slf4jSimple = "/usr/share/java/slf4j-simple.jar"

// StartTimeout bounds how long Start waits for the server to serve.
const StartTimeout = 60 * time.Second

// Options tune the server. The zero value is usable.
type Options struct {
	// TickTime is ZooKeeper's tickTime, the unit of its session timeouts:
	// the server grants session timeouts between 2 and 20 ticks. Default
	// 500ms, so a client asking for Kafka's 18 s gets 10 s and a test can
	// expire a session in about 1 s.
	TickTime time.Duration
	// LogLevel is slf4j-simple's level for the server log (default "warn").
	LogLevel string
}

// Server is one standalone ZooKeeper. Its methods are safe for concurrent use.
type Server struct {
	// Dir holds zoo.cfg, the data dir and server.log.
	Dir string
	// Port is the client port on 127.0.0.1; it stays the same across
	// Stop/Start.
	Port int

	opts Options

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has been waited for
}

// Available reports whether a ZooKeeper server can be started here.
func Available() error {
	if _, err := os.Stat(Jar); err != nil {
		return fmt.Errorf("zkharness: %s missing (install Debian's zookeeper package): %w", Jar, err)
	}
	if _, err := exec.LookPath("java"); err != nil {
		return fmt.Errorf("zkharness: java missing: %w", err)
	}
	return nil
}

// SkipIfUnavailable skips t when no server can be started, and fails it
// instead when the CI environment variable is set. Under -short it always
// skips: a real ZooKeeper is the slow tier of the tests (the in-process
// cluster over metastore.Memory, cmd/internal/clustertest, is the fast one).
func SkipIfUnavailable(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the slow tier (a real ZooKeeper)")
	}
	if err := Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// Start starts a server for the test and stops it (and removes its
// directory) when the test ends. It skips the test when ZooKeeper is not
// installed (see SkipIfUnavailable).
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	SkipIfUnavailable(t)
	s, err := New(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Kill() })
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// New prepares a server in dir (writing zoo.cfg for a free loopback port)
// without starting it. The caller must Stop or Kill a started server.
func New(dir string, opts Options) (*Server, error) {
	if opts.TickTime <= 0 {
		opts.TickTime = 500 * time.Millisecond
	}
	if opts.LogLevel == "" {
		opts.LogLevel = "warn"
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, Port: port, opts: opts}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, fmt.Errorf("zkharness: %w", err)
	}
	cfg := fmt.Sprintf(`tickTime=%d
initLimit=10
syncLimit=5
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=*
`, opts.TickTime.Milliseconds(), filepath.Join(dir, "data"), port)
	if err := os.WriteFile(s.cfgPath(), []byte(cfg), 0o644); err != nil {
		return nil, fmt.Errorf("zkharness: %w", err)
	}
	return s, nil
}

func (s *Server) cfgPath() string { return filepath.Join(s.Dir, "zoo.cfg") }

// LogPath is the server's combined stdout/stderr.
func (s *Server) LogPath() string { return filepath.Join(s.Dir, "server.log") }

// Addr is "127.0.0.1:<port>", a zookeeper.connect value.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// PID is the server process id, 0 when it is not running.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Start launches the server (again, after Stop or Kill, on the same port
// and data) and waits until it serves: its "srvr" answer contains "Mode:".
func (s *Server) Start() error {
	s.mu.Lock()
	if s.cmd != nil {
		s.mu.Unlock()
		return errors.New("zkharness: server already running")
	}
	logf, err := os.OpenFile(s.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.mu.Unlock()
		return fmt.Errorf("zkharness: %w", err)
	}
	cmd := exec.Command("java",
		"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel="+s.opts.LogLevel,
		"-Dzookeeper.admin.enableServer=false",
		// No fsync per transaction: a killed server keeps its writes in
		// the page cache, and tests do not survive a machine crash anyway.
		"-Dzookeeper.forceSync=no",
		"-cp", Jar+":"+slf4jSimple,
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", s.cfgPath())
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so a terminal's ^C does not reach it first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		s.mu.Unlock()
		return fmt.Errorf("zkharness: start java: %w", err)
	}
	done := make(chan struct{})
	s.cmd, s.done = cmd, done
	go func() {
		cmd.Wait()
		logf.Close()
		close(done)
	}()
	s.mu.Unlock()

	deadline := time.Now().Add(StartTimeout)
	for {
		if out, err := s.FourLetterWord("srvr"); err == nil && strings.Contains(out, "\nMode: ") {
			return nil
		}
		select {
		case <-done:
			s.mu.Lock()
			s.cmd = nil
			s.mu.Unlock()
			return fmt.Errorf("zkharness: server exited during start-up: %s", s.logTail())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Kill()
			return fmt.Errorf("zkharness: server not serving after %v: %s", StartTimeout, s.logTail())
		}
	}
}

// Stop terminates the server gracefully (SIGTERM) and waits for it to exit.
func (s *Server) Stop() error { return s.signal(syscall.SIGTERM) }

// Kill kills the server (SIGKILL) and waits for it to exit. Killing a
// stopped server is a no-op.
func (s *Server) Kill() error { return s.signal(syscall.SIGKILL) }

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	cmd.Process.Signal(sig)
	select {
	case <-done:
		return nil
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		return fmt.Errorf("zkharness: server ignored %v for 20s; killed", sig)
	}
}

// FourLetterWord sends one of ZooKeeper's four-letter commands ("srvr",
// "ruok", "stat", "cons", "dump", …) and returns the answer.
func (s *Server) FourLetterWord(cmd string) (string, error) {
	c, err := net.DialTimeout("tcp", s.Addr(), 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(cmd)); err != nil {
		return "", err
	}
	var b bytes.Buffer
	_, err = b.ReadFrom(bufio.NewReader(c))
	return b.String(), err
}

// logTail returns the last lines of the server log for error messages.
func (s *Server) logTail() string {
	raw, _ := os.ReadFile(s.LogPath())
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("zkharness: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Package benchproc is what the benchmark programs under test/bench share
// for the processes they measure: starting a broker (or any server) as a
// child process with its output in a log file, waiting until it answers
// Kafka's ApiVersions, stopping it by signal, free loopback ports, and
// reading the child's CPU time, RSS, open descriptors and open-file limit
// from /proc (procfs.go). It is for programs, not tests: errors are
// returned, never t.Fatal.
package benchproc

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Process is one started child process; it is reaped in the background,
// so Done and Exited tell whether it is still running.
type Process struct {
	Cmd  *exec.Cmd
	done chan struct{}
}

// Start starts cmd with its stdout and stderr appended to logPath and
// reaps it in the background. The caller must Stop or Kill it.
func Start(cmd *exec.Cmd, logPath string) (*Process, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{Cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// Pid is the child's process id.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Done is closed once the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig and waits up to wait for the process to exit; it
// reports whether it exited in that time. Signalling an exited process
// reports true.
func (p *Process) Signal(sig syscall.Signal, wait time.Duration) bool {
	if p.Exited() {
		return true
	}
	_ = p.Cmd.Process.Signal(sig)
	select {
	case <-p.done:
		return true
	case <-time.After(wait):
		return false
	}
}

// Stop sends SIGTERM and, when the process has not exited within grace,
// SIGKILL; it returns once the process is gone.
func (p *Process) Stop(grace time.Duration) {
	if !p.Signal(syscall.SIGTERM, grace) {
		p.Kill()
	}
}

// Kill sends SIGKILL and waits for the process to be reaped.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.done
}

// WaitKafka polls addr with ApiVersions until it answers, the process
// exits (an error naming its exit state) or d has passed.
func (p *Process) WaitKafka(addr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	var last error
	for time.Now().Before(deadline) {
		if p.Exited() {
			return fmt.Errorf("process exited: %v", p.Cmd.ProcessState)
		}
		err := AnswersKafka(addr)
		if err == nil {
			return nil
		}
		last = err
		time.Sleep(50 * time.Millisecond) // a process gives no readiness event to wait on
	}
	return fmt.Errorf("%s not answering ApiVersions after %v: %v", addr, d, last)
}

// FreePort asks the kernel for a free loopback port. Another process can
// take it before the caller binds it; on this machine's loopback that race
// has not been seen.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// AnswersKafka sends one ApiVersions to addr (bounded by 2 s) and reports
// whether it was answered: the readiness probe of a broker process, here
// and in test/harness.
func AnswersKafka(addr string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	return err
}

package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// consoleProc is a kafka-console-consumer.sh process whose stdout and
// stderr go to files the test polls.
type consoleProc struct {
	cmd            *exec.Cmd
	stdout, stderr string
	done           chan error
}

func startConsole(t *testing.T, dir, name string, args ...string) *consoleProc {
	t.Helper()
	p := &consoleProc{stdout: filepath.Join(dir, name+".out"), stderr: filepath.Join(dir, name+".err"), done: make(chan error, 1)}
	so, err := os.Create(p.stdout)
	if err != nil {
		t.Fatal(err)
	}
	defer so.Close()
	se, err := os.Create(p.stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer se.Close()
	p.cmd = exec.Command(filepath.Join(harness.RepoRoot(), "bin", "kafka-console-consumer.sh"), args...)
	p.cmd.Env = append(os.Environ(), "GREGOR_BIN="+harness.Binary(t))
	p.cmd.Stdout, p.cmd.Stderr = so, se
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *consoleProc) lines() []string {
	b, _ := os.ReadFile(p.stdout)
	s := strings.TrimRight(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func (p *consoleProc) errText() string { b, _ := os.ReadFile(p.stderr); return string(b) }

// signal sends sig and waits (bounded) for the exit status.
func (p *consoleProc) signal(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return p.cmd.ProcessState.ExitCode() // -1 when the signal killed it
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("console consumer still running 30 s after %v; stderr:\n%s", sig, p.errText())
	}
	return 0
}

// waitFor polls cond every 50 ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Two console consumers share a group; SIGTERM one. As Kafka's shutdown
// hook does, it commits what it printed, leaves the group (so the other
// owns every partition long before session.timeout.ms, 30 s here), prints
// "Processed a total of N messages" and exits 143 (the JVM's 128+SIGTERM);
// SIGINT on the other exits 130.
func TestCLIConsoleConsumerSignalLeavesGroup(t *testing.T) {
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "sig", 4, nil)
	prod := b.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := 0; i < 40; i++ {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "sig", Partition: int32(i % 4), Value: []byte{'v', byte('a' + i%26)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	args := []string{"--bootstrap-server", b.Addr(), "--topic", "sig", "--group", "g", "--from-beginning",
		"--consumer-property", "session.timeout.ms=30000", "--consumer-property", "heartbeat.interval.ms=500"}
	a := startConsole(t, dir, "a", args...)
	waitFor(t, 60*time.Second, "consumer a to print all 40 records", func() bool { return len(a.lines()) >= 40 })

	adm := kadm.NewClient(b.Client())
	// members returns the group's members and how many partitions each owns.
	members := func() map[string]int {
		return stableMembers(ctx, adm, "g", func(m kadm.DescribedGroupMember) string { return m.MemberID })
	}
	var before map[string]int
	bproc := startConsole(t, dir, "b", args...)
	waitFor(t, 60*time.Second, "a stable group of two members", func() bool {
		before = members()
		return len(before) == 2
	})

	sent := time.Now()
	if code := a.signal(t, syscall.SIGTERM); code != 143 {
		t.Fatalf("SIGTERM: exit %d, want 143; stderr:\n%s", code, a.errText())
	}
	printedA := len(a.lines())
	if !strings.Contains(a.errText(), fmt.Sprintf("Processed a total of %d messages\n", printedA)) {
		t.Fatalf("a printed %d records; stderr lacks the count:\n%s", printedA, a.errText())
	}
	var after map[string]int
	waitFor(t, 15*time.Second, "b to own all 4 partitions alone (well before the 30 s session timeout)", func() bool {
		after = members()
		if len(after) != 1 {
			return false
		}
		for id, n := range after {
			_, wasMember := before[id]
			return wasMember && n == 4
		}
		return false
	})
	t.Logf("b owned every partition %v after SIGTERM to a", time.Since(sent).Round(time.Millisecond))

	// Every record was committed by the group: the end offsets.
	offs, err := adm.FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	var committed int64
	offs.Each(func(o kadm.OffsetResponse) { committed += o.At })
	if committed != 40 {
		t.Fatalf("group committed offsets sum to %d, want 40", committed)
	}

	if code := bproc.signal(t, syscall.SIGINT); code != 130 {
		t.Fatalf("SIGINT: exit %d, want 130; stderr:\n%s", code, bproc.errText())
	}
	if n := len(bproc.lines()); !strings.Contains(bproc.errText(), fmt.Sprintf("Processed a total of %d messages\n", n)) || printedA+n < 40 {
		t.Fatalf("b printed %d records (a %d); stderr:\n%s", n, printedA, bproc.errText())
	}
}

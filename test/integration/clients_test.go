package integration

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gregor/test/harness"
)

func run(t *testing.T, timeout time.Duration, stdin string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s %v: %v\nstdout:\n%s\nstderr:\n%s", name, args, err, out.String(), errb.String())
		}
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s %v: timed out after %v\nstdout:\n%s\nstderr:\n%s", name, args, timeout, out.String(), errb.String())
	}
	return out.String()
}

// TestKcatRoundTrip produces keyed lines with kcat (librdkafka) and consumes
// them back with kcat from the beginning, comparing content and order.
func TestKcatRoundTrip(t *testing.T) {
	_, err := exec.LookPath("kcat")
	harness.NeedTool(t, err == nil, "kcat")
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "kcat", 1, nil)
	var in strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&in, "k%d:value number %d\n", i%7, i)
	}
	run(t, time.Minute, in.String(), "kcat", "-P", "-b", b.Addr(), "-t", "kcat", "-K:")
	out := run(t, time.Minute, "", "kcat", "-C", "-b", b.Addr(), "-t", "kcat", "-o", "beginning", "-e", "-f", "%k:%s\n")
	if out != in.String() {
		t.Fatalf("kcat read back a different log:\n%s\nwant:\n%s", head(out), head(in.String()))
	}
	// An offset past the log end: the broker answers OFFSET_OUT_OF_RANGE with
	// empty (not null) records, librdkafka resets (auto.offset.reset=latest),
	// reaches the end and exits; a null records field made it loop forever.
	out = run(t, time.Minute, "", "kcat", "-C", "-b", b.Addr(), "-t", "kcat", "-p", "0", "-o", "100000", "-e", "-f", "%s\n")
	if out != "" {
		t.Fatalf("kcat from a too-large offset printed %q, want nothing", head(out))
	}
}

// TestKafkaPythonRoundTrip runs kafka-python's KafkaProducer and
// KafkaConsumer (auto_offset_reset='earliest') against the broker.
func TestKafkaPythonRoundTrip(t *testing.T) {
	py := "/usr/bin/python3"
	ok := exec.Command(py, "-c", "import kafka").Run() == nil
	harness.NeedTool(t, ok, "kafka-python (python3-kafka)")
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "pyk", 2, nil)
	script := `
import sys
from kafka import KafkaProducer, KafkaConsumer
addr, topic, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = KafkaProducer(bootstrap_servers=addr, acks='all', retries=3)
futs = [p.send(topic, key=('k%d' % (i % 5)).encode(), value=('v%d' % i).encode()) for i in range(n)]
p.flush()
for f in futs:
    f.get(timeout=30)
p.close()
c = KafkaConsumer(topic, bootstrap_servers=addr, auto_offset_reset='earliest', consumer_timeout_ms=10000)
got = sorted(int(m.value[1:]) for m in c)
c.close()
assert got == list(range(n)), "got %d records: %s" % (len(got), got[:20])
print("ok", len(got))
`
	f := filepath.Join(t.TempDir(), "roundtrip.py")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(t, 2*time.Minute, "", py, f, b.Addr(), "pyk", "300")
	if strings.TrimSpace(out) != "ok 300" {
		t.Fatalf("kafka-python said %q", out)
	}
}

func head(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

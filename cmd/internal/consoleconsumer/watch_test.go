package consoleconsumer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// An unreachable bootstrap: Kafka's connection warning once, then a
// non-zero exit when nothing connected within --timeout-ms.
func TestUnreachableBootstrap(t *testing.T) {
	addr := closedPort(t)
	for _, o := range []Options{
		{BootstrapServer: addr, Topic: "t", TimeoutMs: 800},
		{BootstrapServer: addr, Include: "t.*", TimeoutMs: 800},
	} {
		start := time.Now()
		code, out, errs := runTool(t, o)
		warn := "WARN [Consumer clientId=console-consumer] Connection to node -1 (" + addr + ") could not be established. Broker may not be available.\n"
		if code != 1 || out != "" || strings.Count(errs, warn) != 1 || !strings.Contains(errs, "ERROR Could not connect to any broker of "+addr+" within --timeout-ms 800\n") {
			t.Fatalf("%+v: exit %d %q %q", o, code, out, errs)
		}
		if el := time.Since(start); el > 15*time.Second {
			t.Fatalf("took %v", el)
		}
	}
}

// An unknown topic: Kafka's metadata warning (not silence), then the idle
// timeout as usual.
func TestUnknownTopicWarns(t *testing.T) {
	addr := setupCluster(t, 1)
	code, out, errs := runTool(t, Options{BootstrapServer: addr, Topic: "nosuch", Group: "g1", TimeoutMs: 500})
	want := "WARN [Consumer clientId=console-consumer, groupId=g1] Error while fetching metadata: {nosuch=UNKNOWN_TOPIC_OR_PARTITION}\n"
	if code != 0 || out != "" || !strings.HasPrefix(errs, want) || !strings.HasSuffix(errs, "Processed a total of 0 messages\n") {
		t.Fatalf("exit %d %q %q", code, out, errs)
	}
}

// --partition beyond the topic's partitions: an error line, exit 1.
func TestPartitionDoesNotExist(t *testing.T) {
	addr := setupCluster(t, 3, rec(0, "", "x"))
	code, out, errs := runTool(t, Options{BootstrapServer: addr, Topic: "t", Partition: 9, TimeoutMs: 5000})
	if code != 1 || out != "" || errs != "ERROR Partition t-9 does not exist: topic t has 3 partitions\n" {
		t.Fatalf("exit %d %q %q", code, out, errs)
	}
}

// --property values keep their spaces (key.separator=" :: ").
func TestPropertyValueKeepsSpaces(t *testing.T) {
	addr := setupCluster(t, 1, rec(0, "k", "v"))
	_, out, errs := runTool(t, Options{BootstrapServer: addr, Topic: "t", FromBeginning: true, MaxMessages: 1,
		Properties: []string{"print.key=true", "key.separator= :: "}})
	if out != "k :: v\n" {
		t.Fatalf("%q %q", out, errs)
	}
}

func TestConsumerDefaults(t *testing.T) {
	p := consumerProps(Options{}, nil, nil)
	if p["client.id"] != "console-consumer" || p["partition.assignment.strategy"] != "range,cooperative-sticky" || p["auto.offset.reset"] != "latest" {
		t.Fatalf("%v", p)
	}
	p = consumerProps(Options{Group: "g", FromBeginning: true}, map[string]string{"client.id": "file"}, map[string]string{"client.id": "flag"})
	if p["client.id"] != "flag" || p["group.id"] != "g" || p["auto.offset.reset"] != "earliest" {
		t.Fatalf("%v", p)
	}
	if kafkaNodeID(-2147483648) != -1 || kafkaNodeID(-2147483647) != -2 || kafkaNodeID(3) != 3 {
		t.Fatal("node ids")
	}
}

// A dial the client cancels as it closes (after --max-messages, kgo may be
// connecting to another broker) is not an unreachable broker: no warning.
// Seen as "Connection to node 2 … could not be established" at the end of
// a run against three live brokers.
func TestCanceledDialDoesNotWarn(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var d net.Dialer
	_, dialErr := d.DialContext(ctx, "tcp", closedPort(t))
	if dialErr == nil {
		t.Fatal("dial with a canceled context succeeded")
	}
	var errs strings.Builder
	w := newConnWatch(&errs, "console-consumer", "")
	w.OnBrokerConnect(kgo.BrokerMetadata{NodeID: 2, Host: "127.0.0.1", Port: 9092}, 0, nil, fmt.Errorf("unable to dial: %w", dialErr))
	if errs.Len() != 0 {
		t.Fatalf("warned for a canceled dial: %q", errs.String())
	}
	// A refused connection still warns, once.
	w.OnBrokerConnect(kgo.BrokerMetadata{NodeID: 2, Host: "127.0.0.1", Port: 9092}, 0, nil, errors.New("unable to dial: connection refused"))
	if want := "WARN [Consumer clientId=console-consumer] Connection to node 2 (127.0.0.1:9092) could not be established. Broker may not be available.\n"; errs.String() != want {
		t.Fatalf("got %q, want %q", errs.String(), want)
	}
}

package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/test/harness"
)

// BROKER_LOGGER resources (KIP-412) against a real broker process: run-time
// log levels through bin/kafka-configs.sh --entity-type broker-loggers and
// raw DescribeConfigs / IncrementalAlterConfigs / AlterConfigs.

// TestBrokerLoggersDebugAtRunTime: the "server" logger set to DEBUG with
// kafka-configs writes its debug line ("client closed the connection") to
// the broker log; --delete-config puts it back to the root level (INFO)
// and the line stops.
func TestBrokerLoggersDebugAtRunTime(t *testing.T) {
	adminPort := harness.FreePort(t)
	b := harness.StartBroker(t, map[string]string{"admin.listener": fmt.Sprintf("127.0.0.1:%d", adminPort)})
	adminURL := fmt.Sprintf("http://127.0.0.1:%d", adminPort)
	const debugLine = "client closed the connection"
	// closeOne opens a connection, closes it and waits until the broker
	// has let go of every connection (its reader logged the close before).
	closeOne := func() {
		t.Helper()
		c, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		deadline := time.Now().Add(20 * time.Second)
		for {
			n, ok, err := harness.MetricSum(http.DefaultClient, adminURL, "kafka_server_socket_server_metrics_connection_count")
			if err == nil && ok && n == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("connections still open: %v %v %v", n, ok, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	describe := func() string {
		t.Helper()
		return binScript(t, "", "kafka-configs.sh", "--bootstrap-server", b.Addr(), "--entity-type", "broker-loggers", "--entity-name", "0", "--describe")
	}
	out := describe()
	for _, want := range []string{"Dynamic configs for broker-logger 0 are:\n", "\n  root=INFO sensitive=false synonyms={}\n",
		"\n  server=INFO sensitive=false synonyms={}\n", "\n  kafka.authorizer.logger=INFO sensitive=false synonyms={}\n"} {
		if !strings.Contains(out, want) {
			t.Fatalf("describe lacks %q:\n%s", want, out)
		}
	}
	closeOne()
	if strings.Contains(b.Log(), debugLine) {
		t.Fatalf("a debug line at root INFO:\n%s", b.Log())
	}

	out = binScript(t, "", "kafka-configs.sh", "--bootstrap-server", b.Addr(), "--broker-logger", "0", "--alter", "--add-config", "server=DEBUG")
	if strings.TrimSpace(out) != "Completed updating config for broker-logger 0." {
		t.Fatalf("alter said %q", out)
	}
	if out := describe(); !strings.Contains(out, "\n  server=DEBUG sensitive=false synonyms={}\n") || !strings.Contains(out, "\n  root=INFO ") {
		t.Fatalf("after SET:\n%s", out)
	}
	closeOne()
	if !strings.Contains(b.Log(), debugLine) || !strings.Contains(b.Log(), "Updated the log level of server to DEBUG") {
		t.Fatalf("no debug line with server at DEBUG:\n%s", b.Log())
	}

	out = binScript(t, "", "kafka-configs.sh", "--bootstrap-server", b.Addr(), "--entity-type", "broker-loggers", "--entity-name", "0", "--alter", "--delete-config", "server")
	if strings.TrimSpace(out) != "Completed updating config for broker-logger 0." {
		t.Fatalf("delete said %q", out)
	}
	if out := describe(); !strings.Contains(out, "\n  server=INFO sensitive=false synonyms={}\n") {
		t.Fatalf("after DELETE:\n%s", out)
	}
	closeOne()
	before := strings.Count(b.Log(), debugLine)
	closeOne()
	if after := strings.Count(b.Log(), debugLine); after != before {
		t.Fatalf("debug lines after DELETE: %d, then %d", before, after)
	}
}

// TestBrokerLoggersBadInput: Kafka's refusals, nothing applied.
func TestBrokerLoggersBadInput(t *testing.T) {
	b := harness.StartBroker(t, nil)
	alter := func(args ...string) (string, int) {
		t.Helper()
		return binScriptStatus(t, "kafka-configs.sh", append([]string{"--bootstrap-server", b.Addr(), "--entity-type", "broker-loggers", "--entity-name", "0", "--alter"}, args...)...)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--add-config", "server=LOUD"}, "Cannot set the log level of server to LOUD as it is not a supported log level. Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN"},
		{[]string{"--add-config", "nope=DEBUG"}, "Invalid broker logger(s): nope"},
		{[]string{"--delete-config", "root"}, "Removing the log level of the root logger is not allowed"},
		// The good SET before the bad one is not applied either.
		{[]string{"--add-config", "storage=DEBUG,server=OFF"}, "Cannot set the log level of server to OFF"},
	} {
		out, code := alter(c.args...)
		if code == 0 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, %q; want non-zero and %q", c.args, code, out, c.want)
		}
	}
	if out, code := binScriptStatus(t, "kafka-configs.sh", "--bootstrap-server", b.Addr(), "--entity-type", "broker-loggers", "--describe"); code == 0 || !strings.Contains(out, "an entity name must be specified with --describe of broker-loggers") {
		t.Errorf("describe without a name: %d %q", code, out)
	}
	if out, code := binScriptStatus(t, "kafka-configs.sh", "--zookeeper", "127.0.0.1:1", "--entity-type", "broker-loggers", "--entity-name", "0", "--describe"); code == 0 || !strings.Contains(out, "Invalid entity type broker-loggers") {
		t.Errorf("--zookeeper: %d %q", code, out)
	}

	cl := b.Client()
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	describe := func(name string) *kmsg.DescribeConfigsResponseResource {
		t.Helper()
		req := kmsg.NewPtrDescribeConfigsRequest()
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, name
		req.Resources = append(req.Resources, r)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return &resp.Resources[0]
	}
	r := describe("0")
	levels := map[string]string{}
	for _, c := range r.Configs {
		if c.Source != kmsg.ConfigSourceDynamicBrokerLoggerConfig || c.ReadOnly || c.IsSensitive || c.Value == nil {
			t.Fatalf("entry %+v", c)
		}
		levels[c.Name] = *c.Value
	}
	if r.ErrorCode != 0 || levels["storage"] != "INFO" || levels["server"] != "INFO" || levels["root"] != "INFO" {
		t.Fatalf("after refused alters: %d %v", r.ErrorCode, levels)
	}
	if r := describe(""); r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage == nil || *r.ErrorMessage != "Broker id must not be empty" {
		t.Errorf("describe \"\": %d %v", r.ErrorCode, r.ErrorMessage)
	}

	incremental := func(name string, op kmsg.IncrementalAlterConfigOp, logger string, value *string) (int16, string) {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, name
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = logger, op, value
		r.Configs = append(r.Configs, c)
		req.Resources = append(req.Resources, r)
		resp, err := req.RequestWith(ctx, cl.Broker(0)) // straight to broker 0, whatever the name
		if err != nil {
			t.Fatal(err)
		}
		msg := ""
		if m := resp.Resources[0].ErrorMessage; m != nil {
			msg = *m
		}
		return resp.Resources[0].ErrorCode, msg
	}
	debug := "DEBUG"
	if code, msg := incremental("0", kmsg.IncrementalAlterConfigOpAppend, "server", &debug); code != kerr.InvalidRequest.Code || msg != "APPEND operation is not allowed for the BROKER_LOGGER resource" {
		t.Errorf("APPEND: %d %q", code, msg)
	}
	if code, msg := incremental("0", kmsg.IncrementalAlterConfigOpSet, "server", nil); code != kerr.InvalidRequest.Code || msg != "Null value not supported for : server" {
		t.Errorf("SET null: %d %q", code, msg)
	}
	if code, msg := incremental("7", kmsg.IncrementalAlterConfigOpSet, "server", &debug); code != kerr.InvalidRequest.Code || !strings.Contains(msg, "Unexpected node id") {
		t.Errorf("another broker id: %d %q", code, msg)
	}
	// The legacy AlterConfigs does not take BROKER_LOGGER.
	legacy := kmsg.NewPtrAlterConfigsRequest()
	lr := kmsg.NewAlterConfigsRequestResource()
	lr.ResourceType, lr.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, "0"
	lc := kmsg.NewAlterConfigsRequestResourceConfig()
	lc.Name, lc.Value = "server", &debug
	lr.Configs = append(lr.Configs, lc)
	legacy.Resources = append(legacy.Resources, lr)
	lresp, err := legacy.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if c := lresp.Resources[0]; c.ErrorCode != kerr.InvalidRequest.Code || c.ErrorMessage == nil || *c.ErrorMessage != "Unknown resource type 8" {
		t.Errorf("AlterConfigs BROKER_LOGGER: %d %v", c.ErrorCode, c.ErrorMessage)
	}
	if r := describe("0"); len(r.Configs) == 0 {
		t.Fatal("no loggers")
	} else {
		for _, c := range r.Configs {
			if c.Name == "server" && *c.Value != "INFO" {
				t.Fatalf("server changed to %s by a refused request", *c.Value)
			}
		}
	}
}

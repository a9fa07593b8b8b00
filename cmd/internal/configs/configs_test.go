package configs

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clientutil/clienttest"
)

func run(t *testing.T, o Options) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), o, nil, &out, &errb)
	return code, out.String(), errb.String()
}

func TestDescribeAlterTopic(t *testing.T) {
	_, bs := clienttest.Cluster(t, kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))

	code, out, errs := run(t, Options{BootstrapServer: bs, EntityType: Topics, EntityName: "t", Describe: true})
	if code != 0 || out != "Dynamic configs for topic t are:\n" || errs != "" {
		t.Fatalf("describe empty: %d %q %q", code, out, errs)
	}
	code, out, errs = run(t, Options{BootstrapServer: bs, Topic: "t", Alter: true, AddConfig: "retention.ms=1000, cleanup.policy=[compact,delete]"})
	if code != 0 || out != "Completed updating config for topic t.\n" {
		t.Fatalf("alter: %d %q %q", code, out, errs)
	}
	code, out, _ = run(t, Options{BootstrapServer: bs, Topic: "t", Describe: true})
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 3 || lines[0] != "Dynamic configs for topic t are:" {
		t.Fatalf("describe: %d %q", code, out)
	}
	want := []*regexp.Regexp{
		// kfake lists only the DEFAULT_CONFIG synonym (Kafka lists the
		// DYNAMIC_TOPIC_CONFIG one first, then the broker's).
		regexp.MustCompile(`^  cleanup\.policy=compact,delete sensitive=false synonyms=\{([A-Z_]+:[a-z.]+=[^,]*(,[a-z]+)*(, )?)+\}$`),
		regexp.MustCompile(`^  retention\.ms=1000 sensitive=false synonyms=\{[A-Z_]+:[a-z.]+=\d+(, [A-Z_]+:[a-z.]+=\d+)*\}$`),
	}
	for i, re := range want {
		if !re.MatchString(lines[i+1]) {
			t.Errorf("line %q", lines[i+1])
		}
	}
	// --all lists more, still sorted, with the header saying All.
	_, out, _ = run(t, Options{BootstrapServer: bs, Topic: "t", Describe: true, All: true})
	if !strings.HasPrefix(out, "All configs for topic t are:\n") || strings.Count(out, "\n") <= 3 {
		t.Fatalf("--all: %q", out)
	}
	// Describe with no name covers every topic.
	if _, out, _ = run(t, Options{BootstrapServer: bs, EntityType: Topics, Describe: true}); !strings.Contains(out, "Dynamic configs for topic t are:\n  cleanup.policy=") {
		t.Fatalf("all topics: %q", out)
	}

	// --delete-config of an override removes it; of a non-override is refused.
	if code, out, errs = run(t, Options{BootstrapServer: bs, Topic: "t", Alter: true, DeleteConfig: "retention.ms"}); code != 0 {
		t.Fatalf("delete: %d %q", code, errs)
	}
	_, out, _ = run(t, Options{BootstrapServer: bs, Topic: "t", Describe: true})
	if strings.Contains(out, "retention.ms") || !strings.Contains(out, "cleanup.policy") {
		t.Fatalf("after delete: %q", out)
	}
	code, _, errs = run(t, Options{BootstrapServer: bs, Topic: "t", Alter: true, DeleteConfig: "segment.ms", Args: []string{"--topic", "t"}})
	if code != 1 || errs != "Error while executing config command with args '--topic t'\nInvalid config(s): segment.ms\n" {
		t.Fatalf("delete non-override: %d %q", code, errs)
	}
}

// The broker's ErrorMessage is what is printed for a refused alteration.
func TestAlterErrorMessage(t *testing.T) {
	c, bs := clienttest.Cluster(t, kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	msg := "Invalid value abc for configuration retention.ms: Not a number of type LONG"
	c.ControlKey(int16(kmsg.IncrementalAlterConfigs), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		req := kr.(*kmsg.IncrementalAlterConfigsRequest)
		resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		for _, r := range req.Resources {
			rr := kmsg.NewIncrementalAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
			rr.ErrorCode, rr.ErrorMessage = kerr.InvalidConfig.Code, &msg
			resp.Resources = append(resp.Resources, rr)
		}
		return resp, nil, true
	})
	code, out, errs := run(t, Options{BootstrapServer: bs, Topic: "t", Alter: true, AddConfig: "retention.ms=abc",
		Args: []string{"--alter", "--topic", "t", "--add-config", "retention.ms=abc"}})
	if code != 1 || out != "" || errs != "Error while executing config command with args '--alter --topic t --add-config retention.ms=abc'\n"+msg+"\n" {
		t.Fatalf("%d %q %q", code, out, errs)
	}
}

func TestParseAddConfig(t *testing.T) {
	keys, vals, err := ParseAddConfig("a=1, b = [x,y] ,c=,a=2")
	if err != nil || strings.Join(keys, "|") != "a|b|c" || vals["a"] != "2" || vals["b"] != "x,y" || vals["c"] != "" {
		t.Fatalf("%v %v %v", keys, vals, err)
	}
	for _, bad := range []string{"novalue", "a=b=c", "=1"} {
		if _, _, err := ParseAddConfig(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if d := ParseDeleteConfig(" a, b,,"); strings.Join(d, "|") != "a|b" {
		t.Fatalf("%q", d)
	}
}

func TestArgumentErrors(t *testing.T) {
	for _, c := range []struct {
		o   Options
		msg string
	}{
		{Options{BootstrapServer: "h:1", Topic: "t"}, "exactly one action"},
		{Options{BootstrapServer: "h:1", Describe: true}, "--entity-type"},
		{Options{Topic: "t", Describe: true}, "--bootstrap-server"},
		{Options{BootstrapServer: "h:1", EntityType: "ips", Describe: true}, "not supported yet"},
		{Options{BootstrapServer: "h:1", EntityType: Clients, EntityName: "c", Alter: true, AddConfig: "producer_byte_rate=x"}, "Cannot parse quota configuration value for producer_byte_rate: x"},
		{Options{BootstrapServer: "h:1", EntityType: Clients, EntityName: "c", Alter: true, AddConfig: "bogus=1"}, "Only quota configs can be added for 'clients'"},
		{Options{BootstrapServer: "h:1", EntityType: Clients, Alter: true, AddConfig: "producer_byte_rate=1"}, "--entity-name or --entity-default must be specified"},
		{Options{BootstrapServer: "h:1", EntityType: Users, EntityName: "u", Alter: true, AddConfig: "acl=1"}, "Unexpected config names: acl"},
		{Options{BootstrapServer: "h:1", EntityType: "gadgets", Describe: true}, "Invalid entity type"},
		{Options{BootstrapServer: "h:1", Broker: "x", Describe: true}, "valid integer broker id"},
		{Options{BootstrapServer: "h:1", EntityType: Topics, Alter: true, AddConfig: "a=1"}, "entity name"},
		{Options{BootstrapServer: "h:1", Topic: "t", Alter: true}, "--add-config or --delete-config"},
		{Options{BootstrapServer: "h:1", Topic: "t", Describe: true, AddConfig: "a=1"}, "only be used with --alter"},
		{Options{BootstrapServer: "h:1", Topic: "t", Broker: "1", Describe: true}, "Only one of"},
		{Options{BootstrapServer: "h:1", EntityType: BrokerLoggers, Describe: true}, "an entity name must be specified with --describe of broker-loggers"},
		{Options{BootstrapServer: "h:1", BrokerLogger: "x", Describe: true}, "The entity name for broker-loggers must be a valid integer broker id, but it is: x"},
		{Options{BootstrapServer: "h:1", EntityType: BrokerLoggers, Alter: true, AddConfig: "server=DEBUG"}, "entity name"},
		{Options{ZooKeeper: "h:1", EntityType: BrokerLoggers, EntityName: "0", Describe: true}, "Invalid entity type broker-loggers"},
	} {
		code, out, errs := run(t, c.o)
		if code != 1 || out != "" || !strings.Contains(errs, c.msg) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%+v: %d %q %q", c.o, code, out, errs)
		}
	}
}

package topics

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clientutil/clienttest"
)

// Internal topics: --delete and --alter --partitions of __consumer_offsets
// are refused by the tool itself (Kafka's TopicCommand), through
// --bootstrap-server as through --zookeeper, and the topic stays.
func TestInternalTopicRefused(t *testing.T) {
	_, bs := clienttest.Cluster(t, kfake.NumBrokers(1), kfake.SeedTopics(3, "__consumer_offsets", "plain"))

	code, out, errs := run(t, Options{BootstrapServer: bs, Delete: true, Topic: "__consumer_offsets"})
	if code != 1 || out != "" || errs != "Error while executing topic command : Topic __consumer_offsets is a kafka internal topic and is not allowed to be marked for deletion.\n" {
		t.Fatalf("delete internal: %d %q %q", code, out, errs)
	}
	// A pattern that also matches the internal topic deletes nothing.
	if code, _, errs = run(t, Options{BootstrapServer: bs, Delete: true, Topic: ".*"}); code != 1 || !strings.Contains(errs, "kafka internal topic") {
		t.Fatalf("delete .*: %d %q", code, errs)
	}
	code, out, errs = run(t, Options{BootstrapServer: bs, Alter: true, Topic: "__consumer_offsets", Partitions: 5})
	if code != 1 || out != "" || errs != "Error while executing topic command : The number of partitions for the offsets topic cannot be changed.\n" {
		t.Fatalf("alter internal: %d %q %q", code, out, errs)
	}
	_, out, _ = run(t, Options{BootstrapServer: bs, Describe: true, Topic: "__consumer_offsets"})
	if !strings.Contains(out, "PartitionCount: 3") {
		t.Fatalf("internal topic changed:\n%s", out)
	}
	if _, out, _ = run(t, Options{BootstrapServer: bs, List: true}); out != "__consumer_offsets\nplain\n" {
		t.Fatalf("list after refused deletes: %q", out)
	}
}

// The broker's ErrorMessage is what the tool prints (Kafka's TopicCommand
// prints the ApiException's message), for CreateTopics and CreatePartitions.
func TestBrokerErrorMessagePrinted(t *testing.T) {
	c, bs := clienttest.Cluster(t, kfake.NumBrokers(1), kfake.SeedTopics(1, "my.topic"))

	msg := "Topic 'my_topic' collides with existing topic: my.topic"
	c.ControlKey(int16(kmsg.CreateTopics), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		req := kr.(*kmsg.CreateTopicsRequest)
		resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic, st.ErrorCode, st.ErrorMessage = rt.Topic, kerr.InvalidTopicException.Code, &msg
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	code, out, errs := run(t, Options{BootstrapServer: bs, Create: true, Topic: "my_topic", Partitions: 1, ReplicationFactor: 1})
	if code != 1 || errs != "Error while executing topic command : "+msg+"\n" {
		t.Fatalf("create: %d %q %q", code, out, errs)
	}

	pmsg := "Topic currently has 1 partitions, which is higher than the requested 0."
	c.ControlKey(int16(kmsg.CreatePartitions), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		req := kr.(*kmsg.CreatePartitionsRequest)
		resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewCreatePartitionsResponseTopic()
			st.Topic, st.ErrorCode, st.ErrorMessage = rt.Topic, kerr.InvalidPartitions.Code, &pmsg
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	code, _, errs = run(t, Options{BootstrapServer: bs, Alter: true, Topic: "my.topic", Partitions: 1})
	if code != 1 || errs != "Error while executing topic command : "+pmsg+"\n" {
		t.Fatalf("alter: %d %q", code, errs)
	}
}

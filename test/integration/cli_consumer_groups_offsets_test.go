package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// kafka-consumer-groups.sh --delete-offsets, --reset-offsets --export and
// --from-file against the real broker: a member subscribed to the topic
// makes OffsetDelete answer GROUP_SUBSCRIBED_TO_TOPIC per partition; once
// it left, the offsets go and Kafka's success table prints; an unknown
// topic is a "Not Provided" row, an unknown group Kafka's "does not
// exist."; --export prints the plan as CSV without committing (a dry run
// without --execute), and --from-file reads it back and commits it.
func TestCLIConsumerGroupsDeleteOffsetsAndExport(t *testing.T) {
	const topic, group = "dof", "dof-group"
	b := harness.StartBroker(t, nil)
	bs := b.Addr()
	quickRaceExit(t)
	createTopic(t, b, topic, 2, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prod := b.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var rs []*kgo.Record
	for p := int32(0); p < 2; p++ {
		for i := 0; i < 5; i++ {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("v")})
		}
	}
	if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cons := b.Client(kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(), kgo.FetchMaxWait(500*time.Millisecond))
	pollRecords(ctx, t, cons, 10, "group member")
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	cg := func(args ...string) (int, string, string) {
		t.Helper()
		return cliRun(t, nil, "kafka-consumer-groups.sh", append([]string{"--bootstrap-server", bs}, args...)...)
	}
	row := func(topic, part, status string) string {
		return fmt.Sprintf("%-30s %-15s %-15s\n", topic, part, status)
	}
	header := "\n" + row("TOPIC", "PARTITION", "STATUS")

	subscribed := "Error: org.apache.kafka.common.errors.GroupSubscribedToTopicException: Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."
	code, out, errs := cg("--delete-offsets", "--group", group, "--topic", topic)
	want := "\nError: Encounter some partition level error, see the follow-up details:\n" + header + row(topic, "0", subscribed) + row(topic, "1", subscribed)
	if code != 0 || out != want {
		t.Fatalf("delete-offsets of a subscribed topic: %d\n%q\nwant\n%q\nstderr %q", code, out, want, errs)
	}
	cons.Close() // leaves the group: Empty, its offsets kept
	adm := kadm.NewClient(b.Client())
	committed := func() kadm.OffsetResponses {
		t.Helper()
		os, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		return os
	}
	if c, ok := committed().Lookup(topic, 1); !ok || c.At != 5 {
		t.Fatalf("offset of partition 1 before deleting: %+v %v", c, ok)
	}

	// --export: the dry-run plan as CSV, nothing committed.
	code, out, errs = cg("--reset-offsets", "--group", group, "--topic", topic, "--to-offset", "2", "--export")
	if code != 0 || out != topic+",0,2\n"+topic+",1,2\n\n" {
		t.Fatalf("--export: %d %q %q", code, out, errs)
	}
	if c, _ := committed().Lookup(topic, 0); c.At != 5 {
		t.Fatalf("--export without --execute committed: partition 0 at %d", c.At)
	}
	// --from-file reads it back (9 clamps to the log end 5), --execute commits.
	plan := filepath.Join(t.TempDir(), "plan.csv")
	if err := os.WriteFile(plan, []byte(topic+",0,3\n"+topic+",1,9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = cg("--reset-offsets", "--group", group, "--from-file", plan, "--execute", "--export")
	if code != 0 || out != topic+",0,3\n"+topic+",1,5\n\n" {
		t.Fatalf("--from-file --execute: %d %q %q", code, out, errs)
	}
	if os := committed(); os[topic][0].At != 3 || os[topic][1].At != 5 {
		t.Fatalf("offsets after --from-file: %+v", os)
	}

	// Partition 0 only, and a topic that does not exist.
	code, out, errs = cg("--delete-offsets", "--group", group, "--topic", topic+":0", "--topic", "nosuch")
	want = "Request succeed for deleting offsets with topic " + topic + ":0, nosuch group " + group + "\n" + header +
		row(topic, "0", "Successful") + row("nosuch", "Not Provided", "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.")
	if code != 0 || out != want {
		t.Fatalf("delete-offsets p0: %d\n%q\nwant\n%q\nstderr %q", code, out, want, errs)
	}
	if os := committed(); len(os[topic]) != 1 || os[topic][1].At != 5 {
		t.Fatalf("offsets after deleting partition 0: %+v", os[topic])
	}
	code, out, _ = cg("--delete-offsets", "--group", "no-such-group", "--topic", topic)
	notFound := "Error: org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist."
	if want := "\nError: 'no-such-group' does not exist.\n" + header + row(topic, "0", notFound) + row(topic, "1", notFound); code != 0 || out != want {
		t.Fatalf("unknown group: %d\n%q\nwant\n%q", code, out, want)
	}

	// Bad input: usage errors, exit 1, nothing done.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--delete-offsets", "--group", group}, "Error: Option [delete-offsets] takes the following options: [all-groups], [group]\n"},
		{[]string{"--delete-offsets", "--group", group, "--group", "other", "--topic", topic}, "Error: Found multiple arguments for option group, but you asked for only one\n"},
		{[]string{"--delete-offsets", "--delete", "--group", group, "--topic", topic}, "Error: Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets\n"},
		{[]string{"--list", "--export"}, "Error: Option [export] is only supported with [reset-offsets]\n"},
	} {
		code, out, errs := cg(c.args...)
		if code != 1 || out != "" || errs != c.want {
			t.Errorf("%v: %d %q %q; want %q", c.args, code, out, errs, c.want)
		}
	}
}

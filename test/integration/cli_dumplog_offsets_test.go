package integration

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// kafka-dump-log.sh --offsets-decoder on the __consumer_offsets segment a
// broker wrote: a group consumer's commit and the group's metadata (with
// the member's subscription and assignment decoded) print as Kafka 3.8+'s
// OffsetsMessageParser prints them, the member leaving as an empty group.
func TestCLIDumpLogOffsetsDecoder(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{"offsets.topic.num.partitions": "1"})
	createTopic(t, b, "dumped", 1, nil)
	produceValues(t, b, "dumped", "v", 0, 3)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumerGroup("dump-group"), kgo.ConsumeTopics("dumped"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.ClientID("dump-client"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pollRecords(ctx, t, cl, 3, "group consumer")
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	cl.Close() // leaves the group
	b.Stop()

	seg := filepath.Join(b.DataDir, "__consumer_offsets-0", "00000000000000000000.log")
	code, out, errs := cliRun(t, nil, "kafka-dump-log.sh", "--offsets-decoder", "--files", seg)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, bad := range []string{"Error at offset", "Unknown record type", "Failed to decode"} {
		if strings.Contains(out, bad) {
			t.Errorf("output has %q:\n%s", bad, out)
		}
	}
	for _, want := range []string{
		// The commit of offset 3 (OffsetCommitKey v1, value v3).
		`key: \{"type":"1","data":\{"group":"dump-group","topic":"dumped","partition":0\}\} ` +
			`payload: \{"version":"3","data":\{"offset":3,"leaderEpoch":0,"metadata":"[^"]*","commitTimestamp":\d+\}\}$`,
		// The group after the sync, its member's consumer protocol decoded.
		`key: \{"type":"2","data":\{"group":"dump-group"\}\} payload: \{"version":"3","data":\{"protocolType":"consumer",` +
			`"generation":1,"protocol":"[a-z-]+","leader":"dump-client-[^"]+","currentStateTimestamp":\d+,` +
			`"members":\[\{"memberId":"dump-client-[^"]+","groupInstanceId":null,"clientId":"dump-client","clientHost":"[^"]+",` +
			`"rebalanceTimeout":\d+,"sessionTimeout":\d+,"subscription":\{"topics":\["dumped"\],"userData":(null|"[A-Za-z0-9+/=]*")[^{}]*\},` +
			`"assignment":\{"assignedPartitions":\[\{"topic":"dumped","partitions":\[0\]\}\],"userData":(null|"[A-Za-z0-9+/=]*")\}\}\]\}\}$`,
		// The group once the member left.
		`key: \{"type":"2","data":\{"group":"dump-group"\}\} payload: \{"version":"3","data":\{"protocolType":"consumer",` +
			`"generation":2,"protocol":null,"leader":null,"currentStateTimestamp":\d+,"members":\[\]\}\}$`,
	} {
		if !regexp.MustCompile(`(?m)^\| offset: \d+ .* ` + want).MatchString(out) {
			t.Errorf("no line matches %s\noutput:\n%s", want, out)
		}
	}
}

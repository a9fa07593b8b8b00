package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"gregor/test/harness"
)

// kafka-server-start.sh server.properties --override k=v: overrides win
// over the file (num.partitions=1 in the file, overridden twice: the last
// one, 4, is what a topic created with the default partition count gets,
// and DescribeConfigs reports it); a bad override value and stray
// arguments are refused with exit 1 and Kafka's words.
func TestCLIServerOverride(t *testing.T) {
	b := harness.StartBrokerArgs(t, map[string]string{"num.partitions": "1"}, "--override", "num.partitions=2", "--override", "num.partitions=4")
	adm := kadm.NewClient(b.Client())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, -1, -1, nil, "ov")
	if err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	td, err := adm.ListTopics(ctx, "ov")
	if err != nil || len(td["ov"].Partitions) != 4 {
		t.Fatalf("topic ov: %v partitions, %v; want 4 (the last --override)", len(td["ov"].Partitions), err)
	}

	dir := t.TempDir()
	cfg := filepath.Join(dir, "server.properties")
	body := "broker.id=0\nlisteners=PLAINTEXT://127.0.0.1:0\nlog.dirs=" + filepath.Join(dir, "data") + "\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{cfg, "--override", "num.partitions=lots"}, "--override: Invalid value lots for configuration num.partitions"},
		{[]string{cfg, "stray", "more"}, "Found non argument parameters: stray,more"},
	} {
		code, out, errs := cliRun(t, nil, "kafka-server-start.sh", c.args...)
		if code != 1 || !strings.Contains(out+errs, c.want) {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q\nwant %q", c.args, code, out, errs, c.want)
		}
	}
}

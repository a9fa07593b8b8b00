package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
	"gregor/test/zkharness"
)

// TestBurrowReportsLag: Debian's Burrow 1.2 (Sarama pinned to Kafka
// 0.10.0: Metadata v0, ListOffsets v0, Fetch of __consumer_offsets at
// message format v1) watches a single node; after a group commits offset
// 4 of 10 records on each of two partitions, Burrow's HTTP API reports the
// group with a total lag of 12 (6 + 6) — Burrow once got its connection
// closed at its first ListOffsets v0.
func TestBurrowReportsLag(t *testing.T) {
	_, err := exec.LookPath("Burrow")
	harness.NeedTool(t, err == nil, "Burrow (Debian's burrow package)")
	zk := zkharness.Start(t, zkharness.Options{})
	b := harness.StartBroker(t, map[string]string{"offsets.topic.num.partitions": "1"})
	createTopic(t, b, "burrowed", 2, nil)
	cl := b.Client(kgo.DefaultProduceTopic("burrowed"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for p := int32(0); p < 2; p++ {
		for i := 0; i < 10; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	adm := kadm.NewClient(cl)
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "burrowed", Partition: 0, At: 4, LeaderEpoch: -1})
	offs.Add(kadm.Offset{Topic: "burrowed", Partition: 1, At: 4, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(ctx, "burrow-g", offs); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	httpPort := harness.FreePort(t)
	conf := fmt.Sprintf(`[general]
pidfile=%q
[logging]
filename=%q
level="info"
[zookeeper]
servers=[%q]
timeout=6
root-path="/burrow"
[client-profile.test]
client-id="burrow-test"
kafka-version="0.10.0"
[cluster.local]
class-name="kafka"
servers=[%q]
client-profile="test"
topic-refresh=1
offset-refresh=1
[consumer.local]
class-name="kafka"
cluster="local"
servers=[%q]
client-profile="test"
start-latest=false
[httpserver.default]
address="127.0.0.1:%d"
[storage.default]
class-name="inmemory"
workers=2
intervals=10
expire-group=604800
min-distance=1
`, filepath.Join(dir, "burrow.pid"), filepath.Join(dir, "burrow.log"), zk.Addr(), b.Addr(), b.Addr(), httpPort)
	if err := os.WriteFile(filepath.Join(dir, "burrow.toml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("Burrow", "--config-dir", dir)
	cmd.Dir = dir
	out, _ := os.Create(filepath.Join(dir, "stdout"))
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	logs := func() string {
		a, _ := os.ReadFile(filepath.Join(dir, "burrow.log"))
		o, _ := os.ReadFile(filepath.Join(dir, "stdout"))
		return string(o) + string(a)
	}

	url := fmt.Sprintf("http://127.0.0.1:%d/v3/kafka/local/consumer/burrow-g/lag", httpPort)
	var last string
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		var got struct {
			Error  bool   `json:"error"`
			Msg    string `json:"message"`
			Status struct {
				Status     string `json:"status"`
				TotalLag   int64  `json:"totallag"`
				Partitions []struct {
					Topic      string `json:"topic"`
					Partition  int32  `json:"partition"`
					CurrentLag int64  `json:"current_lag"`
				} `json:"partitions"`
			} `json:"status"`
		}
		resp, err := http.Get(url)
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
		}
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("%+v", got)
			if !got.Error && got.Status.TotalLag == 12 && len(got.Status.Partitions) == 2 {
				return
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("Burrow did not report a total lag of 12 within 60 s; last answer %s\nBurrow log:\n%s\nbroker log tail:\n%s", last, logs(), tail(b.Log(), 3000))
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

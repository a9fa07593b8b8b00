package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/test/zkharness"
)

// TestReassignWithLogDirs: three brokers with two log.dirs each; a plan
// moves a partition's replica off one broker onto the third, into a
// chosen dir there, and moves the replica that stays to its other dir.
// kafka-reassign-partitions.sh --execute starts both (the new broker's
// move is retried until the reassignment has created the replica there),
// --verify reports both replicas completed, and every broker's
// DescribeLogDirs shows the partition where the plan put it, every
// record readable.
func TestReassignWithLogDirs(t *testing.T) {
	base := t.TempDir()
	dirs := func(id int32) (string, string) {
		return filepath.Join(base, fmt.Sprintf("b%d-a", id)), filepath.Join(base, fmt.Sprintf("b%d-b", id))
	}
	c := startClusterEach(t, zkharness.Options{}, 3, nil, nil, func(id int32) map[string]string {
		a, b := dirs(id)
		return map[string]string{"log.dirs": a + "," + b}
	})
	const topic = "ldirs"
	c.createTopic(topic, 1, 2, nil)
	produce(t, c.client(kgo.RequiredAcks(kgo.AllISRAcks())), topic, "before", 500)
	rs := c.assignment(topic)[0]
	var third int32
	for id := int32(1); id <= 3; id++ {
		if !slices.Contains(rs, id) {
			third = id
		}
	}
	stay := rs[0]
	stayDir := otherLogDir(t, c, stay, topic, dirs)
	_, thirdDir := dirs(third)
	plan := writeFile(t, "plan.json", fmt.Sprintf(`{"version":1,"partitions":[{"topic":%q,"partition":0,"replicas":[%d,%d],"log_dirs":[%q,%q]}]}`,
		topic, stay, third, stayDir, thirdDir))
	bs := strings.Join(c.seeds(), ",")
	code, out, errs := script(t, "kafka-reassign-partitions.sh", "--bootstrap-server", bs, "--reassignment-json-file", plan, "--execute", "--timeout", "30000")
	if code != 0 || !strings.Contains(out, "Successfully started partition reassignment for ldirs-0\n") ||
		!strings.Contains(out, fmt.Sprintf("Successfully started moving log directory to %s for replica ldirs-0 with broker %d \n", stayDir, stay)) ||
		!strings.Contains(out, fmt.Sprintf("Successfully started moving log directory to %s for replica ldirs-0 with broker %d \n", thirdDir, third)) {
		t.Fatalf("--execute: %d\n%s\n%s", code, out, errs)
	}
	want := "Reassignment of partition ldirs-0 is completed.\n"
	for _, id := range sortedIDs([]int32{stay, third}) {
		want += fmt.Sprintf("Reassignment of replica ldirs-0-%d completed successfully.\n", id)
	}
	c.waitFor("--verify reports both moves completed", 60*time.Second, func() (bool, string) {
		code, out, errs := script(t, "kafka-reassign-partitions.sh", "--bootstrap-server", bs, "--reassignment-json-file", plan, "--verify")
		return code == 0 && strings.Contains(out, "Status of partition reassignment:\n"+want), out + errs
	})
	for id, dir := range map[int32]string{stay: stayDir, third: thirdDir} {
		if got := logDirOf(t, c, id, topic); got != dir {
			t.Errorf("broker %d holds %s-0 in %q, want %q", id, topic, got, dir)
		}
	}
	cl := c.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var n int
	for n < 500 && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Value) != "before-"+strconv.Itoa(int(r.Offset)) {
				t.Errorf("offset %d: %q", r.Offset, r.Value)
			}
			n++
		})
	}
	if n != 500 {
		t.Fatalf("read %d of 500 records", n)
	}
}

// logDirOf asks broker id where its current replica of topic-0 is ("" none).
func logDirOf(t *testing.T, c *cluster, id int32, topic string) string {
	t.Helper()
	cl := c.client()
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kresp, err := cl.Broker(int(id)).Request(ctx, kmsg.NewPtrDescribeLogDirsRequest())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range kresp.(*kmsg.DescribeLogDirsResponse).Dirs {
		for _, rt := range d.Topics {
			for _, p := range rt.Partitions {
				if rt.Topic == topic && p.Partition == 0 && !p.IsFuture {
					return d.Dir
				}
			}
		}
	}
	return ""
}

// otherLogDir is the log dir of broker id that does not hold topic-0.
func otherLogDir(t *testing.T, c *cluster, id int32, topic string, dirs func(int32) (string, string)) string {
	t.Helper()
	a, b := dirs(id)
	switch logDirOf(t, c, id, topic) {
	case a:
		return b
	case b:
		return a
	}
	t.Fatalf("broker %d holds %s-0 in neither dir", id, topic)
	return ""
}

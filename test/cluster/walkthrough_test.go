package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/replication/zkmeta"
)

// produce sends n records with acks=all to topic (values prefix-i) and
// fails the test on any error.
func produce(t *testing.T, cl *kgo.Client, topic, prefix string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for i := 0; i < n; i++ {
		rs = append(rs, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i)), Value: []byte(fmt.Sprintf("%s-%d", prefix, i))})
	}
	res := cl.ProduceSync(ctx, rs...)
	if err := res.FirstErr(); err != nil {
		t.Fatalf("produce %s: %v", prefix, err)
	}
	last := map[int32]int64{}
	for _, r := range res {
		if r.Record.Offset+1 > last[r.Record.Partition] {
			last[r.Record.Partition] = r.Record.Offset + 1
		}
	}
	t.Logf("produced %s: end offsets by partition %v", prefix, last)
}

// consumeAll reads n records of topic from the start, failing after 60 s.
func consumeAll(t *testing.T, c *cluster, topic string, n int) map[string]bool {
	t.Helper()
	cl := c.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(300*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	seen := map[string]bool{}
	errs := map[int32]error{}
	perPart := map[int32]int{}
	for len(seen) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			ectx, ecancel := context.WithTimeout(context.Background(), 5*time.Second)
			ends, _ := c.admin().ListEndOffsets(ectx, topic)
			ecancel()
			var desc []string
			ends.Each(func(o kadm.ListedOffset) {
				desc = append(desc, fmt.Sprintf("p%d end %d (%v)", o.Partition, o.Offset, o.Err))
			})
			t.Fatalf("consumed %d of %d records (per partition %v; last errors: %v; end offsets %v)", len(seen), n, perPart, errs, desc)
		}
		fs.EachError(func(topic string, p int32, err error) { errs[p] = err })
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true; perPart[r.Partition]++ })
	}
	return seen
}

// describedPartition is one partition line of `kafka-topics.sh --describe`.
type describedPartition struct {
	Leader        int32 // -1 for "none" or "-1"
	Replicas, Isr []int32
}

// topicsDescribe runs `bin/kafka-topics.sh --describe --zookeeper <connect>
// --topic <topic>` and parses its Leader:/Replicas:/Isr: lines by
// partition, failing the test on a non-zero exit or an unparsable line.
func (c *cluster) topicsDescribe(topic string) (map[int32]describedPartition, string) {
	c.t.Helper()
	code, out, errs := script(c.t, "kafka-topics.sh", "--describe", "--zookeeper", c.connect, "--topic", topic)
	if code != 0 {
		c.t.Fatalf("kafka-topics.sh --describe exited %d: %s%s", code, out, errs)
	}
	ids := func(v string) []int32 {
		var r []int32
		for _, f := range strings.Split(v, ",") {
			if f == "" {
				continue
			}
			n, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				c.t.Fatalf("bad broker id %q in --describe output:\n%s", f, out)
			}
			r = append(r, int32(n))
		}
		return r
	}
	parts := map[int32]describedPartition{}
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "\tTopic: ") {
			continue // the topic summary line
		}
		kv := map[string]string{}
		for _, f := range strings.Split(strings.TrimPrefix(line, "\t"), "\t") {
			k, v, _ := strings.Cut(f, ": ")
			kv[k] = v
		}
		p, err := strconv.ParseInt(kv["Partition"], 10, 32)
		if err != nil || kv["Topic"] != topic {
			c.t.Fatalf("bad partition line %q in:\n%s", line, out)
		}
		d := describedPartition{Leader: -1, Replicas: ids(kv["Replicas"]), Isr: ids(kv["Isr"])}
		if l := kv["Leader"]; l != "none" && l != "-1" {
			d.Leader = ids(l)[0]
		}
		parts[int32(p)] = d
	}
	return parts, out
}

// waitDescribe runs --describe until cond holds for every partition of
// topic (3 of them), within d; it returns the last parse.
func (c *cluster) waitDescribe(what, topic string, d time.Duration, cond func(p int32, dp describedPartition) string) map[int32]describedPartition {
	c.t.Helper()
	var parts map[int32]describedPartition
	c.waitFor("kafka-topics.sh --describe: "+what, d, func() (bool, string) {
		var out string
		parts, out = c.topicsDescribe(topic)
		if len(parts) != 3 {
			return false, out
		}
		for p, dp := range parts {
			if why := cond(p, dp); why != "" {
				return false, fmt.Sprintf("partition %d: %s in\n%s", p, why, out)
			}
		}
		return true, ""
	})
	return parts
}

// consoleProduce feeds lines to `bin/kafka-console-producer.sh --broker-list
// <brokers> --topic <topic>` and fails unless it exits 0 (every record
// acknowledged, acks=all by default).
func consoleProduce(t *testing.T, brokers []string, topic string, lines []string) {
	t.Helper()
	code, out, errs := scriptInput(t, strings.Join(lines, "\n")+"\n", "kafka-console-producer.sh",
		"--broker-list", strings.Join(brokers, ","), "--topic", topic)
	if code != 0 {
		t.Fatalf("kafka-console-producer.sh --broker-list %s exited %d: %s%s", strings.Join(brokers, ","), code, out, errs)
	}
}

// consoleConsume runs `bin/kafka-console-consumer.sh --zookeeper <connect>
// --topic <topic> --from-beginning --max-messages n` and returns the
// printed values sorted.
func (c *cluster) consoleConsume(topic string, n int) []string {
	c.t.Helper()
	code, out, errs := script(c.t, "kafka-console-consumer.sh", "--zookeeper", c.connect, "--topic", topic,
		"--from-beginning", "--max-messages", strconv.Itoa(n))
	if code != 0 {
		c.t.Fatalf("kafka-console-consumer.sh exited %d: %s%s", code, out, errs)
	}
	if want := fmt.Sprintf("Processed a total of %d messages", n); !strings.Contains(errs, want) {
		c.t.Errorf("kafka-console-consumer.sh stderr %q lacks %q", errs, want)
	}
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	slices.Sort(got)
	return got
}

func lines(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%02d", prefix, i)
	}
	return out
}

// TestSeedWalkthrough is the seeds' cluster walkthrough: three brokers, a
// topic with replication factor 3 whose Leader/Replicas/Isr every broker
// describes; kill -9 one broker, the ISRs shrink and leadership moves
// while producing and consuming keep working; restart it and it catches
// up and rejoins every ISR.
//
// It runs the README's commands through the bin/ wrappers too, on topic1:
// kafka-topics.sh --create/--describe --zookeeper (the Leader:/Replicas:/
// Isr: lines before the kill, after the ISRs shrank and after the
// restart), kafka-console-producer.sh --broker-list with lines on stdin
// and kafka-console-consumer.sh --zookeeper --from-beginning
// --max-messages reading them back.
func TestSeedWalkthrough(t *testing.T) {
	c := startCluster(t, 3, nil, nil)

	// ZooKeeper layout as Kafka 2.x writes it.
	ctrl := c.controllerID()
	if ctrl < 1 || ctrl > 3 {
		t.Fatalf("/controller names broker %d", ctrl)
	}
	data, _, err := c.store.Get(zkmeta.BrokerPath(2))
	if err != nil {
		t.Fatalf("get /brokers/ids/2: %v", err)
	}
	var reg map[string]any
	if err := json.Unmarshal(data, &reg); err != nil {
		t.Fatalf("/brokers/ids/2 is not JSON: %s", data)
	}
	for _, k := range []string{"endpoints", "host", "port", "jmx_port", "timestamp", "version"} {
		if _, ok := reg[k]; !ok {
			t.Errorf("/brokers/ids/2 lacks %q: %s", k, data)
		}
	}
	if reg["port"] != float64(c.brokers[2].Port) {
		t.Errorf("/brokers/ids/2 port %v, want %d", reg["port"], c.brokers[2].Port)
	}
	if _, _, err := c.store.Get(zkmeta.ClusterIDPath); err != nil {
		t.Errorf("/cluster/id: %v", err)
	}
	if data, _, err := c.store.Get(zkmeta.ControllerEpochPath); err != nil || string(data) == "" {
		t.Errorf("/controller_epoch: %q %v", data, err)
	}

	const topic = "walk"
	c.createTopic(topic, 3, 3, nil)
	data, _, err = c.store.Get(zkmeta.TopicPath(topic))
	if err != nil {
		t.Fatal(err)
	}
	a, err := zkmeta.DecodeTopicAssignment(topic, data)
	if err != nil || len(a.Partitions) != 3 {
		t.Fatalf("/brokers/topics/%s = %s (%v)", topic, data, err)
	}
	leaders := map[int32]bool{}
	for p, rs := range a.Partitions {
		if len(rs) != 3 {
			t.Fatalf("partition %d replicas %v", p, rs)
		}
		leaders[rs[0]] = true
	}
	if len(leaders) != 3 {
		t.Errorf("preferred leaders %v are not spread over the 3 brokers", leaders)
	}
	// Every broker's metadata cache agrees with ZooKeeper.
	for id, b := range c.brokers {
		c.waitFor(fmt.Sprintf("broker %d describing %s", id, topic), 20*time.Second, func() (bool, string) {
			d, err := describe(t, b, topic)
			if err != nil {
				return false, err.Error()
			}
			for p, pd := range d.Partitions {
				s, _ := c.partitionState(topic, p)
				if pd.Leader != s.Leader || len(pd.ISR) != 3 || len(pd.Replicas) != 3 {
					return false, fmt.Sprintf("p%d leader %d isr %v replicas %v (zk %+v)", p, pd.Leader, pd.ISR, pd.Replicas, s)
				}
			}
			return true, ""
		})
	}

	// The README's commands on topic1.
	const topic1 = "topic1"
	code, out, errs := script(t, "kafka-topics.sh", "--create", "--zookeeper", c.connect,
		"--replication-factor", "3", "--partitions", "3", "--topic", topic1)
	if code != 0 || out != "Created topic topic1.\n" {
		t.Fatalf("kafka-topics.sh --create exited %d: %q %q", code, out, errs)
	}
	desc1 := c.waitDescribe("every partition led with a full ISR", topic1, 30*time.Second, func(p int32, dp describedPartition) string {
		if len(dp.Replicas) != 3 || len(dp.Isr) != 3 || dp.Leader < 0 {
			return "not led by a full ISR yet"
		}
		if !slices.Equal(sortedIDs(dp.Isr), sortedIDs(dp.Replicas)) || !slices.Equal(sortedIDs(dp.Replicas), []int32{1, 2, 3}) {
			return "Isr is not the 3 replicas"
		}
		if dp.Leader != dp.Replicas[0] {
			return "led by a replica other than the preferred one"
		}
		if s, ok := c.partitionState(topic1, p); !ok || s.Leader != dp.Leader || !slices.Equal(s.ISR, dp.Isr) {
			return fmt.Sprintf("ZooKeeper state %+v differs", s)
		}
		return ""
	})
	leaders1 := map[int32]bool{}
	for _, dp := range desc1 {
		leaders1[dp.Leader] = true
	}
	if len(leaders1) != 3 {
		t.Errorf("topic1 leaders %v are not spread over the 3 brokers", desc1)
	}
	allBrokers := c.seeds() // --broker-list 127.0.0.1:9091,…: every broker, as in the README
	consoleProduce(t, allBrokers, topic1, lines("before", 20))

	prod := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(20))
	produce(t, prod, topic, "before", 300)
	if got := consumeAll(t, c, topic, 300); len(got) != 300 {
		t.Fatalf("consumed %d", len(got))
	}

	// kill -9 the leader of partition 0.
	s0, _ := c.partitionState(topic, 0)
	victim := s0.Leader
	c.brokers[victim].Kill()
	t.Logf("killed broker %d (leader of %s-0)", victim, topic)
	c.waitFor("leadership to move and ISRs to shrink", 30*time.Second, func() (bool, string) {
		for p := int32(0); p < 3; p++ {
			s, ok := c.partitionState(topic, p)
			if !ok || s.Leader < 0 || s.Leader == victim || contains(s.ISR, victim) {
				return false, fmt.Sprintf("p%d %+v", p, s)
			}
		}
		return true, ""
	})
	var other int32
	for id := range c.brokers {
		if id != victim {
			other = id
		}
	}
	c.waitFor("metadata of a live broker to show the new leaders", 20*time.Second, func() (bool, string) {
		d, err := describe(t, c.brokers[other], topic)
		if err != nil {
			return false, err.Error()
		}
		for p, pd := range d.Partitions {
			if pd.Leader == victim || pd.Leader < 0 || contains(pd.ISR, victim) || len(pd.ISR) != 2 {
				return false, fmt.Sprintf("p%d leader %d isr %v", p, pd.Leader, pd.ISR)
			}
		}
		return true, ""
	})
	// --describe: the killed broker is gone from every Isr and no longer
	// leads; the partitions it led have moved.
	c.waitDescribe(fmt.Sprintf("broker %d out of every Isr", victim), topic1, 30*time.Second, func(p int32, dp describedPartition) string {
		if contains(dp.Isr, victim) || dp.Leader == victim || dp.Leader < 0 || len(dp.Isr) != 2 {
			return "the killed broker still there or no leader"
		}
		if !slices.Equal(dp.Replicas, desc1[p].Replicas) {
			return fmt.Sprintf("Replicas changed from %v", desc1[p].Replicas)
		}
		if !contains(dp.Isr, dp.Leader) {
			return "the leader is not in the Isr"
		}
		return ""
	})
	// The console producer still gets its (acks=all) records in through a
	// broker list naming the dead broker; the console consumer finds the
	// live brokers in ZooKeeper and reads everything back.
	consoleProduce(t, allBrokers, topic1, lines("during", 20))
	want1 := append(lines("before", 20), lines("during", 20)...)
	slices.Sort(want1)
	if got := c.consoleConsume(topic1, 40); !slices.Equal(got, want1) {
		t.Fatalf("kafka-console-consumer.sh with broker %d down read %q, want %q", victim, got, want1)
	}

	prod2 := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(20))
	produce(t, prod2, topic, "during", 300)
	if got := consumeAll(t, c, topic, 600); !got["during-299"] || !got["before-0"] {
		t.Fatalf("records missing after the kill")
	}

	// Restart: it catches up and rejoins every ISR.
	c.brokers[victim].Start()
	c.waitFor("the restarted broker back in every ISR", 60*time.Second, func() (bool, string) {
		for p := int32(0); p < 3; p++ {
			s, ok := c.partitionState(topic, p)
			if !ok || len(s.ISR) != 3 {
				return false, fmt.Sprintf("p%d %+v", p, s)
			}
		}
		return true, ""
	})
	c.waitDescribe(fmt.Sprintf("broker %d back in every Isr", victim), topic1, 60*time.Second, func(p int32, dp describedPartition) string {
		if !contains(dp.Isr, victim) || len(dp.Isr) != 3 || dp.Leader < 0 {
			return "the restarted broker not back in the Isr"
		}
		return ""
	})
	consoleProduce(t, allBrokers, topic1, lines("after", 20))
	want1 = append(want1, lines("after", 20)...)
	slices.Sort(want1)
	if got := c.consoleConsume(topic1, 60); !slices.Equal(got, want1) {
		t.Fatalf("kafka-console-consumer.sh after the restart read %q, want %q", got, want1)
	}

	produce(t, prod2, topic, "after", 100)
	if got := consumeAll(t, c, topic, 700); !got["after-99"] {
		t.Fatalf("records missing after the restart")
	}
}

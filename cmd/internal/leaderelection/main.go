// Package leaderelection is `gregor leader-election`
// (kafka-leader-election.sh, Kafka's LeaderElectionCommand, KIP-460) and
// `gregor preferred-replica-election` (kafka-preferred-replica-election.sh,
// PreferredReplicaLeaderElectionCommand): the first sends ElectLeaders to
// the controller; the second, with --zookeeper, writes
// /admin/preferred_replica_election for the controller to act on (Kafka
// 2.x), or with --bootstrap-server sends a preferred ElectLeaders.
package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clientutil"
	"gregor/partition"
	"gregor/replication/controller"
)

// Options are kafka-leader-election.sh's flags.
type Options struct {
	BootstrapServer    string
	ElectionType       string // preferred | unclean
	Topic              string
	Partition          int32 // -1 = not given
	AllTopicPartitions bool
	PathToJSONFile     string
}

// Main runs kafka-leader-election.sh and returns the exit status.
func Main(ctx context.Context, o Options, props map[string]string, stdout, stderr io.Writer) int {
	typ, tps, err := parseOptions(o)
	if err != nil {
		return clientutil.Report(stderr, "", err)
	}
	cl, err := client(o.BootstrapServer, props, "leader-election-tool")
	if err != nil {
		return clientutil.Report(stderr, "", err)
	}
	defer cl.Close()
	res, err := Elect(ctx, cl, typ, tps)
	if err != nil {
		return clientutil.Report(stderr, "Error: ", err)
	}
	var ok, noop, failed []partition.TopicPartition
	for _, tp := range sortedKeys(res) {
		switch e := res[tp]; {
		case e == nil:
			ok = append(ok, tp)
		case errors.Is(e, kerr.ElectionNotNeeded):
			noop = append(noop, tp)
		default:
			failed = append(failed, tp)
		}
	}
	if len(ok) > 0 {
		fmt.Fprintf(stdout, "Successfully completed leader election (%s) for partitions %s\n", typ, join(ok, ", "))
	}
	if len(noop) > 0 {
		fmt.Fprintf(stdout, "Valid replica already elected for partitions %s\n", join(noop, ", "))
	}
	if len(failed) > 0 {
		for _, tp := range failed {
			fmt.Fprintf(stdout, "Error completing leader election (%s) for partition: %s: %v\n", typ, tp, res[tp])
		}
		fmt.Fprintf(stderr, "Error: %d replica(s) could not be elected\n", len(failed))
		return 1
	}
	return 0
}

func parseOptions(o Options) (controller.ElectionType, []partition.TopicPartition, error) {
	if o.BootstrapServer == "" {
		return 0, nil, clientutil.Usage("Missing required option(s) [bootstrap-server]")
	}
	if o.ElectionType == "" {
		return 0, nil, clientutil.Usage("Missing required option(s) [election-type]")
	}
	typ, err := controller.ParseElectionType(o.ElectionType)
	if err != nil {
		return 0, nil, clientutil.Usage("%v", err)
	}
	n := 0
	for _, b := range []bool{o.Topic != "", o.AllTopicPartitions, o.PathToJSONFile != ""} {
		if b {
			n++
		}
	}
	if n != 1 {
		return 0, nil, clientutil.Usage("One and only one of the following options is required: all-topic-partitions, topic, path-to-json-file")
	}
	if o.Partition >= 0 && o.Topic == "" {
		return 0, nil, clientutil.Usage("Option partition is only allowed if topic is used")
	}
	switch {
	case o.AllTopicPartitions:
		return typ, nil, nil
	case o.Topic != "":
		if o.Partition < 0 {
			return 0, nil, clientutil.Usage("Missing required option(s) [partition]")
		}
		return typ, []partition.TopicPartition{{Topic: o.Topic, Partition: o.Partition}}, nil
	}
	tps, err := ReadElectionFile(o.PathToJSONFile)
	return typ, tps, err
}

// ReadElectionFile reads a --path-to-json-file
// ({"partitions":[{"topic":"t","partition":0}]}), refusing duplicates.
func ReadElectionFile(path string) ([]partition.TopicPartition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	doc, err := controller.DecodeElection(data)
	if err != nil {
		return nil, err
	}
	seen := map[partition.TopicPartition]bool{}
	var dups []string
	for _, tp := range doc.Partitions {
		if seen[tp] {
			dups = append(dups, tp.String())
		}
		seen[tp] = true
	}
	if len(dups) > 0 {
		return nil, fmt.Errorf("Replica election data contains duplicate partitions: %s", strings.Join(dups, ","))
	}
	if len(doc.Partitions) == 0 {
		return nil, fmt.Errorf("Replica election data is empty")
	}
	return doc.Partitions, nil
}

func client(bootstrap string, props map[string]string, id string) (*kgo.Client, error) {
	if _, ok := props["client.id"]; !ok {
		props = clientutil.Merge(props, map[string]string{"client.id": id})
	}
	return clientutil.AdminKgoClient(bootstrap, props)
}

// Elect sends ElectLeaders (to the controller; nil tps = all partitions)
// and returns each partition's outcome (nil or its Kafka error, with the
// broker's message when it sent one).
func Elect(ctx context.Context, cl *kgo.Client, typ controller.ElectionType, tps []partition.TopicPartition) (map[partition.TopicPartition]error, error) {
	req := kmsg.NewPtrElectLeadersRequest()
	req.ElectionType = int8(typ)
	req.TimeoutMillis = 30000
	if tps != nil {
		req.Topics = []kmsg.ElectLeadersRequestTopic{}
		idx := map[string]int{}
		for _, tp := range tps {
			i, ok := idx[tp.Topic]
			if !ok {
				t := kmsg.NewElectLeadersRequestTopic()
				t.Topic = tp.Topic
				req.Topics = append(req.Topics, t)
				i = len(req.Topics) - 1
				idx[tp.Topic] = i
			}
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, tp.Partition)
		}
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	out := map[partition.TopicPartition]error{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			tp := partition.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			var e error
			if ke := kerr.ErrorForCode(p.ErrorCode); ke != nil {
				e = ke
				if p.ErrorMessage != nil && *p.ErrorMessage != "" {
					e = fmt.Errorf("%w: %s", ke, *p.ErrorMessage)
				}
			}
			out[tp] = e
		}
	}
	return out, nil
}

func sortedKeys(m map[partition.TopicPartition]error) []partition.TopicPartition {
	out := make([]partition.TopicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	controller.SortTPs(out)
	return out
}

func join(tps []partition.TopicPartition, sep string) string {
	s := make([]string, len(tps))
	for i, tp := range tps {
		s[i] = tp.String()
	}
	return strings.Join(s, sep)
}

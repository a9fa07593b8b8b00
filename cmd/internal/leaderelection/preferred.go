package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/cmd/internal/clientutil"
	"gregor/partition"
	"gregor/replication/controller"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/replication/zkstore"
)

// PreferredOptions are kafka-preferred-replica-election.sh's flags.
type PreferredOptions struct {
	ZooKeeper, BootstrapServer string
	PathToJSONFile             string // "" = every partition
}

// PreferredMain runs kafka-preferred-replica-election.sh and returns the
// exit status.
func PreferredMain(ctx context.Context, o PreferredOptions, props map[string]string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stdout, "This tool is deprecated. Please use kafka-leader-election tool. Tool usage: kafka-leader-election.sh --election-type preferred")
	if o.ZooKeeper == "" && o.BootstrapServer == "" {
		return clientutil.Report(stderr, "", clientutil.Usage("Missing required option(s) [zookeeper] or [bootstrap-server]"))
	}
	var tps []partition.TopicPartition
	if o.PathToJSONFile != "" {
		var err error
		if tps, err = ReadElectionFile(o.PathToJSONFile); err != nil {
			return clientutil.Report(stderr, "Failed to start preferred replica election\n", err)
		}
	}
	if o.BootstrapServer != "" {
		return preferredAdmin(ctx, o, props, tps, stdout, stderr)
	}
	s, err := zkstore.Open(o.ZooKeeper, zkstore.Config{SessionTimeout: 30 * time.Second})
	if err != nil {
		if errors.Is(err, zkstore.ErrBadConnect) {
			err = clientutil.Usage("--zookeeper: %v", err)
		}
		return clientutil.Report(stderr, "", err)
	}
	defer s.Close()
	if err := WritePreferredElection(s, tps, stdout); err != nil {
		fmt.Fprintln(stdout, "Failed to start preferred replica election")
		return clientutil.Report(stderr, "", err)
	}
	return 0
}

// WritePreferredElection is the --zookeeper path (Kafka 2.x
// PreferredReplicaLeaderElectionCommand): partitions of unknown topics are
// skipped, the rest written to /admin/preferred_replica_election (nil tps
// = every partition of every topic). An election already pending is an
// error naming its partitions.
func WritePreferredElection(s metastore.Store, tps []partition.TopicPartition, out io.Writer) error {
	topics, err := s.Children(zkmeta.TopicsPath)
	if err != nil && !errors.Is(err, metastore.ErrNoNode) {
		return err
	}
	exists := map[partition.TopicPartition]bool{}
	for _, t := range topics {
		data, _, err := s.Get(zkmeta.TopicPath(t))
		if err != nil {
			continue
		}
		a, err := zkmeta.DecodeTopicAssignment(t, data)
		if err != nil {
			continue
		}
		for _, p := range a.SortedPartitions() {
			tp := partition.TopicPartition{Topic: t, Partition: p}
			exists[tp] = true
		}
	}
	var valid, invalid []partition.TopicPartition
	if tps == nil {
		for tp := range exists {
			valid = append(valid, tp)
		}
		controller.SortTPs(valid)
	} else {
		for _, tp := range tps {
			if exists[tp] {
				valid = append(valid, tp)
			} else {
				invalid = append(invalid, tp)
			}
		}
	}
	if len(invalid) > 0 {
		fmt.Fprintf(out, "Skipping preferred replica leader election for partitions %s since the respective topics do not exist\n", join(invalid, ","))
	}
	if len(valid) == 0 {
		return errors.New("Preferred replica election data is empty")
	}
	doc := controller.ElectionDocument{Version: 1, Partitions: valid}
	data := doc.Encode()
	err = s.Create(zkmeta.PreferredReplicaElectionPath, data, false)
	if errors.Is(err, metastore.ErrNoNode) {
		err = metastore.CreateAll(s, zkmeta.PreferredReplicaElectionPath, data, false)
	}
	if errors.Is(err, metastore.ErrNodeExists) {
		cur, _, gerr := s.Get(zkmeta.PreferredReplicaElectionPath)
		pending := ""
		if gerr == nil {
			if d, derr := controller.DecodeElection(cur); derr == nil {
				pending = join(d.Partitions, ",")
			}
		}
		return fmt.Errorf("Preferred replica leader election currently in progress for %s. Aborting operation", pending)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Created preferred replica election path with %s\n", data)
	fmt.Fprintf(out, "Successfully started preferred replica election for partitions Set(%s)\n", join(valid, ", "))
	return nil
}

// preferredAdmin is the --bootstrap-server path (Kafka 2.4+): a preferred
// ElectLeaders.
func preferredAdmin(ctx context.Context, o PreferredOptions, props map[string]string, tps []partition.TopicPartition, stdout, stderr io.Writer) int {
	cl, err := client(o.BootstrapServer, props, "preferred-replica-election-tool")
	if err != nil {
		return clientutil.Report(stderr, "", err)
	}
	defer cl.Close()
	res, err := Elect(ctx, cl, controller.ElectPreferred, tps)
	if err != nil {
		return clientutil.Report(stderr, "Error: ", err)
	}
	var ok, noop, failed []string
	for _, tp := range sortedKeys(res) {
		switch e := res[tp]; {
		case e == nil:
			ok = append(ok, tp.String())
		case errors.Is(e, kerr.ElectionNotNeeded):
			noop = append(noop, tp.String())
		default:
			failed = append(failed, fmt.Sprintf("%s: %v", tp, e))
		}
	}
	if len(ok) > 0 {
		fmt.Fprintf(stdout, "Successfully completed preferred replica election for partitions %s\n", strings.Join(ok, ", "))
	}
	if len(noop) > 0 {
		fmt.Fprintf(stdout, "Preferred replica already elected for partitions %s\n", strings.Join(noop, ", "))
	}
	if len(failed) > 0 {
		fmt.Fprintf(stdout, "Preferred replica election failed for partitions %s\n", strings.Join(failed, ", "))
		return 1
	}
	return 0
}

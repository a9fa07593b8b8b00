package reassign

// Replica moves between log dirs: the log_dirs of a reassignment plan
// (one per replica, "any" or an absolute path), as Kafka's
// ReassignPartitionsCommand executeMoves / verifyReplicaMoves do them
// with AlterReplicaLogDirs (API 34) and DescribeLogDirs (API 35), sent to
// each replica's broker itself.

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/replication/controller"
)

// replica is one partition replica on one broker (Kafka's
// TopicPartitionReplica, printed "<topic>-<partition>-<broker>").
type replica struct {
	Broker int32
	TP     partition.TopicPartition
}

func (r replica) String() string {
	return fmt.Sprintf("%s-%d-%d", r.TP.Topic, r.TP.Partition, r.Broker)
}

// dirMoves are the plan's log_dirs other than "any", by replica.
func dirMoves(doc controller.Reassignment) map[replica]string {
	out := map[replica]string{}
	for _, e := range doc.Partitions {
		for i, d := range e.LogDirs {
			if d != "any" && i < len(e.Replicas) {
				out[replica{Broker: e.Replicas[i], TP: e.TP()}] = d
			}
		}
	}
	return out
}

// sortedReplicas orders replicas by broker, topic, partition (Kafka's
// compareTopicPartitionReplicas).
func sortedReplicas[V any](m map[replica]V) []replica {
	out := make([]replica, 0, len(m))
	for r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Broker != b.Broker {
			return a.Broker < b.Broker
		}
		if a.TP.Topic != b.TP.Topic {
			return a.TP.Topic < b.TP.Topic
		}
		return a.TP.Partition < b.TP.Partition
	})
	return out
}

// executeMoves sends AlterReplicaLogDirs for every move until each has
// started, retrying those answered REPLICA_NOT_AVAILABLE (the replica is
// not on its new broker yet) every 100 ms for at most timeout.
func executeMoves(ctx context.Context, adm *adminCluster, moves map[replica]string, timeout time.Duration, out io.Writer) error {
	deadline := time.Now().Add(timeout)
	pending := moves
	for {
		started, err := adm.alterReplicaLogDirs(ctx, pending)
		if err != nil {
			return err
		}
		for _, r := range sortedReplicas(started) {
			fmt.Fprintf(out, "Successfully started moving log directory to %s for replica %s-%d with broker %d \n", pending[r], r.TP.Topic, r.TP.Partition, r.Broker)
		}
		left := map[replica]string{}
		for r, d := range pending {
			if !started[r] {
				left[r] = d
			}
		}
		if len(left) == 0 {
			return nil
		}
		if !time.Now().Before(deadline) {
			var names []string
			for _, r := range sortedReplicas(left) {
				names = append(names, r.String())
			}
			return &terse{fmt.Sprintf("Timed out before log directory move%s could be started for: %s", plural(len(left)), strings.Join(names, ","))}
		}
		pending = left
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// alterReplicaLogDirs sends one AlterReplicaLogDirs per broker; started
// holds the replicas answered NONE. REPLICA_NOT_AVAILABLE leaves a replica
// pending; any other error fails ("Failed to alter dir for <replica>").
func (a *adminCluster) alterReplicaLogDirs(ctx context.Context, moves map[replica]string) (map[replica]bool, error) {
	byBroker := map[int32]map[string]map[string][]int32{} // broker → dir → topic → partitions
	for r, d := range moves {
		if byBroker[r.Broker] == nil {
			byBroker[r.Broker] = map[string]map[string][]int32{}
		}
		if byBroker[r.Broker][d] == nil {
			byBroker[r.Broker][d] = map[string][]int32{}
		}
		byBroker[r.Broker][d][r.TP.Topic] = append(byBroker[r.Broker][d][r.TP.Topic], r.TP.Partition)
	}
	started := map[replica]bool{}
	for broker, dirs := range byBroker {
		req := kmsg.NewPtrAlterReplicaLogDirsRequest()
		for d, topics := range dirs {
			rd := kmsg.NewAlterReplicaLogDirsRequestDir()
			rd.Dir = d
			for t, ps := range topics {
				rt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
				rt.Topic, rt.Partitions = t, ps
				rd.Topics = append(rd.Topics, rt)
			}
			req.Dirs = append(req.Dirs, rd)
		}
		kresp, err := a.cl.Broker(int(broker)).Request(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("AlterReplicaLogDirs to broker %d: %w", broker, err)
		}
		for _, t := range kresp.(*kmsg.AlterReplicaLogDirsResponse).Topics {
			for _, p := range t.Partitions {
				r := replica{Broker: broker, TP: partition.TopicPartition{Topic: t.Topic, Partition: p.Partition}}
				switch err := kerr.ErrorForCode(p.ErrorCode); {
				case err == nil:
					started[r] = true
				case err == kerr.ReplicaNotAvailable:
				default:
					return nil, fmt.Errorf("Failed to alter dir for %s: %w", r, err)
				}
			}
		}
	}
	return started, nil
}

// replicaDirs is where a replica's logs are on its broker.
type replicaDirs struct {
	current, future string // "" none
}

// describeReplicaDirs asks each broker (DescribeLogDirs for the
// replicas' partitions) where their current and future logs are; a
// replica absent from the answer is absent from the map.
func (a *adminCluster) describeReplicaDirs(ctx context.Context, rs []replica) (map[replica]replicaDirs, error) {
	byBroker := map[int32]map[string][]int32{}
	for _, r := range rs {
		if byBroker[r.Broker] == nil {
			byBroker[r.Broker] = map[string][]int32{}
		}
		byBroker[r.Broker][r.TP.Topic] = append(byBroker[r.Broker][r.TP.Topic], r.TP.Partition)
	}
	out := map[replica]replicaDirs{}
	for broker, topics := range byBroker {
		req := kmsg.NewPtrDescribeLogDirsRequest()
		for t, ps := range topics {
			rt := kmsg.NewDescribeLogDirsRequestTopic()
			rt.Topic, rt.Partitions = t, ps
			req.Topics = append(req.Topics, rt)
		}
		kresp, err := a.cl.Broker(int(broker)).Request(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("DescribeLogDirs to broker %d: %w", broker, err)
		}
		for _, d := range kresp.(*kmsg.DescribeLogDirsResponse).Dirs {
			if d.ErrorCode != 0 {
				continue
			}
			for _, t := range d.Topics {
				for _, p := range t.Partitions {
					r := replica{Broker: broker, TP: partition.TopicPartition{Topic: t.Topic, Partition: p.Partition}}
					rd := out[r]
					if p.IsFuture {
						rd.future = d.Dir
					} else {
						rd.current = d.Dir
					}
					out[r] = rd
				}
			}
		}
	}
	return out, nil
}

// verifyMoves prints each move's state with Kafka's wording
// (replicaMoveStatesToString) and reports whether any is still under way.
func verifyMoves(ctx context.Context, adm *adminCluster, moves map[replica]string, out io.Writer) (ongoing bool, err error) {
	rs := sortedReplicas(moves)
	dirs, err := adm.describeReplicaDirs(ctx, rs)
	if err != nil {
		return false, err
	}
	for _, r := range rs {
		target := moves[r]
		d, ok := dirs[r]
		switch {
		case !ok:
			ongoing = true
			fmt.Fprintf(out, "Partition %s cannot be found in any live log directory on broker %d.\n", r.TP, r.Broker)
		case d.current == "":
			ongoing = true
			fmt.Fprintf(out, "Partition %s is not found in any live log dir on broker %d. There is likely an offline log directory on the broker.\n", r.TP, r.Broker)
		case d.future != "" && d.future == target:
			ongoing = true
			fmt.Fprintf(out, "Reassignment of replica %s is still in progress.\n", r)
		case d.future != "":
			ongoing = true
			fmt.Fprintf(out, "Partition %s on broker %d is being moved to log dir %s instead of %s.\n", r.TP, r.Broker, d.future, target)
		case d.current == target:
			fmt.Fprintf(out, "Reassignment of replica %s completed successfully.\n", r)
		default:
			fmt.Fprintf(out, "Partition %s on broker %d is not being moved from log dir %s to %s.\n", r.TP, r.Broker, d.current, target)
		}
	}
	return ongoing, nil
}

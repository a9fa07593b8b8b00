// Package reassign is `gregor reassign-partitions`
// (kafka-reassign-partitions.sh, Kafka 2.x ReassignPartitionsCommand):
// --generate proposes an assignment of whole topics over a broker list,
// --execute starts a reassignment from a JSON file, --verify reports its
// progress, and (with --bootstrap-server only) --list and --cancel. With
// --zookeeper it works straight on the znodes (/admin/reassign_partitions,
// /brokers/topics), as Kafka 2.x did; with --bootstrap-server through
// AlterPartitionReassignments / ListPartitionReassignments (KIP-455). The
// output texts are Kafka's. --throttle and --replica-alter-log-dirs-throttle
// set the replication throttles and --verify/--cancel clear them
// (throttles.go).
package reassign

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"gregor/cmd/internal/clientutil"
	"gregor/partition"
	"gregor/replication/controller"
)

// Options are the command-line flags (Kafka's names).
type Options struct {
	ZooKeeper, BootstrapServer  string
	Generate, Execute, Verify   bool
	Cancel, List                bool
	ReassignmentJSONFile        string // --reassignment-json-file
	TopicsToMoveJSONFile        string // --topics-to-move-json-file
	BrokerList                  string // --broker-list "1,2,3"
	DisableRackAware            bool
	Throttle                    int64 // --throttle B/s; -1 none
	ReplicaAlterLogDirsThrottle int64
	TimeoutMs                   int64
	Additional                  bool
	PreserveThrottles           bool
}

// cluster is what the actions need, over ZooKeeper or the admin API.
type cluster interface {
	// assignment returns the replicas of every partition of topics; an
	// unknown topic is an error naming it.
	assignment(ctx context.Context, topics []string) (map[partition.TopicPartition][]int32, error)
	// assignmentLenient is assignment without the unknown-topic error
	// (their partitions are simply absent).
	assignmentLenient(ctx context.Context, topics []string) (map[partition.TopicPartition][]int32, error)
	// brokers lists the live broker ids, sorted.
	brokers(ctx context.Context) ([]int32, error)
	// ongoing lists the partitions being reassigned (ZooKeeper: those of
	// /admin/reassign_partitions) with their current replicas.
	ongoing(ctx context.Context) (map[partition.TopicPartition][]int32, error)
	throttleWriter // throttle configs (throttles.go)
	close()
}

// terse is a failure printed as its message alone (Kafka's
// TerseReassignmentFailureException); other errors print as "Error: …".
type terse struct{ msg string }

func (e *terse) Error() string { return e.msg }

// Main runs the tool and returns the exit status (0 ok, 1 failure).
func Main(ctx context.Context, o Options, props map[string]string, stdout, stderr io.Writer) int {
	if err := validate(o); err != nil {
		return clientutil.Report(stderr, "", err)
	}
	err := run(ctx, o, props, stdout)
	if err == nil {
		return 0
	}
	var t *terse
	if errors.As(err, &t) {
		fmt.Fprintln(stdout, t.msg)
		return 1
	}
	var ee *clientutil.ExitError
	if errors.As(err, &ee) {
		return clientutil.Report(stderr, "", err)
	}
	fmt.Fprintln(stdout, "Error: "+strings.ReplaceAll(err.Error(), "\n", " "))
	return 1
}

// validate applies ReassignPartitionsCommand's option checks.
func validate(o Options) error {
	n := 0
	for _, b := range []bool{o.Generate, o.Execute, o.Verify, o.Cancel, o.List} {
		if b {
			n++
		}
	}
	switch {
	case n != 1:
		return clientutil.Usage("Command must include exactly one action: --generate, --execute, --verify, --cancel, or --list")
	case o.BootstrapServer == "" && o.ZooKeeper == "":
		return clientutil.Usage("Please specify --bootstrap-server")
	case (o.Cancel || o.List) && o.BootstrapServer == "":
		return clientutil.Usage("Option --cancel and --list can only be used with --bootstrap-server")
	case (o.Execute || o.Verify || o.Cancel) && o.ReassignmentJSONFile == "":
		return clientutil.Usage("Missing required argument \"[reassignment-json-file]\"")
	case o.Generate && o.TopicsToMoveJSONFile == "":
		return clientutil.Usage("Missing required argument \"[topics-to-move-json-file]\"")
	case o.Generate && o.BrokerList == "":
		return clientutil.Usage("Missing required argument \"[broker-list]\"")
	}
	return nil
}

func run(ctx context.Context, o Options, props map[string]string, out io.Writer) error {
	if o.BootstrapServer == "" && o.ReplicaAlterLogDirsThrottle >= 0 {
		// Kafka 2.x: a log dir move (and its throttle) needs the admin API.
		return errors.New(`You must specify --bootstrap-server when using "[replica-alter-log-dirs-throttle]"`)
	}
	var cl cluster
	var adm *adminCluster
	if o.BootstrapServer != "" {
		if o.ZooKeeper != "" {
			fmt.Fprintln(out, "Warning: ignoring deprecated --zookeeper option because --bootstrap-server was specified.  The --zookeeper option will be removed in a future version of Kafka.")
		}
		a, err := openAdmin(o.BootstrapServer, props)
		if err != nil {
			return err
		}
		cl, adm = a, a
	} else {
		fmt.Fprintln(out, "Warning: --zookeeper is deprecated, and will be removed in a future version of Kafka.")
		z, err := openZk(o.ZooKeeper)
		if err != nil {
			return err
		}
		cl = z
	}
	defer cl.close()
	switch {
	case o.Generate:
		return generate(ctx, cl, o, out)
	case o.Execute:
		return execute(ctx, cl, adm, o, out)
	case o.Verify:
		return verify(ctx, cl, adm, o, out)
	case o.List:
		return list(ctx, adm, out)
	default:
		return cancel(ctx, adm, o, out)
	}
}

func readFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return data, nil
}

// generate is --generate: the current assignment of the topics and a
// proposal spreading them over --broker-list (Kafka's rack-unaware
// assignReplicasToBrokers, random start).
func generate(ctx context.Context, cl cluster, o Options, out io.Writer) error {
	brokers, err := parseBrokerList(o.BrokerList)
	if err != nil {
		return err
	}
	data, err := readFile(o.TopicsToMoveJSONFile)
	if err != nil {
		return err
	}
	topics, err := ParseTopicsToMove(data)
	if err != nil {
		return err
	}
	current, err := cl.assignment(ctx, topics)
	if err != nil {
		return err
	}
	live, err := cl.brokers(ctx)
	if err != nil {
		return err
	}
	var usable []int32
	for _, b := range brokers {
		for _, l := range live {
			if b == l {
				usable = append(usable, b)
			}
		}
	}
	proposed, err := Propose(current, usable)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Current partition replica assignment\n%s\n\n", FormatJSON(current))
	fmt.Fprintf(out, "Proposed partition reassignment configuration\n%s\n", FormatJSON(proposed))
	return nil
}

// Propose assigns each topic's partitions (same count and replication
// factor) over brokers, as Kafka's calculateAssignment does.
func Propose(current map[partition.TopicPartition][]int32, brokers []int32) (map[partition.TopicPartition][]int32, error) {
	type shape struct {
		n  int32
		rf int
	}
	byTopic := map[string]*shape{}
	for tp, rs := range current {
		s := byTopic[tp.Topic]
		if s == nil {
			s = &shape{rf: len(rs)}
			byTopic[tp.Topic] = s
		}
		s.n++
	}
	out := map[partition.TopicPartition][]int32{}
	for topic, s := range byTopic {
		if s.rf > len(brokers) {
			return nil, fmt.Errorf("Replication factor: %d larger than available brokers: %d.", s.rf, len(brokers))
		}
		for p, rs := range controller.AssignReplicas(brokers, s.n, int16(s.rf), -1, 0) {
			out[partition.TopicPartition{Topic: topic, Partition: p}] = rs
		}
	}
	return out, nil
}

func parseBrokerList(s string) ([]int32, error) {
	var out []int32
	seen := map[int32]bool{}
	var dups []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		id, err := strconv.ParseInt(f, 10, 32)
		if err != nil {
			return nil, clientutil.Usage("--broker-list: %q is not a broker id", f)
		}
		if seen[int32(id)] {
			dups = append(dups, f)
		}
		seen[int32(id)] = true
		out = append(out, int32(id))
	}
	if len(dups) > 0 {
		return nil, fmt.Errorf("Broker list contains duplicate entries: %s", strings.Join(dups, ","))
	}
	return out, nil
}

// execute is --execute: validate the file, print the current assignment
// (for rollback), start the reassignment.
func execute(ctx context.Context, cl cluster, adm *adminCluster, o Options, out io.Writer) error {
	data, err := readFile(o.ReassignmentJSONFile)
	if err != nil {
		return err
	}
	proposed, withDirs, err := ParseExecute(data)
	if err != nil {
		return err
	}
	if withDirs && adm == nil {
		return errors.New("bootstrap-server needs to be provided when replica reassignments are present.")
	}
	ongoing, err := cl.ongoing(ctx)
	if err != nil {
		return err
	}
	if len(ongoing) > 0 && (adm == nil || !o.Additional) {
		return &terse{"Cannot execute because there is an existing partition assignment.  Use --additional to override this and create a new partition assignment in addition to the existing one. The --additional flag can also be used to change the throttle by resubmitting the current reassignment."}
	}
	var topics []string
	seen := map[string]bool{}
	for tp := range proposed {
		if !seen[tp.Topic] {
			seen[tp.Topic] = true
			topics = append(topics, tp.Topic)
		}
	}
	current, err := cl.assignment(ctx, topics)
	if err != nil {
		return err
	}
	var missing []string
	for _, tp := range sortedTPs(proposed) {
		if _, ok := current[tp]; !ok {
			missing = append(missing, tp.String())
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("The proposed assignment contains non-existent partitions: %s", strings.Join(missing, ","))
	}
	live, err := cl.brokers(ctx)
	if err != nil {
		return err
	}
	var unknown []string
	known := map[int32]bool{}
	for _, b := range live {
		known[b] = true
	}
	reported := map[int32]bool{}
	for _, tp := range sortedTPs(proposed) {
		for _, r := range proposed[tp] {
			if !known[r] && !reported[r] {
				reported[r] = true
				unknown = append(unknown, strconv.Itoa(int(r)))
			}
		}
	}
	if len(unknown) > 0 {
		if adm != nil {
			return fmt.Errorf("Unknown broker id %s", unknown[0])
		}
		return fmt.Errorf("The proposed assignment contains non-existent brokerIDs: %s", strings.Join(unknown, ","))
	}
	cur := map[partition.TopicPartition][]int32{}
	for tp := range proposed {
		cur[tp] = current[tp]
	}
	fmt.Fprintf(out, "Current partition replica assignment\n\n%s\n\nSave this to use as the --reassignment-json-file option during rollback\n", FormatJSON(cur))
	if o.Throttle >= 0 || o.ReplicaAlterLogDirsThrottle >= 0 {
		fmt.Fprintln(out, "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.")
		if o.Throttle >= 0 {
			// --additional: the moves under way keep their throttles (Kafka's calculateProposedMoveMap).
			var under []controller.PartitionReassignment
			if adm != nil {
				if under, err = adm.listFull(ctx); err != nil {
					return err
				}
			}
			mm, err := proposedMoves(under, proposed, cur)
			if err != nil {
				return err
			}
			if err := setReassignmentThrottle(ctx, cl, mm, o.Throttle, out); err != nil {
				return err
			}
		}
		if o.ReplicaAlterLogDirsThrottle >= 0 {
			doc, err := controller.DecodeReassignment(data)
			if err != nil {
				return err
			}
			if err := setLogDirThrottle(ctx, cl, logDirBrokers(doc), o.ReplicaAlterLogDirsThrottle, out); err != nil {
				return err
			}
		}
	}
	if adm != nil {
		errs, err := adm.alter(ctx, proposed)
		if err != nil {
			return err
		}
		if len(errs) > 0 {
			var lines []string
			for _, tp := range sortedTPs(errs) {
				lines = append(lines, fmt.Sprintf("%s: %s", tp, errs[tp]))
			}
			return &terse{"Error reassigning partition(s):\n" + strings.Join(lines, "\n")}
		}
	} else if err := cl.(*zkCluster).create(proposed); err != nil {
		return err
	}
	fmt.Fprintf(out, "Successfully started partition reassignment%s for %s\n", plural(len(proposed)), joinTPs(sortedTPs(proposed), ","))
	if withDirs {
		doc, err := controller.DecodeReassignment(data)
		if err != nil {
			return err
		}
		// --timeout bounds the wait for the moves to start (a replica
		// moving to a new broker exists there only once reassigned).
		return executeMoves(ctx, adm, dirMoves(doc), time.Duration(o.TimeoutMs)*time.Millisecond, out)
	}
	return nil
}

// verify is --verify: the status of every partition of the file, then
// of every replica the file moves to a log dir (logdirs.go).
func verify(ctx context.Context, cl cluster, adm *adminCluster, o Options, out io.Writer) error {
	data, err := readFile(o.ReassignmentJSONFile)
	if err != nil {
		return err
	}
	doc, err := controller.DecodeReassignment(data)
	if err != nil {
		return err
	}
	target := map[partition.TopicPartition][]int32{}
	var topics []string
	seen := map[string]bool{}
	for _, e := range doc.Partitions {
		target[e.TP()] = e.Replicas
		if !seen[e.Topic] {
			seen[e.Topic] = true
			topics = append(topics, e.Topic)
		}
		if adm == nil && hasDirs(e.LogDirs) {
			return errors.New("bootstrap-server needs to be provided when replica reassignments are present.")
		}
	}
	if adm == nil {
		fmt.Fprintln(out, "Warning: because you are using the deprecated --zookeeper option, the results may be incomplete.  Use --bootstrap-server instead for more accurate results.")
	}
	ongoing, err := cl.ongoing(ctx)
	if err != nil {
		return err
	}
	current, err := cl.assignmentLenient(ctx, topics)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "Status of partition reassignment:")
	for _, tp := range sortedTPs(target) {
		want := target[tp]
		if _, busy := ongoing[tp]; busy {
			fmt.Fprintf(out, "Reassignment of partition %s is still in progress.\n", tp)
			continue
		}
		if have := current[tp]; equal(have, want) {
			fmt.Fprintf(out, "Reassignment of partition %s is completed.\n", tp)
		} else {
			fmt.Fprintf(out, "There is no active reassignment of partition %s, but replica set is %s rather than %s.\n", tp, joinIDs(current[tp]), joinIDs(want))
		}
	}
	movesOngoing := false
	if moves := dirMoves(doc); len(moves) > 0 {
		// adm is set: a plan with log dirs needs --bootstrap-server (above).
		if movesOngoing, err = verifyMoves(ctx, adm, moves, out); err != nil {
			return err
		}
	}
	if len(ongoing) == 0 && !movesOngoing && !o.PreserveThrottles {
		// Done: remove every throttle (Kafka cannot tell which brokers an
		// earlier reassignment throttled, so it clears them all).
		return clearAllThrottles(ctx, cl, cl, target, topics, out)
	}
	return nil
}

// list is --list (bootstrap only).
func list(ctx context.Context, adm *adminCluster, out io.Writer) error {
	rs, err := adm.listFull(ctx)
	if err != nil {
		return err
	}
	if len(rs) == 0 {
		fmt.Fprintln(out, "No partition reassignments found.")
		return nil
	}
	fmt.Fprintln(out, "Current partition reassignments:")
	for _, r := range rs {
		line := fmt.Sprintf("%s: replicas: %s.", r.TopicPartition, joinIDs(r.Replicas))
		if len(r.Adding) > 0 {
			line += fmt.Sprintf(" adding: %s.", joinIDs(r.Adding))
		}
		if len(r.Removing) > 0 {
			line += fmt.Sprintf(" removing: %s.", joinIDs(r.Removing))
		}
		fmt.Fprintln(out, line)
	}
	return nil
}

// cancel is --cancel (bootstrap only): revert the file's partitions that
// are being reassigned.
func cancel(ctx context.Context, adm *adminCluster, o Options, out io.Writer) error {
	data, err := readFile(o.ReassignmentJSONFile)
	if err != nil {
		return err
	}
	doc, err := controller.DecodeReassignment(data)
	if err != nil {
		return err
	}
	ongoing, err := adm.ongoing(ctx)
	if err != nil {
		return err
	}
	var active []partition.TopicPartition
	for _, e := range doc.Partitions {
		if _, ok := ongoing[e.TP()]; ok {
			active = append(active, e.TP())
		}
	}
	controller.SortTPs(active)
	target := map[partition.TopicPartition][]int32{}
	var topics []string
	for _, e := range doc.Partitions {
		if _, ok := target[e.TP()]; !ok && !slices.Contains(topics, e.Topic) {
			topics = append(topics, e.Topic)
		}
		target[e.TP()] = e.Replicas
	}
	clear := func() error {
		if o.PreserveThrottles {
			return nil
		}
		return clearAllThrottles(ctx, adm, adm, target, topics, out)
	}
	if len(active) == 0 {
		fmt.Fprintln(out, "None of the specified partition reassignments are active.")
		return clear()
	}
	req := map[partition.TopicPartition][]int32{}
	for _, tp := range active {
		req[tp] = nil
	}
	errs, err := adm.alter(ctx, req)
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		var lines []string
		for _, tp := range sortedTPs(errs) {
			lines = append(lines, fmt.Sprintf("%s: %s", tp, errs[tp]))
		}
		return &terse{"Error cancelling partition reassignment(s):\n" + strings.Join(lines, "\n")}
	}
	fmt.Fprintf(out, "Successfully cancelled partition reassignment%s for: %s\n", plural(len(active)), joinTPs(active, ","))
	return clear()
}

func hasDirs(dirs []string) bool {
	for _, d := range dirs {
		if d != "any" {
			return true
		}
	}
	return false
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

package topics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/cmd/internal/clientutil"
)

// Options are kafka-topics.sh's flags.
type Options struct {
	BootstrapServer                       string
	ZooKeeper                             string
	Create, List, Describe, Delete, Alter bool
	Topic                                 string // a name, or for list/describe/delete/alter a regular expression (',' = '|'), as Kafka's IncludeList
	Partitions                            int32  // -1 = not given
	ReplicationFactor                     int32  // -1 = not given
	Configs                               []string
	// ReplicaAssignment is --replica-assignment: "b1:b2,b3:b4" gives
	// partition 0 replicas b1,b2 and partition 1 b3,b4 (create: the whole
	// topic; alter: entries past the existing partitions are the added
	// ones). "" = not given. See ParseReplicaAssignment.
	ReplicaAssignment string
	IfExists          bool
	IfNotExists       bool
	ExcludeInternal   bool
	// DisableRackAware is --disable-rack-aware: with --zookeeper, assign
	// replicas ignoring broker.rack (Kafka's RackAwareMode.Disabled).
	DisableRackAware bool
	// Describe filters (TopicCommand's replication reports): with any of
	// them --describe prints no topic summary line, only the partitions
	// the filter selects. At most one may be given.
	UnderReplicated bool // --under-replicated-partitions: ISR smaller than the replicas
	Unavailable     bool // --unavailable-partitions: no leader, or a leader that is not a live broker
	UnderMinISR     bool // --under-min-isr-partitions: no leader, or ISR below min.insync.replicas (not with --zookeeper)
	AtMinISR        bool // --at-min-isr-partitions: ISR exactly min.insync.replicas (not with --zookeeper)
}

// ErrorPrefix begins every error line, as Kafka's TopicCommand prints it.
const ErrorPrefix = "Error while executing topic command : "

// Check validates the flag combination (Kafka's TopicCommandOptions.checkArgs).
func (o *Options) Check() error {
	actions := 0
	for _, b := range []bool{o.Create, o.List, o.Describe, o.Delete, o.Alter} {
		if b {
			actions++
		}
	}
	if actions != 1 {
		return clientutil.Usage("Command must include exactly one action: --list, --describe, --create, --alter or --delete")
	}
	if o.BootstrapServer == "" && o.ZooKeeper == "" {
		return clientutil.Usage("Missing required argument \"[bootstrap-server]\"")
	}
	if (o.Create || o.Delete || o.Alter) && o.Topic == "" {
		return clientutil.Usage("Missing required argument \"[topic]\"")
	}
	if o.Alter && o.Partitions < 0 {
		return clientutil.Usage("--alter needs --partitions (changing configs is kafka-configs.sh's job)")
	}
	if o.Alter && len(o.Configs) > 0 {
		return clientutil.Usage("Option \"[config]\" can't be used with option \"[alter]\"; use kafka-configs.sh to change topic configs")
	}
	if err := o.checkAssignmentOptions(); err != nil {
		return err
	}
	if err := o.checkReports(); err != nil {
		return err
	}
	if o.IfExists && !(o.Alter || o.Delete || o.Describe) {
		return clientutil.Usage("Option \"[if-exists]\" can only be used with --alter, --delete or --describe")
	}
	// --disable-rack-aware is Kafka 2.x's ZooKeeper-path option; Kafka
	// 3.9's kafka-topics.sh (--bootstrap-server only) does not know it, and
	// 2.x's AdminClient path ignored it: refused there with 3.9's words.
	if o.DisableRackAware && o.BootstrapServer != "" {
		return clientutil.Usage("disable-rack-aware is not a recognized option (with --bootstrap-server the controller assigns replicas, rack-aware when every broker has broker.rack; the option applies with --zookeeper)")
	}
	if o.DisableRackAware && !o.Create && !o.Alter {
		return clientutil.Usage("Option \"[disable-rack-aware]\" can only be used with --create or --alter")
	}
	if o.DisableRackAware && o.ReplicaAssignment != "" { // a manual assignment places no replicas
		return clientutil.Usage("Option \"[disable-rack-aware]\" can't be used with option \"[replica-assignment]\"")
	}
	if o.IfNotExists && !o.Create {
		return clientutil.Usage("Option \"[if-not-exists]\" can only be used with --create")
	}
	if o.Create {
		if o.ReplicationFactor != -1 && (o.ReplicationFactor < 1 || o.ReplicationFactor > 32767) {
			return clientutil.Usage("The replication factor must be between 1 and 32767 inclusive")
		}
		if o.Partitions != -1 && o.Partitions < 1 {
			return clientutil.Usage("The partitions must be greater than 0")
		}
	}
	return nil
}

// Run executes the command against admin, printing to stdout. Errors are
// returned (the caller prints them with ErrorPrefix and exits non-zero).
func Run(ctx context.Context, o Options, admin Admin, stdout io.Writer) error {
	switch {
	case o.Create:
		return create(ctx, o, admin, stdout)
	case o.List:
		names, err := matching(ctx, o, admin)
		if err != nil {
			return err
		}
		marked := markedForDeletion(admin)
		for _, n := range names {
			if marked[n] {
				n += " - marked for deletion" // Kafka 2.x's ZooKeeper list
			}
			fmt.Fprintln(stdout, n)
		}
		return nil
	case o.Describe:
		return describe(ctx, o, admin, stdout)
	case o.Delete:
		names, err := existing(ctx, o, admin)
		if err != nil || len(names) == 0 {
			return err
		}
		for _, n := range names {
			if err := checkDeletable(n); err != nil {
				return err
			}
		}
		if err := admin.DeleteTopics(ctx, names); err != nil {
			return err
		}
		if _, zk := admin.(deletionMarker); zk { // Kafka 2.x's ZooKeeper delete says so
			for _, n := range names {
				fmt.Fprintf(stdout, "Topic %s is marked for deletion.\nNote: This will have no impact if delete.topic.enable is not set to true.\n", n)
			}
		}
		return nil
	case o.Alter:
		names, err := existing(ctx, o, admin)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := checkPartitionsAlterable(n); err != nil {
				return err
			}
		}
		assignment, err := o.replicaAssignment()
		if err != nil {
			return err
		}
		added := map[string][][]int32{}
		if assignment != nil && len(names) > 0 {
			ds, err := admin.DescribeTopics(ctx, names)
			if err != nil {
				return err
			}
			for _, d := range ds {
				if added[d.Name], err = assignmentFor(assignment, len(d.Partitions), int(o.Partitions)); err != nil {
					return err
				}
			}
		}
		for _, n := range names {
			if err := admin.SetPartitionCount(ctx, n, int(o.Partitions), added[n]); err != nil {
				var ze *zkError
				if clientutil.HasBrokerMessage(err) || errors.As(err, &ze) {
					return err // the broker's (or AdminZkClient's) message names the topic
				}
				return fmt.Errorf("topic %s: %w", n, err)
			}
		}
		return nil
	}
	return clientutil.Usage("no action")
}

// replicaAssignment parses --replica-assignment; nil when not given.
func (o *Options) replicaAssignment() ([][]int32, error) {
	if o.ReplicaAssignment == "" {
		return nil, nil
	}
	return ParseReplicaAssignment(o.ReplicaAssignment)
}

func create(ctx context.Context, o Options, admin Admin, stdout io.Writer) error {
	configs, err := clientutil.ParseConfigs("--config", o.Configs)
	if err != nil {
		return err
	}
	assignment, err := o.replicaAssignment()
	if err != nil {
		return err
	}
	// Kafka's Topic.hasCollisionChars: a '.' or a '_' may collide with the
	// other in metric names, so either one warns.
	if strings.ContainsAny(o.Topic, "._") {
		fmt.Fprintln(stdout, "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.")
	}
	err = admin.CreateTopic(ctx, o.Topic, o.Partitions, int16(o.ReplicationFactor), assignment, configs)
	switch {
	case errors.Is(err, kerr.TopicAlreadyExists):
		if o.IfNotExists {
			return nil
		}
		return fmt.Errorf("Topic '%s' already exists.", o.Topic)
	case err != nil:
		return err
	}
	fmt.Fprintf(stdout, "Created topic %s.\n", o.Topic)
	return nil
}

func describe(ctx context.Context, o Options, admin Admin, stdout io.Writer) error {
	names, err := existing(ctx, o, admin)
	if err != nil || len(names) == 0 {
		return err
	}
	ds, err := admin.DescribeTopics(ctx, names)
	if err != nil {
		return err
	}
	if !o.reporting() {
		for _, d := range ds {
			io.WriteString(stdout, FormatDescription(d))
		}
		return nil
	}
	sel, err := o.partitionFilter(ctx, admin)
	if err != nil {
		return err
	}
	for _, d := range ds {
		for _, p := range d.Partitions {
			if sel(d, p) {
				io.WriteString(stdout, formatPartition(d, p))
			}
		}
	}
	return nil
}

// FormatDescription renders a topic as Kafka's TopicCommand --describe does:
// a summary line, then one tab-led line per partition.
func FormatDescription(d TopicDescription) string {
	var b strings.Builder
	b.WriteString(formatSummary(d))
	for _, p := range d.Partitions {
		b.WriteString(formatPartition(d, p))
	}
	return b.String()
}

// formatSummary is the topic line of --describe.
func formatSummary(d TopicDescription) string {
	var b strings.Builder
	b.WriteString("Topic: " + d.Name)
	if d.ID != "" {
		b.WriteString("\tTopicId: " + d.ID)
	}
	// Kafka's getReplicationFactor: the first partition's replicas, less
	// those being added while its reassignment is under way.
	rf := 0
	if len(d.Partitions) > 0 {
		p := d.Partitions[0]
		rf = len(p.Replicas)
		if reassigning(p) {
			rf -= len(p.Reassignment.Adding)
		}
	}
	cfg := make([]string, len(d.Configs))
	for i, c := range d.Configs {
		cfg[i] = c.Name + "=" + c.Value
	}
	fmt.Fprintf(&b, "\tPartitionCount: %d\tReplicationFactor: %d\tConfigs: %s\n", len(d.Partitions), rf, strings.Join(cfg, ","))
	return b.String()
}

// formatPartition is one tab-led partition line of --describe.
func formatPartition(d TopicDescription, p PartitionDescription) string {
	leader := "none"
	// ZooKeeper's state znode says -1 outright (ZkAdmin leaves ISR nil
	// when there is no state znode: then "none").
	if p.Leader >= 0 || (d.FromZooKeeper && p.Leader == -1 && p.ISR != nil) {
		leader = strconv.Itoa(int(p.Leader))
	}
	line := fmt.Sprintf("\tTopic: %s\tPartition: %d\tLeader: %s\tReplicas: %s\tIsr: %s", d.Name, p.Partition, leader, joinIDs(p.Replicas), joinIDs(p.ISR))
	if d.FromZooKeeper { // Kafka 2.x's --zookeeper form ends there
		return line + "\n"
	}
	// Kafka 3.9's TopicCommand: a reassignment's replicas, then the
	// eligible leader replicas (KIP-966), which a ZooKeeper-mode cluster
	// does not have (its Metadata answer leaves them null: "N/A").
	if p.Reassignment != nil {
		line += "\tAdding Replicas: " + joinIDs(p.Reassignment.Adding) + "\tRemoving Replicas: " + joinIDs(p.Reassignment.Removing)
	}
	return line + "\tElr: N/A\tLastKnownElr: N/A\n"
}

// reassigning is Kafka's isReassignmentInProgress: a replica of p is
// still being added or removed.
func reassigning(p PartitionDescription) bool {
	if p.Reassignment == nil {
		return false
	}
	for _, r := range p.Replicas {
		if slices.Contains(p.Reassignment.Adding, r) || slices.Contains(p.Reassignment.Removing, r) {
			return true
		}
	}
	return false
}

func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}

// matching lists topic names, filtered by --topic (a regular expression
// matching the whole name, ',' meaning '|') and --exclude-internal.
func matching(ctx context.Context, o Options, admin Admin) ([]string, error) {
	all, err := admin.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	var re *regexp.Regexp
	if o.Topic != "" {
		expr := strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(o.Topic), ",", "|"), " ", "")
		expr = strings.Trim(expr, `"'`)
		if re, err = regexp.Compile("^(?:" + expr + ")$"); err != nil {
			return nil, clientutil.Usage("invalid --topic pattern %q: %v", o.Topic, err)
		}
	}
	var out []string
	for _, n := range all {
		if o.ExcludeInternal && isInternal(n) {
			continue
		}
		if re == nil || re.MatchString(n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// existing is matching plus Kafka's ensureTopicExists: a --topic that
// matches nothing is an error unless --if-exists.
func existing(ctx context.Context, o Options, admin Admin) ([]string, error) {
	names, err := matching(ctx, o, admin)
	if err != nil {
		return nil, err
	}
	if o.Topic != "" && len(names) == 0 && !o.IfExists {
		return nil, fmt.Errorf("Topic '%s' does not exist as expected", o.Topic)
	}
	return names, nil
}

// Kafka's internal topics (Topic.isInternal).
const (
	offsetsTopic     = "__consumer_offsets"
	transactionTopic = "__transaction_state"
)

func isInternal(topic string) bool {
	return topic == offsetsTopic || topic == transactionTopic
}

// checkDeletable refuses deleting an internal topic, as Kafka's
// TopicCommand does before it asks the cluster (both the --zookeeper and
// the --bootstrap-server forms go through here).
func checkDeletable(topic string) error {
	if isInternal(topic) {
		return fmt.Errorf("Topic %s is a kafka internal topic and is not allowed to be marked for deletion.", topic)
	}
	return nil
}

// checkPartitionsAlterable refuses changing the partition count of the
// offsets topic (Kafka's TopicCommand.alterTopic): group coordinators are
// found by hashing the group id over its partitions.
func checkPartitionsAlterable(topic string) error {
	if topic == offsetsTopic {
		return errors.New("The number of partitions for the offsets topic cannot be changed.")
	}
	return nil
}

package topics

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/cmd/internal/clientutil"
	"gregor/config"
	"gregor/replication/controller"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/replication/zkstore"
)

// ZooKeeperSessionTimeout is the session timeout of the tool's ZooKeeper
// client (Kafka's TopicCommand uses 30000 ms for both timeouts).
var ZooKeeperSessionTimeout = 30 * time.Second

func init() { ZooKeeperAdmin = OpenZooKeeperAdmin }

// OpenZooKeeperAdmin connects to zookeeper.connect-style connect
// ("host:port[,host:port…][/chroot]") and returns the Admin of
// `topics --zookeeper`.
func OpenZooKeeperAdmin(connect string) (Admin, error) {
	s, err := zkstore.Open(connect, zkstore.Config{SessionTimeout: ZooKeeperSessionTimeout})
	if err != nil {
		if errors.Is(err, zkstore.ErrBadConnect) {
			return nil, clientutil.Usage("--zookeeper: %v", err)
		}
		return nil, err
	}
	return &ZkAdmin{Store: s}, nil
}

// ZkAdmin is Admin straight through ZooKeeper, as Kafka 2.x's
// AdminZkClient does it for `kafka-topics.sh --zookeeper`: create writes
// /config/topics/<t> and then the assignment /brokers/topics/<t>, delete
// writes the marker /admin/delete_topics/<t>, alter rewrites the assignment
// with the new partitions; the controller (watching those znodes) does the
// rest. Describe reads the assignment and each partition's state znode.
type ZkAdmin struct {
	Store metastore.Store
	// DisableRackAware: assign replicas ignoring broker.rack
	// (--disable-rack-aware); otherwise rack-aware when every registered
	// broker has a rack, refused when only some have one (Kafka's
	// RackAwareMode.Enforced).
	DisableRackAware bool
}

// zkError prints Kafka's TopicCommand message alone while errors.Is still
// sees the Kafka error code.
type zkError struct {
	code *kerr.Error
	msg  string
}

func (e *zkError) Error() string { return e.msg }
func (e *zkError) Unwrap() error { return e.code }

func kafkaErr(code *kerr.Error, format string, args ...any) error {
	return &zkError{code: code, msg: fmt.Sprintf(format, args...)}
}

// ListTopics implements Admin: the children of /brokers/topics, sorted.
func (a *ZkAdmin) ListTopics(ctx context.Context) ([]string, error) {
	names, err := a.Store.Children(zkmeta.TopicsPath)
	if errors.Is(err, metastore.ErrNoNode) {
		return nil, nil
	}
	return names, err
}

// LiveBrokers implements LiveBrokerLister: the registered brokers
// (/brokers/ids), sorted.
func (a *ZkAdmin) LiveBrokers(ctx context.Context) ([]int32, error) { return a.liveBrokers() }

// liveBrokers lists the registered broker ids (/brokers/ids), sorted.
func (a *ZkAdmin) liveBrokers() ([]int32, error) {
	kids, err := a.Store.Children(zkmeta.BrokerIDsPath)
	if err != nil && !errors.Is(err, metastore.ErrNoNode) {
		return nil, err
	}
	ids := make([]int32, 0, len(kids))
	for _, k := range kids {
		if id, err := strconv.ParseInt(k, 10, 32); err == nil {
			ids = append(ids, int32(id))
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// assign is AdminUtils.assignReplicasToBrokers over the registered brokers
// with their racks read from /brokers/ids/<id> (none when
// DisableRackAware).
func (a *ZkAdmin) assign(brokers []int32, partitions int32, rf int16, start int, startPartition int32) (map[int32][]int32, error) {
	racks := make([]controller.BrokerRack, 0, len(brokers))
	for _, id := range brokers {
		br := controller.BrokerRack{ID: id}
		if !a.DisableRackAware {
			data, _, err := a.Store.Get(zkmeta.BrokerPath(id))
			if err != nil && !errors.Is(err, metastore.ErrNoNode) {
				return nil, err
			}
			if info, err := zkmeta.DecodeBrokerInfo(id, data); err == nil {
				br.Rack = info.Rack
			}
		}
		racks = append(racks, br)
	}
	out, err := controller.AssignReplicasWithRacks(racks, partitions, rf, start, startPartition)
	if errors.Is(err, controller.ErrIncompleteRacks) {
		return nil, fmt.Errorf("Not all brokers have rack information. Add --disable-rack-aware in command line to make replica assignment without rack information.")
	}
	return out, err
}

// CreateTopic implements Admin. --zookeeper needs both --partitions and
// --replication-factor, as in Kafka 2.x. Errors: kerr.InvalidTopicException
// (bad name), kerr.TopicAlreadyExists, kerr.InvalidReplicationFactor (more
// replicas than registered brokers), kerr.InvalidConfig.
//
// With an assignment (--replica-assignment) the replicas are written as
// given, as Kafka 2.x's AdminZkClient.createTopicWithAssignment: replica
// counts must agree and a list must not repeat a broker
// (kerr.InvalidReplicaAssignment), but the brokers need not be registered
// yet (their partitions stay offline until they are).
func (a *ZkAdmin) CreateTopic(ctx context.Context, topic string, partitions int32, replicationFactor int16, assignment [][]int32, configs map[string]string) error {
	if assignment != nil {
		return a.createWithAssignment(topic, assignment, configs)
	}
	if partitions < 0 {
		return clientutil.Usage("Missing required argument \"[partitions]\"")
	}
	if replicationFactor < 0 {
		return clientutil.Usage("Missing required argument \"[replication-factor]\"")
	}
	if err := ValidateTopicName(topic); err != nil {
		return err
	}
	if err := config.ValidateTopicConfigs(configs); err != nil {
		return kafkaErr(kerr.InvalidConfig, "%v", err)
	}
	if ok, err := a.Store.Exists(zkmeta.TopicPath(topic)); err != nil {
		return err
	} else if ok {
		return kerr.TopicAlreadyExists
	}
	if err := a.checkCollision(topic); err != nil {
		return err
	}
	brokers, err := a.liveBrokers()
	if err != nil {
		return err
	}
	if int(replicationFactor) > len(brokers) {
		return kafkaErr(kerr.InvalidReplicationFactor, "Replication factor: %d larger than available brokers: %d.", replicationFactor, len(brokers))
	}
	parts, err := a.assign(brokers, partitions, replicationFactor, -1, 0)
	if err != nil {
		return err
	}
	return a.writeTopic(topic, parts, configs)
}

// createWithAssignment is CreateTopic with the replicas given, validated
// as Kafka's AdminZkClient.validateTopicCreate.
func (a *ZkAdmin) createWithAssignment(topic string, assignment [][]int32, configs map[string]string) error {
	if err := ValidateTopicName(topic); err != nil {
		return err
	}
	if ok, err := a.Store.Exists(zkmeta.TopicPath(topic)); err != nil {
		return err
	} else if ok {
		return kerr.TopicAlreadyExists
	}
	if err := a.checkCollision(topic); err != nil {
		return err
	}
	parts := make(map[int32][]int32, len(assignment))
	for p, replicas := range assignment {
		if len(replicas) != len(assignment[0]) {
			return kafkaErr(kerr.InvalidReplicaAssignment, "All partitions should have the same number of replicas")
		}
		seen := map[int32]bool{}
		for _, r := range replicas {
			if seen[r] {
				return kafkaErr(kerr.InvalidReplicaAssignment, "Duplicate replica assignment found: %s", scalaAssignment(assignment))
			}
			seen[r] = true
		}
		parts[int32(p)] = replicas
	}
	if err := config.ValidateTopicConfigs(configs); err != nil {
		return kafkaErr(kerr.InvalidConfig, "%v", err)
	}
	return a.writeTopic(topic, parts, configs)
}

// scalaAssignment renders an assignment as Scala prints a Map[Int, Seq[Int]]
// (Kafka's "Duplicate replica assignment found: " message).
func scalaAssignment(assignment [][]int32) string {
	s := make([]string, len(assignment))
	for p, replicas := range assignment {
		s[p] = fmt.Sprintf("%d -> List(%s)", p, brokerList(replicas))
	}
	return "Map(" + strings.Join(s, ", ") + ")"
}

// writeTopic writes a new topic's config and then its assignment (with a
// fresh topic id), the znode the controller reacts to.
func (a *ZkAdmin) writeTopic(topic string, parts map[int32][]int32, configs map[string]string) error {
	assignment := zkmeta.TopicAssignment{Partitions: parts}
	if _, err := rand.Read(assignment.TopicID[:]); err != nil {
		return err
	}
	// Config first, then the assignment the controller reacts to (so the
	// controller sees the topic's overrides when it creates the logs).
	cfgData := zkmeta.EncodeConfig(configs)
	if err := metastore.CreateAll(a.Store, zkmeta.TopicConfigPath(topic), cfgData, false); errors.Is(err, metastore.ErrNodeExists) {
		_, err = a.Store.Set(zkmeta.TopicConfigPath(topic), cfgData, metastore.AnyVersion)
		if err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	err := metastore.CreateAll(a.Store, zkmeta.TopicPath(topic), assignment.Encode(), false)
	if errors.Is(err, metastore.ErrNodeExists) {
		return kerr.TopicAlreadyExists
	}
	return err
}

// checkCollision refuses a name that differs from an existing topic only
// by '.' versus '_' (Kafka's Topic.hasCollision: metric names clash).
func (a *ZkAdmin) checkCollision(topic string) error {
	names, err := a.ListTopics(context.Background())
	if err != nil {
		return err
	}
	norm := func(s string) string {
		b := []byte(s)
		for i := range b {
			if b[i] == '.' {
				b[i] = '_'
			}
		}
		return string(b)
	}
	for _, n := range names {
		if n != topic && norm(n) == norm(topic) {
			return kafkaErr(kerr.InvalidTopicException, "Topic '%s' collides with existing topics: %s", topic, n)
		}
	}
	return nil
}

// DeleteTopics implements Admin: it marks each topic for deletion under
// /admin/delete_topics. Internal topics are refused; a topic already
// marked is left as is.
func (a *ZkAdmin) DeleteTopics(ctx context.Context, topics []string) error {
	for _, t := range topics {
		if err := checkDeletable(t); err != nil {
			return err
		}
		if ok, err := a.Store.Exists(zkmeta.TopicPath(t)); err != nil {
			return err
		} else if !ok {
			return kafkaErr(kerr.UnknownTopicOrPartition, "Topic %s does not exist", t)
		}
		err := metastore.CreateAll(a.Store, zkmeta.DeleteTopicPath(t), nil, false)
		if err != nil && !errors.Is(err, metastore.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// SetPartitionCount implements Admin: the new partitions are assigned as
// Kafka's AdminZkClient.addPartitions does (continuing the round robin from
// partition 0's first replica) and the assignment is rewritten
// conditionally on its znode version. Errors: kerr.InvalidPartitions when
// total is not an increase; kerr.InvalidReplicationFactor when fewer
// brokers are registered than the topic's replication factor.
//
// A non-nil added (--replica-assignment) places the new partitions as
// given, validated as AdminZkClient.validateReplicaAssignment: a replica
// list empty or repeating a broker, or of another size than partition
// 0's, is kerr.InvalidReplicaAssignment; a broker not registered is
// kerr.BrokerNotAvailable.
func (a *ZkAdmin) SetPartitionCount(ctx context.Context, topic string, total int, added [][]int32) error {
	data, version, err := a.Store.Get(zkmeta.TopicPath(topic))
	if errors.Is(err, metastore.ErrNoNode) {
		return kafkaErr(kerr.UnknownTopicOrPartition, "Topic %s does not exist", topic)
	}
	if err != nil {
		return err
	}
	asg, err := zkmeta.DecodeTopicAssignment(topic, data)
	if err != nil {
		return err
	}
	cur := len(asg.Partitions)
	if total <= cur {
		return kafkaErr(kerr.InvalidPartitions, "The number of partitions for a topic can only be increased. Topic %s currently has %d partitions, %d would not be an increase.",
			topic, cur, total)
	}
	brokers, err := a.liveBrokers()
	if err != nil {
		return err
	}
	first := asg.Partitions[0]
	rf := len(first)
	if added != nil {
		if err := checkAddedAssignment(added, cur, rf, brokers); err != nil {
			return err
		}
		for i, reps := range added {
			asg.Partitions[int32(cur+i)] = reps
		}
	} else {
		if rf == 0 || rf > len(brokers) {
			return kafkaErr(kerr.InvalidReplicationFactor, "Replication factor: %d larger than available brokers: %d.", rf, len(brokers))
		}
		start := sort.Search(len(brokers), func(i int) bool { return brokers[i] >= first[0] })
		if start == len(brokers) || brokers[start] != first[0] {
			start = -1 // partition 0's leader is not registered: random start
		}
		placed, err := a.assign(brokers, int32(total-cur), int16(rf), start, int32(cur))
		if err != nil {
			return err
		}
		for p, reps := range placed {
			asg.Partitions[p] = reps
		}
	}
	if _, err := a.Store.Set(zkmeta.TopicPath(topic), asg.Encode(), version); err != nil {
		if errors.Is(err, metastore.ErrBadVersion) {
			return fmt.Errorf("topic %s changed while adding partitions; retry: %w", topic, err)
		}
		return err
	}
	return nil
}

// checkAddedAssignment is Kafka's AdminZkClient.validateReplicaAssignment
// for the partitions cur, cur+1, … that added places, with partition 0's
// replica count rf and the registered brokers.
func checkAddedAssignment(added [][]int32, cur, rf int, brokers []int32) error {
	live := make(map[int32]bool, len(brokers))
	for _, b := range brokers {
		live[b] = true
	}
	var bad, badRF []string
	for i, replicas := range added {
		p := cur + i
		if len(replicas) == 0 {
			return kafkaErr(kerr.InvalidReplicaAssignment, "Cannot have replication factor of 0 for partition id %d.", p)
		}
		seen := map[int32]bool{}
		for _, r := range replicas {
			if seen[r] {
				return kafkaErr(kerr.InvalidReplicaAssignment, "Duplicate brokers not allowed in replica assignment: %s for partition id %d.", brokerList(replicas), p)
			}
			seen[r] = true
		}
		for _, r := range replicas {
			if !live[r] {
				return kafkaErr(kerr.BrokerNotAvailable, "Some brokers specified for partition id %d are not available. Specified brokers: %s, available brokers: %s.",
					p, brokerList(replicas), brokerList(brokers))
			}
		}
		if len(replicas) != rf {
			bad = append(bad, strconv.Itoa(p))
			badRF = append(badRF, strconv.Itoa(len(replicas)))
		}
	}
	if len(bad) > 0 {
		return kafkaErr(kerr.InvalidReplicaAssignment, "Inconsistent replication factor between partitions, partition 0 has %d while partitions [%s] have replication factors [%s], respectively.",
			rf, strings.Join(bad, ", "), strings.Join(badRF, ", "))
	}
	return nil
}

// DescribeTopics implements Admin from the assignment, the partition state
// znodes (a partition without one has no leader and an empty ISR) and
// the /config/topics overrides.
func (a *ZkAdmin) DescribeTopics(ctx context.Context, topics []string) ([]TopicDescription, error) {
	out := make([]TopicDescription, 0, len(topics))
	for _, t := range topics {
		data, _, err := a.Store.Get(zkmeta.TopicPath(t))
		if errors.Is(err, metastore.ErrNoNode) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		asg, err := zkmeta.DecodeTopicAssignment(t, data)
		if err != nil {
			return nil, err
		}
		d := TopicDescription{Name: t, FromZooKeeper: true}
		if asg.TopicID != ([16]byte{}) {
			d.ID = zkmeta.UUIDString(asg.TopicID)
		}
		for _, p := range asg.SortedPartitions() {
			// ISR nil marks "no state znode" (printed "Leader: none").
			pd := PartitionDescription{Partition: p, Leader: -1, Replicas: asg.Partitions[p]}
			sdata, _, err := a.Store.Get(zkmeta.PartitionStatePath(t, p))
			switch {
			case err == nil:
				st, err := zkmeta.DecodePartitionState(sdata)
				if err != nil {
					return nil, err
				}
				pd.Leader, pd.ISR = st.Leader, st.ISR
				if pd.ISR == nil {
					pd.ISR = []int32{}
				}
			case !errors.Is(err, metastore.ErrNoNode):
				return nil, err
			}
			d.Partitions = append(d.Partitions, pd)
		}
		cdata, _, err := a.Store.Get(zkmeta.TopicConfigPath(t))
		if err != nil && !errors.Is(err, metastore.ErrNoNode) {
			return nil, err
		}
		cfg, err := zkmeta.DecodeConfig(cdata)
		if err != nil {
			return nil, err
		}
		names := make([]string, 0, len(cfg))
		for k := range cfg {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			d.Configs = append(d.Configs, ConfigValue{Name: k, Value: cfg[k]})
		}
		out = append(out, d)
	}
	return out, nil
}

// deletionMarker is implemented by an Admin that sees deletion markers
// (ZkAdmin): list and delete then print what Kafka 2.x's ZooKeeper forms print.
type deletionMarker interface {
	MarkedForDeletion() map[string]bool
}

// markedForDeletion returns the topics marked for deletion, when admin knows.
func markedForDeletion(admin Admin) map[string]bool {
	if m, ok := admin.(deletionMarker); ok {
		return m.MarkedForDeletion()
	}
	return nil
}

// MarkedForDeletion returns the topics under /admin/delete_topics (none
// when it cannot be read).
func (a *ZkAdmin) MarkedForDeletion() map[string]bool {
	kids, err := a.Store.Children(zkmeta.DeleteTopicsPath)
	if err != nil {
		return nil
	}
	out := make(map[string]bool, len(kids))
	for _, k := range kids {
		out[k] = true
	}
	return out
}

// Close implements Admin.
func (a *ZkAdmin) Close() { a.Store.Close() }

// maxTopicNameLength is Kafka's Topic.MAX_NAME_LENGTH.
const maxTopicNameLength = 249

// ValidateTopicName applies Kafka's Topic.validate: non-empty, not "." or
// "..", at most 249 characters of [a-zA-Z0-9._-]. The error wraps
// kerr.InvalidTopicException.
func ValidateTopicName(t string) error {
	bad := func(why string) error {
		return kafkaErr(kerr.InvalidTopicException, "Topic name %q is illegal, %s", t, why)
	}
	switch {
	case t == "":
		return bad("it can't be empty")
	case t == "." || t == "..":
		return bad("it cannot be \".\" or \"..\"")
	case len(t) > maxTopicNameLength:
		return bad(fmt.Sprintf("it can't be longer than %d characters", maxTopicNameLength))
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return bad("it contains a character other than ASCII alphanumerics, '.', '_' and '-'")
		}
	}
	return nil
}

// Package getoffsets is `gregor get-offsets` (kafka-get-offsets.sh and
// kafka-run-class.sh kafka.tools.GetOffsetShell, Kafka's GetOffsetShell):
// the offset of each matching partition at a time spec, printed as
// "topic:partition:offset" lines sorted by "topic-partition" text.
package getoffsets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clientutil"
	"gregor/partition"
)

// Options are kafka-get-offsets.sh's flags.
type Options struct {
	BootstrapServer string // --bootstrap-server
	BrokerList      string // --broker-list (deprecated; used without --bootstrap-server)
	Topic           string // --topic: a regular expression ("" = all topics)
	TopicSet        bool   // --topic given
	Partitions      string // --partitions: "0,1"
	PartitionsSet   bool
	TopicPartitions string // --topic-partitions: "t1:1,t2:0-3,t3,t4:5-,:-3"
	TPSet           bool
	Time            string // --time (default "latest")
	ExcludeInternal bool   // --exclude-internal-topics
}

// The ListOffsets timestamps of --time's names (ListOffsetsRequest's
// EARLIEST_TIMESTAMP … LATEST_TIERED_TIMESTAMP).
const (
	latest        = -1
	earliest      = -2
	maxTimestamp  = -3
	earliestLocal = -4
	latestTiered  = -5
)

// errPrefix is GetOffsetShell's prefix for every error.
const errPrefix = "Error occurred: "

// Main runs kafka-get-offsets.sh and returns the exit status (1 on any
// error, printed as "Error occurred: …").
func Main(ctx context.Context, o Options, props map[string]string, stdout, stderr io.Writer) int {
	bs := o.BootstrapServer
	if bs == "" {
		bs = o.BrokerList
	}
	if bs == "" {
		return clientutil.Report(stderr, "", clientutil.Usage("Missing required argument \"[bootstrap-server]\""))
	}
	if o.TPSet && (o.TopicSet || o.PartitionsSet) {
		return clientutil.Report(stderr, errPrefix, errors.New("--topic-partitions cannot be used with --topic or --partitions"))
	}
	ts, err := ParseTime(o.Time)
	if err != nil {
		return clientutil.Report(stderr, errPrefix, err)
	}
	var filter Filter
	if o.TPSet {
		filter, err = ParsePatternList(o.TopicPartitions)
	} else {
		filter, err = TopicAndPartitions(o.Topic, o.Partitions)
	}
	if err != nil {
		return clientutil.Report(stderr, errPrefix, err)
	}
	if _, ok := props["client.id"]; !ok {
		props = clientutil.Merge(props, map[string]string{"client.id": "GetOffsetShell"})
	}
	cl, err := clientutil.AdminKgoClient(bs, props)
	if err != nil {
		return clientutil.Report(stderr, errPrefix, err)
	}
	defer cl.Close()
	tps, err := listPartitions(ctx, cl, filter, o.ExcludeInternal)
	if err != nil {
		return clientutil.Report(stderr, errPrefix, err)
	}
	if len(tps) == 0 {
		return clientutil.Report(stderr, errPrefix, errors.New("Could not match any topic-partitions with the specified filters"))
	}
	offsets, errs, err := listOffsets(ctx, cl, tps, ts)
	if err != nil {
		return clientutil.Report(stderr, errPrefix, err)
	}
	for _, tp := range tps {
		if e, ok := errs[tp]; ok {
			fmt.Fprintf(stderr, "Skip getting offsets for topic-partition %s due to error: %s\n", tp, clientutil.JavaException(e))
		}
	}
	// Kafka's TreeMap ordered by TopicPartition.toString: "t-10" before "t-2".
	keys := make([]partition.TopicPartition, 0, len(offsets))
	for tp := range offsets {
		keys = append(keys, tp)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, tp := range keys {
		fmt.Fprintf(stdout, "%s:%d:%d\n", tp.Topic, tp.Partition, offsets[tp])
	}
	return 0
}

// ParseTime is GetOffsetShell's --time: latest/-1, earliest/-2,
// max-timestamp/-3, earliest-local/-4, latest-tiered/-5 or a timestamp in
// ms; it returns the ListOffsets timestamp.
func ParseTime(s string) (int64, error) {
	switch s {
	case "", "latest":
		return latest, nil
	case "earliest":
		return earliest, nil
	case "max-timestamp":
		return maxTimestamp, nil
	case "earliest-local":
		return earliestLocal, nil
	case "latest-tiered":
		return latestTiered, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("Malformed time argument %s. Please use -1 or latest / -2 or earliest / -3 or max-timestamp / -4 or earliest-local / -5 or latest-tiered, or a specified long format timestamp", s)
	}
	return n, nil
}

// Filter selects topics and their partitions (Kafka's
// TopicPartitionFilter).
type Filter interface {
	TopicAllowed(topic string) bool
	PartitionAllowed(tp partition.TopicPartition) bool
}

// rule is one topic regex with a partition range [lo, hi).
type rule struct {
	topic  *regexp.Regexp
	lo, hi int64
	set    map[int32]bool // --partitions (nil or empty = all)
}

func (r rule) TopicAllowed(t string) bool { return r.topic.MatchString(t) }
func (r rule) PartitionAllowed(tp partition.TopicPartition) bool {
	if !r.TopicAllowed(tp.Topic) {
		return false
	}
	if r.set != nil {
		return len(r.set) == 0 || r.set[tp.Partition]
	}
	return int64(tp.Partition) >= r.lo && int64(tp.Partition) < r.hi
}

// rules is a composite filter: any rule may allow.
type rules []rule

func (rs rules) TopicAllowed(t string) bool {
	for _, r := range rs {
		if r.TopicAllowed(t) {
			return true
		}
	}
	return false
}

func (rs rules) PartitionAllowed(tp partition.TopicPartition) bool {
	for _, r := range rs {
		if r.PartitionAllowed(tp) {
			return true
		}
	}
	return false
}

// includeList compiles a topic pattern as Kafka's TopicFilter.IncludeList:
// trimmed, commas as alternation, spaces and surrounding quotes dropped,
// matching the whole name.
func includeList(raw string) (*regexp.Regexp, error) {
	re := strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(raw), ",", "|"), " ", "")
	re = strings.TrimLeft(re, `"'`)
	re = strings.TrimRight(re, `"'`)
	c, err := regexp.Compile("^(?:" + re + ")$")
	if err != nil {
		return nil, fmt.Errorf("%s is an invalid regex.", re)
	}
	return c, nil
}

// TopicAndPartitions is the filter of --topic (a regex; "" = all) and
// --partitions (comma-separated ids; "" = all).
func TopicAndPartitions(topic, partitions string) (Filter, error) {
	if topic == "" {
		topic = ".*"
	}
	re, err := includeList(topic)
	if err != nil {
		return nil, err
	}
	set := map[int32]bool{}
	if partitions != "" {
		for _, s := range strings.Split(partitions, ",") {
			n, err := strconv.ParseInt(s, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("--partitions expects a comma separated list of numeric partition ids, but received: %s", partitions)
			}
			set[int32(n)] = true
		}
	}
	return rule{topic: re, set: set}, nil
}

// rulePattern is GetOffsetShell's TOPIC_PARTITION_PATTERN.
var rulePattern = regexp.MustCompile(`^([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?$`)

// ParsePatternList is --topic-partitions: comma-separated
// TopicRegex[:Partition | :Lo-[Hi] | :-Hi] rules (a missing regex
// matches every topic; Lo inclusive, Hi exclusive).
func ParsePatternList(s string) (Filter, error) {
	var rs rules
	for _, spec := range strings.Split(s, ",") {
		m := rulePattern.FindStringSubmatch(spec)
		if m == nil {
			return nil, fmt.Errorf("Invalid rule specification: %s", spec)
		}
		topic := m[1]
		if topic == "" {
			topic = ".*"
		}
		re, err := includeList(topic)
		if err != nil {
			return nil, err
		}
		r := rule{topic: re, lo: 0, hi: math.MaxInt32}
		num := func(g string) (int64, error) {
			n, err := strconv.ParseInt(g, 10, 32)
			if err != nil {
				return 0, fmt.Errorf("Invalid rule specification: %s", spec)
			}
			return n, nil
		}
		switch {
		case m[2] != "":
			n, err := num(m[2])
			if err != nil {
				return nil, err
			}
			r.lo, r.hi = n, n+1
		default:
			if m[3] != "" {
				if r.lo, err = num(m[3]); err != nil {
					return nil, err
				}
			}
			if m[4] != "" {
				if r.hi, err = num(m[4]); err != nil {
					return nil, err
				}
			}
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// listPartitions is the partitions of the topics the filter allows
// (internal topics left out with excludeInternal), in metadata order.
func listPartitions(ctx context.Context, cl *kgo.Client, f Filter, excludeInternal bool) ([]partition.TopicPartition, error) {
	req := kmsg.NewPtrMetadataRequest()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	var out []partition.TopicPartition
	topics := resp.Topics
	sort.Slice(topics, func(i, j int) bool { return deref(topics[i].Topic) < deref(topics[j].Topic) })
	for _, t := range topics {
		name := deref(t.Topic)
		if t.ErrorCode != 0 || (excludeInternal && t.IsInternal) || !f.TopicAllowed(name) {
			continue
		}
		ps := t.Partitions
		sort.Slice(ps, func(i, j int) bool { return ps[i].Partition < ps[j].Partition })
		for _, p := range ps {
			tp := partition.TopicPartition{Topic: name, Partition: p.Partition}
			if f.PartitionAllowed(tp) {
				out = append(out, tp)
			}
		}
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// listOffsets sends ListOffsets for tps at ts through the client's
// sharding (each partition to its leader) and returns the found offsets
// (UNKNOWN_OFFSET -1 answers are left out, as Kafka prints none) and
// each failed partition's error. Gregor has no tiered storage, so, as a
// Kafka broker without remote storage answers them: earliest-local is
// the log start offset (sent as earliest) and latest-tiered has no
// offset (nothing is sent).
func listOffsets(ctx context.Context, cl *kgo.Client, tps []partition.TopicPartition, ts int64) (map[partition.TopicPartition]int64, map[partition.TopicPartition]error, error) {
	offsets := map[partition.TopicPartition]int64{}
	errs := map[partition.TopicPartition]error{}
	switch ts {
	case latestTiered:
		return offsets, errs, nil
	case earliestLocal:
		ts = earliest
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	idx := map[string]int{}
	for _, tp := range tps {
		i, ok := idx[tp.Topic]
		if !ok {
			t := kmsg.NewListOffsetsRequestTopic()
			t.Topic = tp.Topic
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			idx[tp.Topic] = i
		}
		p := kmsg.NewListOffsetsRequestTopicPartition()
		p.Partition, p.Timestamp, p.CurrentLeaderEpoch = tp.Partition, ts, -1
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	answered := map[partition.TopicPartition]bool{}
	for _, shard := range cl.RequestSharded(ctx, req) {
		if shard.Err != nil {
			if lr, ok := shard.Req.(*kmsg.ListOffsetsRequest); ok {
				for _, t := range lr.Topics {
					for _, p := range t.Partitions {
						tp := partition.TopicPartition{Topic: t.Topic, Partition: p.Partition}
						errs[tp], answered[tp] = shard.Err, true
					}
				}
			}
			continue
		}
		resp := shard.Resp.(*kmsg.ListOffsetsResponse)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				tp := partition.TopicPartition{Topic: t.Topic, Partition: p.Partition}
				answered[tp] = true
				if e := kerr.ErrorForCode(p.ErrorCode); e != nil {
					errs[tp] = e
					continue
				}
				if p.Offset != -1 {
					offsets[tp] = p.Offset
				}
			}
		}
	}
	for _, tp := range tps {
		if !answered[tp] {
			return nil, nil, fmt.Errorf("no ListOffsets answer for %s", tp)
		}
	}
	return offsets, errs, nil
}

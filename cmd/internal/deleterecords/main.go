// Package deleterecords is `gregor delete-records`
// (kafka-delete-records.sh, Kafka's DeleteRecordsCommand): it reads an
// offset JSON file and sends DeleteRecords for each partition, printing
// the new low watermark (log start offset) or the error of each.
package deleterecords

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clientutil"
	"gregor/partition"
)

// Options are kafka-delete-records.sh's flags.
type Options struct {
	BootstrapServer string // --bootstrap-server (required)
	OffsetJSONFile  string // --offset-json-file (required)
}

// Main runs kafka-delete-records.sh with the --command-config properties
// props (may be nil) and returns the exit status: 0 when the request was
// answered (per-partition errors are printed as Kafka does, and exit 0),
// 1 for bad flags, an unreadable or malformed file, duplicate partitions
// or a failed connection.
func Main(ctx context.Context, o Options, props map[string]string, stdout, stderr io.Writer) int {
	if o.BootstrapServer == "" {
		return clientutil.Report(stderr, "", clientutil.Usage("Missing required argument \"[bootstrap-server]\""))
	}
	if o.OffsetJSONFile == "" {
		return clientutil.Report(stderr, "", clientutil.Usage("Missing required argument \"[offset-json-file]\""))
	}
	data, err := os.ReadFile(o.OffsetJSONFile)
	if err != nil {
		return clientutil.Report(stderr, "", fmt.Errorf("reading %s: %w", o.OffsetJSONFile, err))
	}
	offsets, err := ParseOffsetJSON(data)
	if err != nil {
		return clientutil.Report(stderr, "", err)
	}
	cl, err := clientutil.AdminKgoClient(o.BootstrapServer, props)
	if err != nil {
		return clientutil.Report(stderr, "", err)
	}
	defer cl.Close()
	fmt.Fprintln(stdout, "Executing records delete operation")
	results := deleteRecords(ctx, cl, offsets)
	fmt.Fprintln(stdout, "Records delete operation completed:")
	for _, tp := range sortedTPs(offsets) {
		r := results[tp]
		if r.err != nil {
			fmt.Fprintf(stdout, "partition: %s\terror: %s\n", tp, clientutil.JavaException(r.err))
		} else {
			fmt.Fprintf(stdout, "partition: %s\tlow_watermark: %d\n", tp, r.low)
		}
	}
	return 0
}

type result struct {
	low int64
	err error
}

// deleteRecords sends DeleteRecords through the client's sharding (each
// partition to its leader; a partition with no leader fails with the
// metadata error) and returns every partition's outcome: its new low
// watermark or its error, the shard's when its broker could not be asked.
func deleteRecords(ctx context.Context, cl *kgo.Client, offsets map[partition.TopicPartition]int64) map[partition.TopicPartition]result {
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.TimeoutMillis = 30000
	idx := map[string]int{}
	for _, tp := range sortedTPs(offsets) {
		i, ok := idx[tp.Topic]
		if !ok {
			t := kmsg.NewDeleteRecordsRequestTopic()
			t.Topic = tp.Topic
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			idx[tp.Topic] = i
		}
		p := kmsg.NewDeleteRecordsRequestTopicPartition()
		p.Partition, p.Offset = tp.Partition, offsets[tp]
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	out := map[partition.TopicPartition]result{}
	for _, shard := range cl.RequestSharded(ctx, req) {
		if shard.Err != nil {
			if dr, ok := shard.Req.(*kmsg.DeleteRecordsRequest); ok {
				for _, t := range dr.Topics {
					for _, p := range t.Partitions {
						out[partition.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = result{err: shard.Err}
					}
				}
			}
			continue
		}
		for _, t := range shard.Resp.(*kmsg.DeleteRecordsResponse).Topics {
			for _, p := range t.Partitions {
				out[partition.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = result{low: p.LowWatermark, err: kerr.ErrorForCode(p.ErrorCode)}
			}
		}
	}
	for tp := range offsets {
		if _, ok := out[tp]; !ok {
			out[tp] = result{err: kerr.UnknownTopicOrPartition}
		}
	}
	return out
}

func sortedTPs(m map[partition.TopicPartition]int64) []partition.TopicPartition {
	out := make([]partition.TopicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// ParseOffsetJSON reads an --offset-json-file:
// {"partitions":[{"topic":"foo","partition":1,"offset":1}],"version":1}
// (version optional, 1 the only one; offset -1 = the high watermark).
// Errors carry DeleteRecordsCommand's messages: "The input string is not
// a valid JSON", "Missing partitions field", "Not supported version field
// value N", a missing or mistyped field, and "Offset json file contains
// duplicate topic partitions: t-0".
func ParseOffsetJSON(data []byte) (map[partition.TopicPartition]int64, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("The input string is not a valid JSON")
	}
	if dec.More() {
		return nil, fmt.Errorf("The input string is not a valid JSON")
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("Expected JSON object, received %s", jsonText(doc))
	}
	version := int64(1)
	if v, ok := obj["version"]; ok {
		n, err := integer(v, "Integer", math.MinInt32, math.MaxInt32)
		if err != nil {
			return nil, err
		}
		version = n
	}
	if version != 1 {
		return nil, fmt.Errorf("Not supported version field value %d", version)
	}
	ps, ok := obj["partitions"]
	if !ok {
		return nil, fmt.Errorf("Missing partitions field")
	}
	list, ok := ps.([]any)
	if !ok {
		return nil, fmt.Errorf("Expected JSON array, received %s", jsonText(ps))
	}
	out := map[partition.TopicPartition]int64{}
	var dups []string
	for _, e := range list {
		p, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("Expected JSON object, received %s", jsonText(e))
		}
		field := func(k string) (any, error) {
			v, ok := p[k]
			if !ok {
				return nil, fmt.Errorf("No such field exists: `%s`", k)
			}
			return v, nil
		}
		tv, err := field("topic")
		if err != nil {
			return nil, err
		}
		topic, ok := tv.(string)
		if !ok {
			return nil, fmt.Errorf("Expected `String` value, received %s", jsonText(tv))
		}
		pv, err := field("partition")
		if err != nil {
			return nil, err
		}
		part, err := integer(pv, "Integer", math.MinInt32, math.MaxInt32)
		if err != nil {
			return nil, err
		}
		ov, err := field("offset")
		if err != nil {
			return nil, err
		}
		off, err := integer(ov, "Long", math.MinInt64, math.MaxInt64)
		if err != nil {
			return nil, err
		}
		tp := partition.TopicPartition{Topic: topic, Partition: int32(part)}
		if _, dup := out[tp]; dup {
			dups = append(dups, tp.String())
			continue
		}
		out[tp] = off
	}
	if len(dups) > 0 {
		sort.Strings(dups)
		return nil, fmt.Errorf("Offset json file contains duplicate topic partitions: %s", strings.Join(slicesCompact(dups), ","))
	}
	return out, nil
}

func slicesCompact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// integer is Kafka's DecodeJson.DecodeInteger/DecodeLong: a JSON integer
// within [lo, hi].
func integer(v any, typ string, lo, hi int64) (int64, error) {
	n, ok := v.(json.Number)
	if ok {
		if i, err := n.Int64(); err == nil && i >= lo && i <= hi {
			return i, nil
		}
	}
	return 0, fmt.Errorf("Expected `%s` value, received %s", typ, jsonText(v))
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Package logdirs is `gregor log-dirs` (kafka-log-dirs.sh, Kafka's
// LogDirsCommand): DescribeLogDirs sent to the chosen brokers, printed as
// Kafka's one-line JSON document.
package logdirs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clientutil"
)

// Options are kafka-log-dirs.sh's flags.
type Options struct {
	BootstrapServer string // --bootstrap-server (required)
	Describe        bool   // --describe (required)
	TopicList       string // --topic-list "t1,t2" ("" = all topics)
	BrokerList      string // --broker-list "0,1" ("" = every broker)
}

// Main runs kafka-log-dirs.sh and returns the exit status: 1 for bad
// flags, brokers --broker-list names that are not in the cluster, or a
// failed request.
func Main(ctx context.Context, o Options, props map[string]string, stdout, stderr io.Writer) int {
	if o.BootstrapServer == "" {
		return clientutil.Report(stderr, "", clientutil.Usage("Missing required argument \"[bootstrap-server]\""))
	}
	if !o.Describe {
		return clientutil.Report(stderr, "", clientutil.Usage("Missing required argument \"[describe]\""))
	}
	topics := map[string]bool{}
	for _, t := range strings.Split(o.TopicList, ",") {
		if t != "" {
			topics[t] = true
		}
	}
	var asked []int32
	for _, s := range strings.Split(o.BrokerList, ",") {
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return clientutil.Report(stderr, "", fmt.Errorf("For input string: %q", s))
		}
		asked = append(asked, int32(n))
	}
	if _, ok := props["client.id"]; !ok {
		props = clientutil.Merge(props, map[string]string{"client.id": "log-dirs-tool"})
	}
	cl, err := clientutil.AdminKgoClient(o.BootstrapServer, props)
	if err != nil {
		return clientutil.Report(stderr, "", err)
	}
	defer cl.Close()
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		return clientutil.Report(stderr, "", err)
	}
	cluster := map[int32]bool{}
	for _, b := range meta.Brokers {
		cluster[b.NodeID] = true
	}
	brokers, missing := asked, []int32(nil)
	if len(asked) == 0 {
		for id := range cluster {
			brokers = append(brokers, id)
		}
	} else {
		brokers = nil
		for _, id := range asked {
			if cluster[id] {
				brokers = append(brokers, id)
			} else {
				missing = append(missing, id)
			}
		}
	}
	if len(missing) > 0 {
		all := make([]int32, 0, len(cluster))
		for id := range cluster {
			all = append(all, id)
		}
		return clientutil.Report(stderr, "", fmt.Errorf("ERROR: The given brokers do not exist from --broker-list: %s. Current existent brokers: %s", ids(missing), ids(all)))
	}
	brokers = uniqueSorted(brokers)
	fmt.Fprintln(stdout, "Querying brokers for log directories information")
	results := make([]brokerDirs, 0, len(brokers))
	for _, id := range brokers {
		dirs, err := describe(ctx, cl, id)
		if err != nil {
			return clientutil.Report(stderr, "", fmt.Errorf("%s", clientutil.JavaException(err)))
		}
		results = append(results, brokerDirs{id: id, dirs: dirs})
	}
	fmt.Fprintf(stdout, "Received log directory information from brokers %s\n", ids(brokers))
	fmt.Fprintln(stdout, FormatJSON(results, topics))
	return 0
}

type brokerDirs struct {
	id   int32
	dirs []kmsg.DescribeLogDirsResponseDir
}

// describe asks one broker for all of its log dirs (null topics).
func describe(ctx context.Context, cl *kgo.Client, id int32) ([]kmsg.DescribeLogDirsResponseDir, error) {
	req := kmsg.NewPtrDescribeLogDirsRequest()
	resp, err := req.RequestWith(ctx, cl.Broker(int(id)))
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	return resp.Dirs, nil
}

// FormatJSON renders LogDirsCommand's document, keys in the order Kafka
// 3.9 prints them (its HashMaps' order):
// {"brokers":[{"broker":0,"logDirs":[{"partitions":[{"partition":"t-0",
// "size":123,"offsetLag":0,"isFuture":false}],"error":null,
// "logDir":"/tmp/kafka-logs"}]}],"version":1}. error is the Java
// exception class of a dir's error code (whose partitions are then
// empty); topics, when not empty, keeps only their partitions. Brokers,
// dirs and partitions are sorted (Kafka's order is its HashMaps').
func FormatJSON(results []brokerDirs, topics map[string]bool) string {
	var b bytes.Buffer
	b.WriteString(`{"brokers":[`)
	for i, r := range results {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"broker":%d,"logDirs":[`, r.id)
		dirs := append([]kmsg.DescribeLogDirsResponseDir(nil), r.dirs...)
		sort.Slice(dirs, func(i, j int) bool { return dirs[i].Dir < dirs[j].Dir })
		for j, d := range dirs {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"partitions":[`)
			type part struct {
				tp        string
				size, lag int64
				future    bool
			}
			var parts []part
			errText := "null"
			if e := kerr.ErrorForCode(d.ErrorCode); e != nil {
				errText = jsonString(clientutil.JavaExceptionClass(e))
			} else {
				for _, t := range d.Topics {
					if len(topics) > 0 && !topics[t.Topic] {
						continue
					}
					for _, p := range t.Partitions {
						parts = append(parts, part{fmt.Sprintf("%s-%d", t.Topic, p.Partition), p.Size, p.OffsetLag, p.IsFuture})
					}
				}
			}
			sort.Slice(parts, func(i, j int) bool { return parts[i].tp < parts[j].tp })
			for k, p := range parts {
				if k > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"partition":%s,"size":%d,"offsetLag":%d,"isFuture":%t}`, jsonString(p.tp), p.size, p.lag, p.future)
			}
			fmt.Fprintf(&b, `],"error":%s,"logDir":%s}`, errText, jsonString(d.Dir))
		}
		b.WriteString(`]}`)
	}
	b.WriteString(`],"version":1}`)
	return b.String()
}

// jsonString is s as a JSON string, without Go's HTML escaping (Jackson
// writes <, > and & as they are).
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func uniqueSorted(s []int32) []int32 {
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func ids(s []int32) string {
	s = uniqueSorted(append([]int32(nil), s...))
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.Itoa(int(v))
	}
	return strings.Join(parts, ",")
}

package verifiable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clientutil"
)

// ConsumerOptions are kafka-verifiable-consumer.sh's flags.
type ConsumerOptions struct {
	BootstrapServer     string // --bootstrap-server
	BrokerList          string // --broker-list (deprecated; one of the two is required)
	Topic               string // --topic (required)
	GroupProtocol       string // --group-protocol: classic (consumer, KIP-848, is refused)
	GroupRemoteAssignor string // --group-remote-assignor (consumer protocol only: refused)
	GroupID             string // --group-id (required)
	GroupInstanceID     string // --group-instance-id (static membership)
	MaxMessages         int64  // --max-messages (-1 = until stopped)
	SessionTimeout      int    // --session-timeout ms (default 30000)
	Verbose             bool   // --verbose: a record_data event per record
	EnableAutocommit    bool   // --enable-autocommit
	ResetPolicy         string // --reset-policy: earliest (default), latest, none
	AssignmentStrategy  string // --assignment-strategy (default RangeAssignor)
	ConsumerConfig      string // --consumer.config properties file
}

type tpJSON struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

type partitionsEvent struct {
	event
	Partitions []tpJSON `json:"partitions"`
}

type recordSetSummary struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Count     int64  `json:"count"`
	MinOffset int64  `json:"minOffset"`
	MaxOffset int64  `json:"maxOffset"`
}

type recordsConsumed struct {
	event
	Count      int64              `json:"count"`
	Partitions []recordSetSummary `json:"partitions"`
}

type recordData struct {
	event
	Key       *string `json:"key"`
	Value     *string `json:"value"`
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Offset    int64   `json:"offset"`
}

type commitData struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

type offsetsCommitted struct {
	event
	Offsets []commitData `json:"offsets"`
	Error   *string      `json:"error,omitempty"`
	Success bool         `json:"success"`
}

func tpList(m map[string][]int32) []tpJSON {
	out := []tpJSON{}
	for t, ps := range m {
		for _, p := range ps {
			out = append(out, tpJSON{t, p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// RunConsumer runs kafka-verifiable-consumer.sh: it joins the group,
// consumes until --max-messages or ctx ends (the signal), commits what
// each poll returned unless auto-commit is on, then leaves the group and
// prints shutdown_complete. Exit status 1 for bad flags or properties.
func RunConsumer(ctx context.Context, o ConsumerOptions, bsSet, blSet bool, stdout, stderr io.Writer) int {
	const tool = "verifiable-consumer"
	bs, code := checkConnection(tool, stderr, o.BootstrapServer, o.BrokerList, bsSet, blSet)
	if code != 0 {
		return code
	}
	switch {
	case o.Topic == "":
		return argError(tool, stderr, "argument --topic is required")
	case o.GroupID == "":
		return argError(tool, stderr, "argument --group-id is required")
	}
	switch o.GroupProtocol {
	case "", "classic", "CLASSIC":
	case "consumer", "CONSUMER":
		return clientutil.Report(stderr, "", fmt.Errorf("--group-protocol consumer (KIP-848) is not supported: Gregor serves the classic group protocol"))
	default:
		return clientutil.Report(stderr, "", fmt.Errorf("Invalid value %s for configuration group.protocol: String must be one of: classic, consumer", o.GroupProtocol))
	}
	if o.GroupRemoteAssignor != "" {
		return clientutil.Report(stderr, "", fmt.Errorf("--group-remote-assignor applies only to --group-protocol consumer, which is not supported"))
	}
	props := map[string]string{}
	if o.ConsumerConfig != "" {
		file, err := clientutil.LoadPropsFile(o.ConsumerConfig)
		if err != nil {
			return argError(tool, stderr, "%v", err)
		}
		props = file
	}
	// The flags over the file, as VerifiableConsumer puts them last.
	props["partition.assignment.strategy"] = o.AssignmentStrategy
	props["group.id"] = o.GroupID
	if o.GroupInstanceID != "" {
		props["group.instance.id"] = o.GroupInstanceID
	}
	props["enable.auto.commit"] = strconv.FormatBool(o.EnableAutocommit)
	props["auto.offset.reset"] = o.ResetPolicy
	props["session.timeout.ms"] = strconv.Itoa(o.SessionTimeout)
	co, err := clientutil.ConsumerOptions(props)
	if err != nil {
		return clientutil.Report(stderr, "", err)
	}
	seeds, err := clientutil.ParseBootstrap("--bootstrap-server", bs)
	if err != nil {
		return clientutil.Report(stderr, "", err)
	}
	co.Warn(stderr)
	out := &printer{w: stdout}
	opts := append(co.Opts, kgo.SeedBrokers(seeds...), kgo.ConsumerGroup(o.GroupID), kgo.ConsumeTopics(o.Topic),
		// Rebalances happen between polls, as inside KafkaConsumer.poll,
		// so a poll's records are committed before their partitions move.
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			out.print(partitionsEvent{head("partitions_assigned"), tpList(m)})
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			out.print(partitionsEvent{head("partitions_revoked"), tpList(m)})
		}),
		// onPartitionsLost defaults to onPartitionsRevoked in Kafka.
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			out.print(partitionsEvent{head("partitions_revoked"), tpList(m)})
		}))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return clientutil.Report(stderr, "", err)
	}
	out.print(head("startup_complete"))
	var consumed int64
	finished := func() bool { return o.MaxMessages >= 0 && consumed >= o.MaxMessages }
	for !finished() && ctx.Err() == nil {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil || fetches.IsClientClosed() {
			cl.AllowRebalance()
			break
		}
		fetches.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.Canceled) {
				fmt.Fprintf(stderr, "Error consuming %s-%d: %v\n", t, p, err)
			}
		})
		offsets := map[string]map[int32]kgo.EpochOffset{}
		var summaries []recordSetSummary
		total := int64(fetches.NumRecords())
		fetches.EachPartition(func(p kgo.FetchTopicPartition) {
			recs := p.Records
			if finished() || len(recs) == 0 {
				return
			}
			if o.MaxMessages >= 0 && consumed+int64(len(recs)) > o.MaxMessages {
				recs = recs[:o.MaxMessages-consumed]
			}
			first, last := recs[0], recs[len(recs)-1]
			if offsets[p.Topic] == nil {
				offsets[p.Topic] = map[int32]kgo.EpochOffset{}
			}
			offsets[p.Topic][p.Partition] = kgo.EpochOffset{Epoch: last.LeaderEpoch, Offset: last.Offset + 1}
			summaries = append(summaries, recordSetSummary{p.Topic, p.Partition, int64(len(recs)), first.Offset, last.Offset})
			if o.Verbose {
				for _, r := range recs {
					out.print(recordData{event: head("record_data"), Key: str(r.Key), Value: str(r.Value), Topic: r.Topic, Partition: r.Partition, Offset: r.Offset})
				}
			}
			consumed += int64(len(recs))
		})
		if total > 0 {
			if summaries == nil {
				summaries = []recordSetSummary{}
			}
			out.print(recordsConsumed{event: head("records_consumed"), Count: total, Partitions: summaries})
		}
		if !o.EnableAutocommit && len(offsets) > 0 {
			commit(ctx, cl, offsets, out)
		}
		cl.AllowRebalance()
	}
	// consumer.close(): leave the group (the revocation is printed), then
	// the closing event.
	cl.Close()
	out.print(head("shutdown_complete"))
	return 0
}

func str(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// commit is VerifiableConsumer.commitSync: the poll's offsets, then an
// offsets_committed event with the outcome.
func commit(ctx context.Context, cl *kgo.Client, offsets map[string]map[int32]kgo.EpochOffset, out *printer) {
	var list []commitData
	for t, ps := range offsets {
		for p, eo := range ps {
			list = append(list, commitData{t, p, eo.Offset})
		}
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].Topic != list[j].Topic {
			return list[i].Topic < list[j].Topic
		}
		return list[i].Partition < list[j].Partition
	})
	var cerr error
	cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			cerr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if e := kerr.ErrorForCode(p.ErrorCode); e != nil && cerr == nil {
					cerr = e
				}
			}
		}
	})
	ev := offsetsCommitted{event: head("offsets_committed"), Offsets: list, Success: cerr == nil}
	if cerr != nil {
		msg := exceptionMessage(cerr)
		ev.Error = &msg
	}
	out.print(ev)
}

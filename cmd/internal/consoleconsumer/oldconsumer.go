package consoleconsumer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clientutil"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// The old consumer: kafka-console-consumer.sh --zookeeper … --group g
// (Kafka 0.8–0.10's ZookeeperConsumerConnector, offsets.storage=zookeeper).
// Its group lives in ZooKeeper, not in a group coordinator:
//
//	/consumers/<g>/ids/<consumer id>          ephemeral registration, while it runs
//	/consumers/<g>/owners/<topic>/<p>         ephemeral, "<consumer id>-0", while it runs
//	/consumers/<g>/offsets/<topic>/<p>        the next offset to read, a decimal string
//
// The offsets are written straight to ZooKeeper as the old consumer did
// (every auto.commit.interval.ms, default 60000, and on exit, when
// auto.commit.enable, default true) and read from there at start; a
// partition without one starts at the earliest offset with
// --from-beginning (auto.offset.reset=smallest), else at the end
// (largest). There is no ZooKeeper rebalance: the consumer takes every
// partition of the topic and refuses to start when another consumer of
// the group owns one.

// Old-consumer defaults (Kafka 0.8's ConsumerConfig).
const (
	oldAutoCommitInterval = 60 * time.Second // auto.commit.interval.ms
)

// oldConsumerProps are the old consumer's own keys, taken out before the
// properties reach the new-consumer mapping (which would warn them ignored).
var oldConsumerProps = []string{"auto.commit.enable", "offsets.storage", "dual.commit.enable"}

// zkConsumer is one old console consumer's ZooKeeper state: its
// registration, owned partitions and progress. Methods are safe for
// concurrent use; close ends it.
type zkConsumer struct {
	s          metastore.Store
	group      string
	topic      string
	id         string // consumer id: <group>_<host>-<ms>-<8 hex>
	fromStart  bool
	autoCommit bool
	interval   time.Duration
	stderr     io.Writer

	mu        sync.Mutex
	next      map[int32]int64 // next offset per partition, past the records printed
	committed map[int32]int64 // what ZooKeeper holds (as last read or written)
	stop      chan struct{}   // closed by close: ends the committer
	done      chan struct{}   // closed when the committer returned; nil = not started
	closed    bool
}

// newZKConsumer applies the old console consumer's start-up checks on s
// (which it then owns): --from-beginning with stored offsets and without
// --delete-consumer-offsets is refused with Kafka's message;
// --delete-consumer-offsets deletes /consumers/<group>; then the consumer
// registers under /consumers/<group>/ids. props are the merged consumer
// properties (auto.commit.enable, auto.commit.interval.ms, offsets.storage).
func newZKConsumer(s metastore.Store, o Options, group string, props map[string]string, stderr io.Writer) (*zkConsumer, error) {
	zc := &zkConsumer{s: s, group: group, topic: o.Topic, fromStart: o.FromBeginning, autoCommit: true, interval: oldAutoCommitInterval,
		stderr: stderr, next: map[int32]int64{}, committed: map[int32]int64{}, stop: make(chan struct{})}
	fail := func(err error) (*zkConsumer, error) {
		s.Close()
		return nil, err
	}
	if o.Topic == "" {
		return fail(clientutil.Usage("--include with --zookeeper and --group is not supported (the old consumer's wildcard subscription); use --topic, or --bootstrap-server"))
	}
	if !zkmeta.ValidConsumerGroup(group) {
		return fail(clientutil.Usage("group id %q cannot name a ZooKeeper node under /consumers", group))
	}
	if v, ok := props["offsets.storage"]; ok && strings.TrimSpace(v) != "zookeeper" {
		return fail(clientutil.Usage("offsets.storage=%s is not supported with --zookeeper: this consumer keeps its offsets in ZooKeeper; use --bootstrap-server for offsets in Kafka", v))
	}
	if v, ok := props["dual.commit.enable"]; ok && strings.TrimSpace(v) != "false" {
		return fail(clientutil.Usage("dual.commit.enable=%s is not supported: offsets are kept in ZooKeeper only", v))
	}
	for _, k := range []string{"auto.commit.enable", "enable.auto.commit"} {
		if v, ok := props[k]; ok {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return fail(clientutil.Usage("invalid value %s for configuration %s: expected true or false", v, k))
			}
			zc.autoCommit = b
			break
		}
	}
	if v, ok := props["auto.commit.interval.ms"]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 1 {
			return fail(clientutil.Usage("invalid value %s for configuration auto.commit.interval.ms: expected a positive number of milliseconds", v))
		}
		zc.interval = time.Duration(n) * time.Millisecond
	}
	if o.DeleteConsumerOffsets {
		if err := metastore.DeleteRecursive(s, zkmeta.ConsumerGroupPath(group)); err != nil {
			return fail(fmt.Errorf("deleting %s: %w", zkmeta.ConsumerGroupPath(group), err))
		}
	} else if o.FromBeginning {
		if ok, err := s.Exists(zkmeta.ConsumerOffsetsPath(group)); err != nil {
			return fail(err)
		} else if ok {
			return fail(clientutil.Usage("Found previous offset information for this group %s. Please use --delete-consumer-offsets to delete previous offsets metadata", group))
		}
	}
	zc.id = consumerID(group)
	if err := metastore.EnsurePath(s, zkmeta.ConsumerIDsPath(group)); err != nil {
		return fail(err)
	}
	if err := s.Create(zkmeta.ConsumerIDsPath(group)+"/"+zc.id, registration(o.Topic), true); err != nil {
		return fail(fmt.Errorf("registering consumer %s in ZooKeeper: %w", zc.id, err))
	}
	return zc, nil
}

// consumerID is the old consumer's id: <group>_<hostname>-<ms>-<8 hex>.
func consumerID(group string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s_%s-%d-%s", group, host, time.Now().UnixMilli(), hex.EncodeToString(b[:]))
}

// registration is the /consumers/<g>/ids/<id> data: one stream on the
// topic, the console consumer's whitelist subscription.
func registration(topic string) []byte {
	t, _ := json.Marshal(topic)
	return fmt.Appendf(nil, `{"version":1,"subscription":{%s:1},"pattern":"white_list","timestamp":"%d"}`, t, time.Now().UnixMilli())
}

// start finds the topic's partitions (waiting, bounded by ctx, until the
// topic exists), claims each in /consumers/<g>/owners, reads its offset
// and makes cl consume from there; then starts the periodic commit.
// ctx ending first: (false, nil), nothing consumed.
func (zc *zkConsumer) start(ctx context.Context, cl *kgo.Client) (bool, error) {
	n, err := topicPartitionCount(ctx, cl, zc.topic)
	if err != nil || n == 0 {
		return false, err
	}
	at := map[int32]kgo.Offset{}
	for p := int32(0); p < n; p++ {
		path := zkmeta.ConsumerOwnerPath(zc.group, zc.topic, p)
		if err := metastore.EnsurePath(zc.s, metastore.Parent(path)); err != nil {
			return false, err
		}
		if err := zc.s.Create(path, []byte(zc.id+"-0"), true); errors.Is(err, metastore.ErrNodeExists) {
			owner, _, _ := zc.s.Get(path)
			return false, fmt.Errorf("partition %s-%d of group %s is owned by %s: another consumer of this group is running, and this console consumer does not share partitions with it (no ZooKeeper rebalance); stop it or use another --group", zc.topic, p, zc.group, owner)
		} else if err != nil {
			return false, err
		}
		off, ok, err := zkmeta.ReadConsumerOffset(zc.s, zc.group, zc.topic, p)
		switch {
		case err != nil:
			return false, err
		case ok:
			at[p] = kgo.NewOffset().At(off)
			zc.committed[p] = off
		case zc.fromStart:
			at[p] = kgo.NewOffset().AtStart()
		default:
			at[p] = kgo.NewOffset().AtEnd()
		}
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{zc.topic: at})
	zc.mu.Lock()
	defer zc.mu.Unlock()
	if zc.autoCommit && !zc.closed {
		zc.done = make(chan struct{})
		go zc.commitEvery()
	}
	return true, nil
}

// topicPartitionCount asks the brokers for topic's partition count until
// it exists or ctx ends (0, nil).
func topicPartitionCount(ctx context.Context, cl *kgo.Client, topic string) (int32, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	for {
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			for _, t := range resp.Topics {
				if t.Topic == nil || *t.Topic != topic {
					continue
				}
				if t.ErrorCode == 0 && len(t.Partitions) > 0 {
					return int32(len(t.Partitions)), nil
				}
				if e := kerr.ErrorForCode(t.ErrorCode); e != nil && !kerr.IsRetriable(e) {
					return 0, fmt.Errorf("topic %s: %w", topic, e)
				}
			}
		}
		select { // the topic may be created meanwhile, as the old consumer waited for it
		case <-ctx.Done():
			return 0, nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// mark records that the record at offset of partition p was printed.
func (zc *zkConsumer) mark(p int32, offset int64) {
	zc.mu.Lock()
	zc.next[p] = offset + 1
	zc.mu.Unlock()
}

// commitEvery commits every interval until close.
func (zc *zkConsumer) commitEvery() {
	defer close(zc.done)
	t := time.NewTicker(zc.interval)
	defer t.Stop()
	for {
		select {
		case <-zc.stop:
			return
		case <-t.C:
			zc.commit()
		}
	}
}

// commit writes the partitions whose offset moved since the last write
// (the old consumer's checkpointedZkOffsets check); a failed write is
// warned about and retried at the next commit.
func (zc *zkConsumer) commit() {
	zc.mu.Lock()
	var ps []int32
	var offs []int64
	for p, off := range zc.next {
		if c, ok := zc.committed[p]; !ok || c != off {
			ps, offs = append(ps, p), append(offs, off)
		}
	}
	zc.mu.Unlock()
	for i, p := range ps {
		if err := zkmeta.WriteConsumerOffset(zc.s, zc.group, zc.topic, p, offs[i]); err != nil {
			fmt.Fprintf(zc.stderr, "WARN committing offset %d of %s-%d for group %s to ZooKeeper: %v\n", offs[i], zc.topic, p, zc.group, err)
			continue
		}
		zc.mu.Lock()
		zc.committed[p] = offs[i]
		zc.mu.Unlock()
	}
}

// close stops the periodic commit, commits once more (auto.commit.enable,
// as ZookeeperConsumerConnector.shutdown) and closes the ZooKeeper
// session, which removes the ids and owners registrations. Idempotent.
func (zc *zkConsumer) close() {
	zc.mu.Lock()
	if zc.closed {
		zc.mu.Unlock()
		return
	}
	zc.closed = true
	close(zc.stop)
	done := zc.done
	zc.mu.Unlock()
	if done != nil {
		<-done
	}
	if zc.autoCommit {
		zc.commit()
	}
	zc.s.Close()
}

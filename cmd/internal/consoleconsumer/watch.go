package consoleconsumer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// lockedWriter serialises writes to stderr: kgo hooks write from the
// client's goroutines while the tool writes from its own.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// connWatch is a kgo.HookBrokerConnect: it prints Kafka's NetworkClient
// warning once per broker that cannot be reached (not for a dial the
// client's own close canceled), and remembers whether any
// connection ever succeeded.
type connWatch struct {
	stderr io.Writer
	prefix string // "[Consumer clientId=…, groupId=…] "

	mu        sync.Mutex
	warned    map[string]bool
	connected bool
}

var _ kgo.HookBrokerConnect = (*connWatch)(nil)

func newConnWatch(stderr io.Writer, clientID, group string) *connWatch {
	p := "[Consumer clientId=" + clientID
	if group != "" {
		p += ", groupId=" + group
	}
	return &connWatch{stderr: stderr, prefix: p + "] ", warned: map[string]bool{}}
}

// OnBrokerConnect implements kgo.HookBrokerConnect.
func (c *connWatch) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		c.connected = true
		return
	}
	if errors.Is(err, context.Canceled) {
		// The client closing (after --max-messages, a signal) cancels a
		// dial in flight: the broker was never found unreachable.
		return
	}
	addr := net.JoinHostPort(meta.Host, fmt.Sprint(meta.Port))
	if c.warned[addr] {
		return
	}
	c.warned[addr] = true
	fmt.Fprintf(c.stderr, "WARN %sConnection to node %d (%s) could not be established. Broker may not be available.\n",
		c.prefix, kafkaNodeID(meta.NodeID), addr)
}

// everConnected reports whether any broker connection succeeded.
func (c *connWatch) everConnected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.connected
}

// kafkaNodeID renders kgo's ids for seed brokers (math.MinInt32 + index)
// as the Java client's bootstrap node ids (-1, -2, …).
func kafkaNodeID(id int32) int32 {
	if id < math.MinInt32/2 {
		return -1 - (id - math.MinInt32)
	}
	return id
}

// errNoConnection: no broker answered within --timeout-ms.
type errNoConnection struct {
	bootstrap string
	timeout   time.Duration
}

func (e *errNoConnection) Error() string {
	return fmt.Sprintf("Could not connect to any broker of %s within --timeout-ms %d", e.bootstrap, e.timeout.Milliseconds())
}

// checkTopic asks a broker for topic's metadata before consuming, as the
// Java consumer's first metadata fetch does, so that what it would log is
// said: an unknown topic is a warning (consumption goes on: the topic may
// be created), a --partition the topic does not have is an error. It
// retries until a broker answers or ctx ends; it returns ctx's error then.
func checkTopic(ctx context.Context, cl *kgo.Client, o Options, w *connWatch) error {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(o.Topic)
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = false
	for {
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			for _, t := range resp.Topics {
				if t.Topic == nil || *t.Topic != o.Topic {
					continue
				}
				switch {
				case errors.Is(kerr.ErrorForCode(t.ErrorCode), kerr.UnknownTopicOrPartition):
					fmt.Fprintf(w.stderr, "WARN %sError while fetching metadata: {%s=UNKNOWN_TOPIC_OR_PARTITION}\n", w.prefix, o.Topic)
				case t.ErrorCode == 0 && o.Partition >= int32(len(t.Partitions)):
					return fmt.Errorf("Partition %s-%d does not exist: topic %s has %d partitions", o.Topic, o.Partition, o.Topic, len(t.Partitions))
				}
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		select { // kgo already retried with backoff; pause before asking again
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

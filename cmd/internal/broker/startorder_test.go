package broker

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// registrationGate is a metadata store whose creation of one broker
// registration waits until release is closed, after reporting on
// registering: the test holds a starting broker just before it registers.
type registrationGate struct {
	metastore.Store
	path        string
	registering chan struct{}
	release     chan struct{}
}

func (g *registrationGate) Create(path string, data []byte, ephemeral bool) error {
	if path == g.path {
		close(g.registering)
		<-g.release
	}
	return g.Store.Create(path, data, ephemeral)
}

// TestListenersOpenBeforeRegistration: as Kafka's KafkaServer.startup, a
// broker binds its listeners before it registers in /brokers/ids, so the
// controller's first connection to a broker it sees register is never
// refused; what it sends then is answered once the broker has started
// (Kafka's startProcessingRequests comes last).
func TestListenersOpenBeforeRegistration(t *testing.T) {
	cfg, port := configOnFreePort(t, map[string]string{
		"broker.id":                    "1",
		"log.dirs":                     filepath.Join(t.TempDir(), "data"),
		"zookeeper.connect":            "memory", // cluster mode over the injected store
		"offsets.topic.num.partitions": "1",
	})
	gate := &registrationGate{Store: metastore.NewMemory().Open(), path: zkmeta.BrokerPath(1),
		registering: make(chan struct{}), release: make(chan struct{})}
	releaseOnce := sync.OnceFunc(func() { close(gate.release) })
	type started struct {
		b   *Broker
		err error
	}
	done := make(chan started, 1)
	go func() {
		b, err := Start(cfg, zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)), WithStore(gate))
		done <- started{b, err}
	}()
	t.Cleanup(func() { // whatever failed below, the broker starts and stops
		releaseOnce()
		if s := <-done; s.err == nil {
			if err := s.b.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		}
	})
	select {
	case <-gate.registering:
	case s := <-done:
		t.Fatalf("Start returned before registering: %v", s.err)
	case <-time.After(10 * time.Second):
		t.Fatal("the broker did not reach its registration")
	}

	// Held just before registering: a connection is accepted (by the
	// kernel, into the listener's backlog), and a request sent on it
	// waits for the broker to start.
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial before registration: %v (the listener must be bound)", err)
	}
	nc.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	answered := make(chan error, 1)
	go func() {
		_, err := cl.SeedBrokers()[0].Request(ctx, kmsg.NewPtrApiVersionsRequest()) // this broker, no retries
		answered <- err
	}()

	releaseOnce()
	s := <-done
	done <- s // for the cleanup
	if s.err != nil {
		t.Fatalf("Start after registration: %v", s.err)
	}
	if err := <-answered; err != nil {
		t.Fatalf("ApiVersions sent before registration: %v", err)
	}
	// Registered now, with the port it was bound to before.
	data, _, err := gate.Get(zkmeta.BrokerPath(1))
	if err != nil {
		t.Fatalf("registration: %v", err)
	}
	info, err := zkmeta.DecodeBrokerInfo(1, data)
	if err != nil || len(info.Endpoints) == 0 || info.Endpoints[0].Port != int32(port) {
		t.Fatalf("registration %+v (%v), want port %d", info, err, port)
	}
}

package broker

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
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
// refused. Requests arriving before the controller and the metadata are
// ready get Kafka's retriable errors.
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

	cl, err := kgo.NewClient(kgo.SeedBrokers(fmt.Sprintf("127.0.0.1:%d", port)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seed := cl.SeedBrokers()[0] // this broker, no retries
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ask := func(req kmsg.Request) kmsg.Response {
		t.Helper()
		resp, err := seed.Request(ctx, req)
		if err != nil {
			t.Fatalf("%T before registration: %v (the listener must answer)", req, err)
		}
		return resp
	}
	retriable := func(what string, code int16, want *kerr.Error) {
		t.Helper()
		err := kerr.ErrorForCode(code)
		if want != nil && err != want {
			t.Errorf("%s: %v, want %v", what, err, want)
		}
		if !kerr.IsRetriable(err) {
			t.Errorf("%s: %v is not retriable", what, err)
		}
	}

	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("t")
	md.Topics = append(md.Topics, mt)
	md.AllowAutoTopicCreation = true
	mr := ask(md).(*kmsg.MetadataResponse)
	if len(mr.Brokers) != 0 || len(mr.Topics) != 1 {
		t.Fatalf("metadata before registration: brokers %v, topics %d; want none, 1", mr.Brokers, len(mr.Topics))
	}
	retriable("Metadata topic t", mr.Topics[0].ErrorCode, nil)

	ct := kmsg.NewPtrCreateTopicsRequest()
	ctt := kmsg.NewCreateTopicsRequestTopic()
	ctt.Topic, ctt.NumPartitions, ctt.ReplicationFactor = "t", 1, 1
	ct.Topics = append(ct.Topics, ctt)
	ct.TimeoutMillis = 1000
	cr := ask(ct).(*kmsg.CreateTopicsResponse)
	retriable("CreateTopics t", cr.Topics[0].ErrorCode, kerr.NotController)

	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey, fc.CoordinatorKeys = "g", []string{"g"} // before and since v4
	fr := ask(fc).(*kmsg.FindCoordinatorResponse)
	code := fr.ErrorCode
	if len(fr.Coordinators) == 1 {
		code = fr.Coordinators[0].ErrorCode
	}
	retriable("FindCoordinator g", code, kerr.CoordinatorNotAvailable)

	lo := kmsg.NewPtrListOffsetsRequest()
	lot := kmsg.NewListOffsetsRequestTopic()
	lot.Topic = "t"
	lop := kmsg.NewListOffsetsRequestTopicPartition()
	lop.Timestamp = -1
	lot.Partitions = append(lot.Partitions, lop)
	lo.Topics = append(lo.Topics, lot)
	lor := ask(lo).(*kmsg.ListOffsetsResponse)
	retriable("ListOffsets t-0", lor.Topics[0].Partitions[0].ErrorCode, nil)

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = "g", "m", 1
	retriable("Heartbeat g", ask(hb).(*kmsg.HeartbeatResponse).ErrorCode, kerr.NotCoordinator)

	releaseOnce()
	s := <-done
	done <- s // for the cleanup
	if s.err != nil {
		t.Fatalf("Start after registration: %v", s.err)
	}
	// Registered now, with the port it listened on before.
	data, _, err := gate.Get(zkmeta.BrokerPath(1))
	if err != nil {
		t.Fatalf("registration: %v", err)
	}
	info, err := zkmeta.DecodeBrokerInfo(1, data)
	if err != nil || len(info.Endpoints) == 0 || info.Endpoints[0].Port != int32(port) {
		t.Fatalf("registration %+v (%v), want port %d", info, err, port)
	}
}

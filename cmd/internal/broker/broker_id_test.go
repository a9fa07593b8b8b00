package broker

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/storage/checkpoint"
)

// broker.id=-1 on the embedded single node: an id is generated from the
// embedded store's /brokers/seqid (1001, above reserved.broker.max.id),
// written to meta.properties, kept by a restart; a configured id that
// differs from the stored one is refused with Kafka's message.
func TestBrokerIDGeneratedEmbedded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cfg, _ := configOnFreePort(t, map[string]string{"log.dirs": dir, "broker.id": "-1", "reserved.broker.max.id": "1000"})
	nodeID := func(cl *kgo.Client) int32 {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
		if err != nil || len(resp.Brokers) != 1 {
			t.Fatalf("metadata: %v %+v", err, resp)
		}
		return resp.Brokers[0].NodeID
	}
	for range 2 { // the second start reads the id back from meta.properties
		withBroker(t, cfg, func(cl *kgo.Client) {
			if id := nodeID(cl); id != 1001 {
				t.Fatalf("node id %d; want 1001", id)
			}
		})
		mp, err := checkpoint.ReadMetaProperties(dir)
		if err != nil || mp.BrokerID != 1001 {
			t.Fatalf("meta.properties: %+v %v", mp, err)
		}
		cfg.BrokerID = -1 // Start set it; the next start asks again
	}
	other, _ := configOnFreePort(t, map[string]string{"log.dirs": dir, "broker.id": "7"})
	b, err := Start(other, zap.NewNop())
	if err == nil {
		b.Close()
		t.Fatal("started as broker 7 on the log dirs of broker 1001")
	}
	if want := "Stored node id 1001 doesn't match previous node id 7 in " + filepath.Join(dir, "meta.properties"); !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q; want %q", err, want)
	}
}

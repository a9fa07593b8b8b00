package cluster

// Features in ZooKeeper mode and the fidelity of KIP-590 forwarding
// (issue 15 point 5): /feature as a Kafka 3.9 controller writes it and
// ApiVersions' features from it on every broker; a forwarded request at
// the client's version; the controller mutation quota charged once;
// auto-creation through a broker that is not the controller.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"gregor/replication/zkmeta"
	"gregor/test/harness"
)

// kafkaFeatureZNode is what a Kafka 3.9 controller writes to /feature
// when it finds none (a broker that supports no feature).
const kafkaFeatureZNode = `{"features":{},"version":2,"status":1}`

// apiVersionsFeatures asks broker addr for ApiVersions v3 and returns its
// KIP-584 fields.
func apiVersionsFeatures(t *testing.T, addr string) *kmsg.ApiVersionsResponse {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "gregor-test", "1"
	kr, err := sendTo(t, addr, req, 10*time.Second)
	if err != nil {
		t.Fatalf("ApiVersions to %s: %v", addr, err)
	}
	return kr.(*kmsg.ApiVersionsResponse)
}

// waitEpochs waits until every running broker answers ApiVersions with
// FinalizedFeaturesEpoch want and no features.
func (c *cluster) waitEpochs(want int64) {
	c.t.Helper()
	for id, b := range c.brokers {
		if !b.Running() {
			continue
		}
		c.waitFor("broker "+b.Addr()+"'s features epoch", 20*time.Second, func() (bool, string) {
			r := apiVersionsFeatures(c.t, b.Addr())
			ok := r.FinalizedFeaturesEpoch == want && len(r.FinalizedFeatures) == 0 && len(r.SupportedFeatures) == 0
			return ok, fmt.Sprintf("broker %d: epoch %d, finalized %+v, supported %+v", id, r.FinalizedFeaturesEpoch, r.FinalizedFeatures, r.SupportedFeatures)
		})
	}
}

// TestFeaturesInZooKeeperMode: the controller creates /feature as Kafka
// 3.9 does (zookeeper-shell shows Kafka's JSON); every broker's
// ApiVersions answers no supported and no finalized features with the
// znode's version as the epoch, -1 once it is disabled; a new controller
// enables it again (version 2); UpdateFeatures is refused with Kafka's
// message through any broker and writes nothing.
func TestFeaturesInZooKeeperMode(t *testing.T) {
	c := startCluster(t, 3, nil, nil)
	c.waitFor("/feature", 30*time.Second, func() (bool, string) {
		data, v, err := c.store.Get(zkmeta.FeaturePath)
		return err == nil && string(data) == kafkaFeatureZNode && v == 0, string(data)
	})
	shctx, shcancel := context.WithTimeout(context.Background(), time.Minute)
	defer shcancel()
	sh := exec.CommandContext(shctx, filepath.Join(harness.RepoRoot(), "bin", "zookeeper-shell.sh"), c.connect, "get", zkmeta.FeaturePath)
	sh.Env = append(os.Environ(), "GREGOR_BIN="+harness.Binary(t))
	if out, err := sh.Output(); err != nil || !strings.Contains(string(out), "\n"+kafkaFeatureZNode+"\n") {
		t.Fatalf("zookeeper-shell get /feature: %v\n%s", err, out)
	}
	c.waitEpochs(0)

	// UpdateFeatures: refused, through the controller (kadm routes it
	// there) and through another broker alike; /feature unchanged.
	adm := c.admin()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := adm.UpdateFeatures(ctx, false, kadm.FeatureUpdate{Feature: "transaction.version", MaxVersionLevel: 2, UpgradeType: 1})
	if err != nil || len(res) != 1 || !errors.Is(res["transaction.version"].Err, kerr.InvalidRequest) {
		t.Fatalf("UpdateFeatures: %v %+v", err, res)
	}
	uf := kmsg.NewPtrUpdateFeaturesRequest()
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = "transaction.version", 2, 1
	uf.FeatureUpdates = append(uf.FeatureUpdates, u)
	kr, err := sendTo(t, c.brokers[c.nonController()].Addr(), uf, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ur := kr.(*kmsg.UpdateFeaturesResponse)
	if ur.ErrorCode != 0 || len(ur.Results) != 1 || ur.Results[0].ErrorCode != kerr.InvalidRequest.Code ||
		strp(ur.Results[0].ErrorMessage) != "Could not apply finalized feature update because the provided feature is not supported." {
		t.Fatalf("UpdateFeatures through a non-controller: %s %+v", codeName(ur.ErrorCode), ur.Results)
	}
	if data, v, _ := c.store.Get(zkmeta.FeaturePath); string(data) != kafkaFeatureZNode || v != 0 {
		t.Fatalf("/feature after the refused updates: %s v%d", data, v)
	}

	// Disabled by hand: every broker forgets the features (epoch -1).
	if _, err := c.store.Set(zkmeta.FeaturePath, []byte(`{"features":{},"version":2,"status":0}`), 0); err != nil {
		t.Fatal(err)
	}
	c.waitEpochs(-1)

	// A new controller enables it again: version 2, epoch 2 everywhere.
	old := c.controllerID()
	c.brokers[old].Stop()
	c.waitFor("a new controller", 60*time.Second, func() (bool, string) {
		id := c.controllerID()
		return id > 0 && id != old, fmt.Sprint(id)
	})
	c.waitFor("/feature enabled by the new controller", 30*time.Second, func() (bool, string) {
		data, v, err := c.store.Get(zkmeta.FeaturePath)
		return err == nil && string(data) == kafkaFeatureZNode && v == 2, string(data)
	})
	c.waitEpochs(2)
}

// requestsAt is the controller-side count of key's requests at version
// (kafka_network_requestmetrics_requests_total{request,version}).
func (c *cluster) requestsAt(id int32, request, version string) float64 {
	c.t.Helper()
	v, _, err := harness.MetricValue(http.DefaultClient, c.admins[id], "kafka_network_requestmetrics_requests_total",
		map[string]string{"request": request, "version": version})
	if err != nil {
		c.t.Fatal(err)
	}
	return v
}

// createVia sends one CreateTopics of a topic with partitions (replication
// factor 1) to the broker at addr alone, as client.id clientID, with opts.
func createVia(t *testing.T, addr, clientID, topic string, partitions int32, opts ...kgo.Opt) kmsg.CreateTopicsResponseTopic {
	t.Helper()
	kr, err := sendTo(t, addr, createTopicsReq(30000, false, partitions, 1, topic), 30*time.Second, append([]kgo.Opt{kgo.ClientID(clientID)}, opts...)...)
	if err != nil {
		t.Fatalf("create %s through %s: %v", topic, addr, err)
	}
	return kr.(*kmsg.CreateTopicsResponse).Topics[0]
}

// TestForwardingFidelity: through a broker that is not the controller,
// (1) an old client's CreateTopics reaches the controller at the
// client's version (v0 from a 0.10.1 client, v2 from a 1.0 one), not the
// newest; (2) a client's controller_mutation_rate throttles it exactly as
// on the controller, and it is charged once: another client behind the
// same forwarding broker is not throttled by the first one's mutations;
// (3) a producer that knows only that broker auto-creates its topic.
func TestForwardingFidelity(t *testing.T) {
	c := startCluster(t, 3, nil, nil)
	n := c.nonController()
	ctrl := c.controllerID()
	via, direct := c.brokers[n].Addr(), c.brokers[ctrl].Addr()
	t.Logf("controller %d, asking broker %d", ctrl, n)

	// (1) The client's version reaches the controller.
	for _, tc := range []struct {
		name    string
		version string
		max     *kversion.Versions
	}{{"old-v0", "0", kversion.V0_10_1()}, {"old-v2", "2", kversion.V1_0_0()}} {
		before := max(c.requestsAt(ctrl, "CreateTopics", tc.version), 0)
		if rt := createVia(t, via, "old-client", tc.name, 1, kgo.MaxVersions(tc.max)); rt.ErrorCode != 0 {
			t.Fatalf("CreateTopics v%s through broker %d: %s %s", tc.version, n, codeName(rt.ErrorCode), strp(rt.ErrorMessage))
		}
		c.waitFor("the controller to count CreateTopics v"+tc.version, 10*time.Second, func() (bool, string) {
			got := c.requestsAt(ctrl, "CreateTopics", tc.version)
			return got == before+1, fmt.Sprint(got)
		})
		if _, ok := c.partitionState(tc.name, 0); !ok {
			t.Fatalf("topic %s has no partition state", tc.name)
		}
	}

	// (2) controller_mutation_rate=1 for every client id (a bucket of 11
	// partitions). Each broker applies it when its /config/changes watch
	// fires: probe until a second creation is refused on each.
	adm := c.admin()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "client-id"}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: "controller_mutation_rate", Value: 1}},
	}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int32{n, ctrl} {
		addr, probe := c.brokers[id].Addr(), 0
		c.waitFor(fmt.Sprintf("the mutation quota in force on broker %d", id), 30*time.Second, func() (bool, string) {
			probe++
			id := fmt.Sprintf("probe-%d-%d", id, probe)
			createVia(t, addr, id, id+"-a", 20)
			rt := createVia(t, addr, id, id+"-b", 1)
			return rt.ErrorCode == kerr.ThrottlingQuotaExceeded.Code, codeName(rt.ErrorCode)
		})
	}
	type outcome struct {
		first, second int16
		throttle      int32
	}
	run := func(addr, clientID string) outcome {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID(clientID))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		send := func(topic string, parts int32) *kmsg.CreateTopicsResponse {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			kr, err := cl.SeedBrokers()[0].Request(ctx, createTopicsReq(30000, false, parts, 1, topic))
			if err != nil {
				t.Fatal(err)
			}
			return kr.(*kmsg.CreateTopicsResponse)
		}
		a := send(clientID+"-1", 20)
		b := send(clientID+"-2", 1)
		return outcome{a.Topics[0].ErrorCode, b.Topics[0].ErrorCode, b.ThrottleMillis}
	}
	fwd := run(via, "qa")
	other := createVia(t, via, "qb", "qb-1", 1) // its own bucket: not charged for qa's partitions
	onCtl := run(direct, "qc")
	if fwd.first != 0 || fwd.second != kerr.ThrottlingQuotaExceeded.Code || onCtl.first != 0 || onCtl.second != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("through broker %d: %s then %s; on the controller: %s then %s; want NONE then THROTTLING_QUOTA_EXCEEDED on both",
			n, codeName(fwd.first), codeName(fwd.second), codeName(onCtl.first), codeName(onCtl.second))
	}
	// 20 partitions from a bucket of 11 at 1/s: about 9 s to pay back,
	// on either broker.
	for _, o := range []outcome{fwd, onCtl} {
		if o.throttle < 6000 || o.throttle > 9500 {
			t.Fatalf("throttle %d ms (forwarded %d, on the controller %d); want about 9000 on both", o.throttle, fwd.throttle, onCtl.throttle)
		}
	}
	if d := fwd.throttle - onCtl.throttle; d < -2500 || d > 2500 {
		t.Fatalf("throttle through broker %d %d ms, on the controller %d ms", n, fwd.throttle, onCtl.throttle)
	}
	if other.ErrorCode != 0 {
		t.Fatalf("another client through broker %d: %s %s (charged for the first client's mutations)", n, codeName(other.ErrorCode), strp(other.ErrorMessage))
	}
	if _, _, err := c.store.Get(zkmeta.TopicPath("qa-2")); err == nil {
		t.Fatal("the throttled topic qa-2 was created")
	}

	// (3) Auto-creation through a broker that is not the controller.
	const auto = "auto-through-follower"
	pc, err := kgo.NewClient(kgo.SeedBrokers(via), kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic(auto))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	pctx, pcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer pcancel()
	if err := pc.ProduceSync(pctx, &kgo.Record{Value: []byte("hello")}).FirstErr(); err != nil {
		t.Fatalf("produce to %s through broker %d alone: %v", auto, n, err)
	}
	data, _, err := c.store.Get(zkmeta.TopicPath(auto))
	if err != nil {
		t.Fatalf("/brokers/topics/%s: %v", auto, err)
	}
	a, err := zkmeta.DecodeTopicAssignment(auto, data)
	if err != nil || len(a.Partitions) != 3 || len(a.Partitions[0]) != 3 {
		t.Fatalf("auto-created assignment %+v %v; want num.partitions 3, default.replication.factor 3", a.Partitions, err)
	}
}

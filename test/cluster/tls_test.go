package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/replication/zkmeta"
	"gregor/test/harness"
	"gregor/test/zkharness"
	"gregor/wire/security/keystore/keystoretest"
)

// TestInterBrokerSSL: three brokers on ZooKeeper whose inter-broker
// listener is SSL with client certificates required
// (inter.broker.listener.name=SSL, ssl.client.auth=required); PLAINTEXT
// is for clients only. Each broker advertises its PLAINTEXT listener at a
// port nothing listens on, which only the test's clients map to the real
// one (their dialer): so every broker-to-broker connection — controller
// channel, follower fetches, controlled shutdown — can only have gone to
// the SSL port. acks=all produce (which needs the followers' fetches),
// consuming back, and a controlled shutdown all work; /brokers/ids/<id>
// carries both endpoints and listener_security_protocol_map.
func TestInterBrokerSSL(t *testing.T) {
	ca := keystoretest.NewCA(t, "cluster-ca")
	dir := t.TempDir()
	trust := ca.WritePKCS12Trust(t, dir, "trust.p12", "trust-pass")
	hidden := newHiddenPlaintext()
	each := func(id int32) map[string]string {
		ks := ca.Server(t, fmt.Sprintf("broker-%d", id)).WritePKCS12(t, dir, fmt.Sprintf("broker-%d.p12", id), "ks-pass")
		ssl := harness.FreePort(t)
		return map[string]string{
			"listeners":                  fmt.Sprintf("SSL://127.0.0.1:%d", ssl),
			"advertised.listeners":       fmt.Sprintf("%s,SSL://127.0.0.1:%d", hidden.advertise(t, id), ssl),
			"inter.broker.listener.name": "SSL",
			"ssl.keystore.type":          "PKCS12",
			"ssl.keystore.location":      ks,
			"ssl.keystore.password":      "ks-pass",
			"ssl.truststore.type":        "PKCS12",
			"ssl.truststore.location":    trust,
			"ssl.truststore.password":    "trust-pass",
			"ssl.client.auth":            "required",
			// The brokers' own clients verify the peer's host name
			// (127.0.0.1 is in every broker certificate).
			"ssl.endpoint.identification.algorithm": "https",
		}
	}
	c := startClusterEach(t, zkharness.Options{}, 3, nil, nil, each)
	hidden.install(c)

	// The registration, as Kafka writes it.
	for id := range c.brokers {
		data, _, err := c.store.Get(zkmeta.BrokerPath(id))
		if err != nil {
			t.Fatal(err)
		}
		var j struct {
			Host      *string           `json:"host"`
			Port      int32             `json:"port"`
			Endpoints []string          `json:"endpoints"`
			Map       map[string]string `json:"listener_security_protocol_map"`
		}
		if err := json.Unmarshal(data, &j); err != nil {
			t.Fatal(err)
		}
		if len(j.Endpoints) != 2 || !strings.HasPrefix(j.Endpoints[0], "PLAINTEXT://127.0.0.1:") || !strings.HasPrefix(j.Endpoints[1], "SSL://127.0.0.1:") ||
			j.Map["PLAINTEXT"] != "PLAINTEXT" || j.Map["SSL"] != "SSL" || len(j.Map) != 2 || j.Port != int32(hidden.bogus[id]) {
			t.Errorf("/brokers/ids/%d = %s", id, data)
		}
	}

	const topic = "ssl-replicated"
	const parts = 3
	c.createTopic(topic, parts, 3, map[string]*string{"min.insync.replicas": ptr("3")})
	cl := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 300
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % parts), Value: []byte(strconv.Itoa(i))})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("acks=all with min.insync.replicas=3 (every follower fetching over SSL): %v", err)
	}
	seen := map[string]bool{}
	for len(seen) < n && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
	if len(seen) != n {
		t.Fatalf("consumed %d of %d records", len(seen), n)
	}
	// Every follower holds every record: the ISR is full and each
	// replica's end offset matches.
	for p := int32(0); p < parts; p++ {
		s, _ := c.partitionState(topic, p)
		if len(s.ISR) != 3 {
			t.Errorf("p%d ISR %v", p, s.ISR)
		}
	}

	for id, b := range c.brokers {
		if strings.Contains(b.Log(), "TLS handshake failed") {
			t.Errorf("broker %d refused a TLS handshake:\n%s", id, tail(b.Log(), 40))
		}
	}

	// Controlled shutdown of a broker other than the controller: its
	// ControlledShutdown goes to the controller's SSL endpoint.
	ctrl := c.controllerID()
	var victim int32 = -1
	for id := range c.brokers {
		if id != ctrl && (victim < 0 || id < victim) {
			victim = id
		}
	}
	vb := c.brokers[victim]
	if !vb.Signal(syscall.SIGTERM) {
		t.Fatalf("broker %d did not exit after SIGTERM", victim)
	}
	log := vb.Log()
	if !strings.Contains(log, "controlled shutdown succeeded") || strings.Contains(log, "Proceeding to do an unclean shutdown") || vb.ExitCode() != 0 {
		t.Errorf("broker %d: exit %d, log:\n%s", victim, vb.ExitCode(), tail(log, 40))
	}
	for p := int32(0); p < parts; p++ {
		if s, _ := c.partitionState(topic, p); s.Leader == victim || contains(s.ISR, victim) {
			t.Errorf("p%d after the controlled shutdown of %d: %+v", p, victim, s)
		}
	}
}

func ptr(s string) *string { return &s }

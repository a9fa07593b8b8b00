package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"gregor/test/harness"
	"gregor/test/zkharness"
	"gregor/wire/security/keystore/keystoretest"
)

// TestSASLSSLWithACLs: three brokers on ZooKeeper, each with two SASL_SSL
// listeners of custom names — INTERNAL (inter-broker: PLAIN with the
// broker's own username/password from its JAAS entry) and EXTERNAL
// (clients: SCRAM-SHA-512 from /config/users and PLAIN) — and the ACL
// authorizer. Their PLAINTEXT listeners are advertised at unreachable
// ports (hiddenPlaintext), so replication and the controller channel can
// only go over INTERNAL, authenticated as User:broker (a super user).
// On EXTERNAL, alice (SCRAM) has --producer/--consumer ACLs made with
// kafka-acls: her acks=all produce (min.insync.replicas=3, so both
// followers must fetch over SASL_SSL) and her group consume work, with
// franz-go and with kcat; bob (PLAIN, no ACL) gets
// TOPIC_AUTHORIZATION_FAILED and does not see the topic.
func TestSASLSSLWithACLs(t *testing.T) {
	ca := keystoretest.NewCA(t, "sasl-ssl-ca")
	dir := t.TempDir()
	trust := ca.WritePKCS12Trust(t, dir, "trust.p12", "trust-pass")
	hidden := newHiddenPlaintext()
	external := map[int32]string{}
	c := startClusterEach(t, zkharness.Options{}, 3, map[string]string{
		"listener.security.protocol.map":                 "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_SSL,EXTERNAL:SASL_SSL",
		"inter.broker.listener.name":                     "INTERNAL",
		"sasl.mechanism.inter.broker.protocol":           "PLAIN",
		"ssl.truststore.type":                            "PKCS12",
		"ssl.truststore.location":                        trust,
		"ssl.truststore.password":                        "trust-pass",
		"ssl.endpoint.identification.algorithm":          "https",
		"listener.name.internal.sasl.enabled.mechanisms": "PLAIN",
		"listener.name.internal.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required ` +
			`username="broker" password="broker-secret" user_broker="broker-secret";`,
		"listener.name.external.sasl.enabled.mechanisms": "SCRAM-SHA-512,PLAIN",
		"listener.name.external.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required ` +
			`user_bob="bob-secret";`,
		"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
		// User:ANONYMOUS is the test's own door (the harness's PLAINTEXT
		// listener, reached only through hiddenPlaintext's dialer).
		"super.users": "User:broker;User:ANONYMOUS",
	}, nil, func(id int32) map[string]string {
		ks := ca.Server(t, fmt.Sprintf("broker-%d", id)).WritePKCS12(t, dir, fmt.Sprintf("broker-%d.p12", id), "ks-pass")
		internal := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
		external[id] = fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
		return map[string]string{
			"listeners":             "INTERNAL://" + internal + ",EXTERNAL://" + external[id],
			"advertised.listeners":  hidden.advertise(t, id) + ",INTERNAL://" + internal + ",EXTERNAL://" + external[id],
			"ssl.keystore.type":     "PKCS12",
			"ssl.keystore.location": ks,
			"ssl.keystore.password": "ks-pass",
		}
	})
	hidden.install(c)
	var ext []string
	for id := int32(1); id <= 3; id++ {
		ext = append(ext, external[id])
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(ca.CertPEM()))
	tlsOpt := kgo.DialTLSConfig(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})

	configsTool(t, "--zookeeper", c.connect, "--entity-type", "users", "--entity-name", "alice", "--alter",
		"--add-config", "SCRAM-SHA-512=[iterations=4096,password=alice-secret]")
	alice := scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()
	bob := plain.Auth{User: "bob", Pass: "bob-secret"}.AsMechanism()
	harness.WaitSASL(t, "alice (SCRAM-SHA-512 over SASL_SSL)", ext, alice, true, tlsOpt)

	const topic, group, parts = "sasl-ssl-acl", "alice-group", 3
	c.createTopic(topic, parts, 3, map[string]*string{"min.insync.replicas": ptr("3")})
	aclsOut := gregorTool(t, "acls", "--bootstrap-server", c.brokers[1].Addr(), "--add", "--allow-principal", "User:alice",
		"--producer", "--consumer", "--topic", topic, "--group", group)
	if !strings.Contains(aclsOut, "User:alice") {
		t.Fatalf("kafka-acls --add printed:\n%s", aclsOut)
	}

	saslClient := func(m sasl.Mechanism, opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(ext...), tlsOpt, kgo.SASL(m)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 300
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % parts), Value: []byte(strconv.Itoa(i))})
	}
	// The ACLs reach each broker from the change notification: retry the
	// authorization error until both have them, bounded.
	var err error
	for deadline := time.Now().Add(20 * time.Second); ; {
		err = saslClient(alice, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequestRetries(0)).
			ProduceSync(ctx, recs...).FirstErr()
		if err == nil || !errors.Is(err, kerr.TopicAuthorizationFailed) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("alice's acks=all produce over SASL_SSL (the follower fetching over INTERNAL SASL_SSL): %v", err)
	}
	consumer := saslClient(alice, kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]bool{}
	for len(seen) < n && ctx.Err() == nil {
		consumer.PollFetches(ctx).EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
	if len(seen) != n {
		t.Fatalf("alice consumed %d of %d records in group %s", len(seen), n, group)
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("alice's commit in group %s: %v", group, err)
	}
	for p := int32(0); p < parts; p++ {
		if s, _ := c.partitionState(topic, p); len(s.ISR) != 3 {
			t.Errorf("p%d ISR %v: a follower is not fetching over INTERNAL", p, s.ISR)
		}
	}

	// bob authenticates (PLAIN) but has no ACL: refused, and the topic is
	// hidden from his metadata.
	err = saslClient(bob, kgo.RequestRetries(0)).ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("bob")}).FirstErr()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("bob's produce: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	_, hw := c.offsets(topic)
	if hw[0]+hw[1]+hw[2] != n {
		t.Fatalf("after bob's refused produce the topic's high watermarks are %v, want %d records in all", hw, n)
	}

	// kcat (librdkafka) as alice: SCRAM-SHA-512 over SASL_SSL with the CA.
	if _, err := exec.LookPath("kcat"); err == nil {
		caFile := ca.WritePEMTrust(t, dir, "ca.pem")
		kctx, kcancel := context.WithTimeout(ctx, 30*time.Second)
		defer kcancel()
		out, err := exec.CommandContext(kctx, "kcat", "-C", "-b", ext[0], "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q",
			"-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=SCRAM-SHA-512",
			"-X", "sasl.username=alice", "-X", "sasl.password=alice-secret", "-X", "ssl.ca.location="+caFile).CombinedOutput()
		if err != nil || len(strings.Fields(string(out))) != n/parts {
			t.Fatalf("kcat as alice over SASL_SSL: %v, %d records:\n%s", err, len(strings.Fields(string(out))), out)
		}
	} else {
		t.Log("kcat not installed: its SASL_SSL read skipped")
	}

	for id, b := range c.brokers {
		if log := b.Log(); strings.Contains(log, "failed SASL") {
			t.Errorf("broker %d refused a SASL authentication:\n%s", id, tail(log, 40))
		}
	}
}

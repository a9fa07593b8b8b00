package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
	"gregor/wire/security/keystore/keystoretest"
)

// tlsBroker is one broker process with a PLAINTEXT listener and three SSL
// listeners, each with its keystore in another format: SSL (PKCS12, under
// listener.name.ssl.), JKS (a JKS keystore and ssl.client.auth=required, under
// listener.name.jks.), PEM (the certificate chain and key inline, KIP-651,
// under listener.name.pem.).
type tlsBroker struct {
	*harness.Broker
	ca                *keystoretest.CA
	dir               string
	caFile            string // the CA certificate, PEM
	certFile, keyFile string // a client certificate and its key, PEM (CN=kcat)
	ports             map[string]int
}

func (b *tlsBroker) addr(listener string) string {
	return fmt.Sprintf("127.0.0.1:%d", b.ports[listener])
}

func startTLSBroker(t *testing.T) *tlsBroker {
	t.Helper()
	dir := t.TempDir()
	ca := keystoretest.NewCA(t, "gregor-test-ca")
	srv := ca.Server(t, "broker-0")
	cli := ca.Client(t, pkix.Name{CommonName: "kcat", Organization: []string{"Gregor tests"}})
	b := &tlsBroker{ca: ca, dir: dir, ports: map[string]int{}}
	for _, l := range []string{"SSL", "JKS", "PEM"} {
		b.ports[l] = harness.FreePort(t)
	}
	b.caFile = ca.WritePEMTrust(t, dir, "ca.pem")
	b.certFile, b.keyFile = cli.WriteCertAndKey(t, dir, "client")
	// Inline PEM in a properties file: newlines written as \n escapes.
	inline := func(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", `\n`) }
	props := map[string]string{
		"listeners":                      fmt.Sprintf("SSL://127.0.0.1:%d,JKS://127.0.0.1:%d,PEM://127.0.0.1:%d", b.ports["SSL"], b.ports["JKS"], b.ports["PEM"]),
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,JKS:SSL,PEM:SSL",
		// Shared by every listener that does not override it.
		"ssl.enabled.protocols": "TLSv1.2,TLSv1.3",

		"listener.name.ssl.ssl.keystore.type":       "PKCS12",
		"listener.name.ssl.ssl.keystore.location":   srv.WritePKCS12(t, dir, "broker.p12", "p12-pass"),
		"listener.name.ssl.ssl.keystore.password":   "p12-pass",
		"listener.name.ssl.ssl.truststore.type":     "PKCS12",
		"listener.name.ssl.ssl.truststore.location": ca.WritePKCS12Trust(t, dir, "trust.p12", "trust-pass"),
		"listener.name.ssl.ssl.truststore.password": "trust-pass",

		"listener.name.jks.ssl.keystore.type":       "JKS",
		"listener.name.jks.ssl.keystore.location":   srv.WriteJKS(t, dir, "broker.jks", "jks-pass", "key-pass"),
		"listener.name.jks.ssl.keystore.password":   "jks-pass",
		"listener.name.jks.ssl.key.password":        "key-pass",
		"listener.name.jks.ssl.truststore.type":     "JKS",
		"listener.name.jks.ssl.truststore.location": ca.WriteJKSTrust(t, dir, "trust.jks", "jks-trust"),
		"listener.name.jks.ssl.truststore.password": "jks-trust",
		"listener.name.jks.ssl.client.auth":         "required",

		"listener.name.pem.ssl.keystore.type":              "PEM",
		"listener.name.pem.ssl.keystore.certificate.chain": inline(srv.CertPEM()),
		"listener.name.pem.ssl.keystore.key":               inline(srv.KeyPEM()),
		"listener.name.pem.ssl.truststore.type":            "PEM",
		"listener.name.pem.ssl.truststore.certificates":    inline(ca.CertPEM()),
	}
	b.Broker = harness.StartBroker(t, props)
	return b
}

func (b *tlsBroker) tlsConfig(withCert bool) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(b.ca.Cert)
	c := &tls.Config{RootCAs: pool}
	if withCert {
		cert, err := tls.LoadX509KeyPair(b.certFile, b.keyFile)
		if err != nil {
			panic(err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c
}

// franz-go over each SSL listener: produce, consume (the fetch goes
// through the broker's TLS copy path) and Metadata, which advertises the
// listener the client came in on.
func TestTLSListenersFranzGo(t *testing.T) {
	b := startTLSBroker(t)
	createTopic(t, b.Broker, "tls", 1, nil)
	for _, l := range []string{"SSL", "JKS", "PEM"} {
		t.Run(l, func(t *testing.T) {
			cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr(l)), kgo.DialTLSConfig(b.tlsConfig(l == "JKS")),
				kgo.ConsumeTopics("tls"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			big := strings.Repeat(l, 100000) // > one TLS record, > one pread chunk
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "tls", Key: []byte(l), Value: []byte(big)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			found := false
			for !found && ctx.Err() == nil {
				fs := cl.PollFetches(ctx)
				if err := fs.Err(); err != nil && ctx.Err() == nil {
					t.Fatal(err)
				}
				fs.EachRecord(func(r *kgo.Record) {
					if string(r.Key) == l {
						if string(r.Value) != big {
							t.Errorf("record of %d bytes read back differs", len(r.Value))
						}
						found = true
					}
				})
			}
			if !found {
				t.Fatal("the record was not consumed back")
			}
			md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(md.Brokers) != 1 || md.Brokers[0].Port != int32(b.ports[l]) {
				t.Errorf("Metadata over %s advertises %+v, want port %d", l, md.Brokers, b.ports[l])
			}
		})
	}
	// And over PLAINTEXT, the PLAINTEXT port.
	md, err := kadm.NewClient(b.Client()).BrokerMetadata(context.Background())
	if err != nil || len(md.Brokers) != 1 || md.Brokers[0].Port != int32(b.Port) {
		t.Errorf("Metadata over PLAINTEXT: %+v %v, want port %d", md.Brokers, err, b.Port)
	}
}

// ssl.client.auth=required: without a client certificate the handshake is
// refused; a plaintext client on a TLS port is closed; the broker serves on.
func TestTLSRefusals(t *testing.T) {
	b := startTLSBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for name, opts := range map[string][]kgo.Opt{
		"no client certificate on JKS": {kgo.SeedBrokers(b.addr("JKS")), kgo.DialTLSConfig(b.tlsConfig(false))},
		"plaintext on SSL":             {kgo.SeedBrokers(b.addr("SSL"))},
		"TLS on PLAINTEXT":             {kgo.SeedBrokers(b.Addr()), kgo.DialTLSConfig(b.tlsConfig(false))},
	} {
		cl, err := kgo.NewClient(append(opts, kgo.RequestRetries(0), kgo.RetryTimeout(time.Second))...)
		if err != nil {
			t.Fatal(err)
		}
		rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = kadm.NewClient(cl).BrokerMetadata(rctx)
		rcancel()
		cl.Close()
		if err == nil {
			t.Errorf("%s: Metadata answered", name)
		}
	}
	// A raw plaintext connection to the SSL port is closed by the broker.
	c, err := net.DialTimeout("tcp", b.addr("SSL"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(15 * time.Second))
	if _, err := c.Write([]byte{0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 1, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(make([]byte, 64)); err == nil {
		t.Errorf("plaintext request on the SSL port got %d bytes back", n)
	}
	if _, err := kadm.NewClient(b.Client()).BrokerMetadata(ctx); err != nil {
		t.Errorf("PLAINTEXT after the refusals: %v", err)
	}
	if log := b.Log(); !strings.Contains(log, "TLS handshake failed") || !strings.Contains(log, "a TLS handshake on a PLAINTEXT listener") {
		t.Errorf("the refusals were not logged:\n%s", head(log))
	}
}

// kcat (librdkafka) over SSL with the CA, and with mTLS on the listener
// that requires a client certificate: produce, then consume back.
func TestTLSKcat(t *testing.T) {
	_, err := exec.LookPath("kcat")
	harness.NeedTool(t, err == nil, "kcat")
	b := startTLSBroker(t)
	createTopic(t, b.Broker, "kcat-tls", 1, nil)
	ssl := []string{"-X", "security.protocol=SSL", "-X", "ssl.ca.location=" + b.caFile}
	mtls := append(append([]string{}, ssl...), "-X", "ssl.certificate.location="+b.certFile, "-X", "ssl.key.location="+b.keyFile)
	var in strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&in, "k%d:%s\n", i, strings.Repeat("v", i*50))
	}
	at := func(listener string, args []string) []string {
		return append([]string{"-b", b.addr(listener)}, args...)
	}
	kcatRoundTrip(t, "kcat-tls", in.String(), at("PEM", ssl), at("SSL", ssl), at("JKS", mtls))
	// Metadata over SSL lists the SSL port.
	out := run(t, time.Minute, "", "kcat", append([]string{"-L", "-b", b.addr("SSL")}, ssl...)...)
	if !strings.Contains(out, b.addr("SSL")) {
		t.Errorf("kcat -L over SSL:\n%s\nwant %s", out, b.addr("SSL"))
	}
}

// kafka-python and confluent-kafka-python over SSL.
func TestTLSPythonClients(t *testing.T) {
	b := startTLSBroker(t)
	createTopic(t, b.Broker, "py-tls", 1, nil)
	for mod, conf := range map[string]map[string]string{
		"kafka":           {"security_protocol": "SSL", "ssl_cafile": b.caFile},
		"confluent_kafka": {"security.protocol": "SSL", "ssl.ca.location": b.caFile},
	} {
		t.Run(mod, func(t *testing.T) { pythonRoundTrip(t, mod, b.addr("SSL"), "py-tls", 100, conf) })
	}
}

// pythonRoundTripScripts, by python module: produce n values (acks=all)
// to a topic, then consume it from the beginning and check exactly those
// values came back, in order; the connection's settings (security) are
// a JSON object in the client's own configuration names.
var pythonRoundTripScripts = map[string]string{
	"kafka": `
import json, sys
from kafka import KafkaProducer, KafkaConsumer
addr, topic, n, kw = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
kw['bootstrap_servers'] = addr
p = KafkaProducer(acks='all', **kw)
for f in [p.send(topic, key=b'kp', value=('v%d' % i).encode()) for i in range(n)]:
    f.get(timeout=30)
p.close()
c = KafkaConsumer(topic, auto_offset_reset='earliest', consumer_timeout_ms=10000, **kw)
got = []
for m in c:  # stops at n, or after 10 s without a record
    if m.key == b'kp':
        got.append(int(m.value[1:]))
        if len(got) == n:
            break
c.close()
assert got == list(range(n)), got[:20]
print("ok", len(got))
`,
	"confluent_kafka": `
import json, sys, time
from confluent_kafka import Producer, Consumer
addr, topic, n, kw = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
kw['bootstrap.servers'] = addr
p = Producer(dict(kw, acks='all'))
for i in range(n):
    p.produce(topic, key=b'ck', value=('v%d' % i).encode())
assert p.flush(30) == 0
c = Consumer(dict(kw, **{'group.id': 'ck-' + topic, 'auto.offset.reset': 'earliest'}))
c.subscribe([topic])
got = []
deadline = time.time() + 30
while len(got) < n and time.time() < deadline:
    m = c.poll(1.0)
    if m is None or m.error():
        continue
    if m.key() == b'ck':
        got.append(int(m.value()[1:]))
c.close()
assert got == list(range(n)), got[:20]
print("ok", len(got))
`,
}

// pythonRoundTrip runs mod's pythonRoundTripScripts against addr with
// the client settings conf (skipping when mod is not installed).
func pythonRoundTrip(t *testing.T, mod, addr, topic string, n int, conf map[string]string) {
	t.Helper()
	py := "/usr/bin/python3"
	harness.NeedTool(t, exec.Command(py, "-c", "import "+mod).Run() == nil, mod)
	f := filepath.Join(t.TempDir(), "roundtrip_"+mod+".py") // not mod.py: it would shadow the module
	if err := os.WriteFile(f, []byte(pythonRoundTripScripts[mod]), 0o644); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	if out := run(t, 2*time.Minute, "", py, f, addr, topic, fmt.Sprint(n), string(js)); strings.TrimSpace(out) != fmt.Sprintf("ok %d", n) {
		t.Fatalf("%s said %q", mod, out)
	}
}

package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"gregor/test/harness"
	"gregor/wire/security/keystore/keystoretest"
)

// The SASL_SSL node's users. Every password is distinct, so that finding
// one in the broker's log names the exchange that leaked it.
const (
	sslPlainUser, sslPlainPass = "alice", "alice-plain-pw"
	sslScramUser               = "carol"
	sslScram256Pass            = "carol-256-pw"
	sslScram512Pass            = "carol-512-pw"
	sslWrongPass               = "not-the-pw"
)

// saslSSLBroker is a single node whose SASL_SSL listeners serve a PKCS12
// keystore signed by the test's CA:
//
//   - SASL_SSL: PLAIN (alice, from the listener's JAAS config),
//     SCRAM-SHA-256 and SCRAM-SHA-512 (carol, from `gregor configs`);
//   - PLAINONLY (SASL_SSL): PLAIN only, for a client asking another mechanism;
//   - EXPIRED (SASL_SSL): a server certificate whose NotAfter has passed;
//   - MTLS (SSL, ssl.client.auth=required): for an expired client certificate;
//
// and the harness's PLAINTEXT listener, which the tools use.
type saslSSLBroker struct {
	*harness.Broker
	ca     *keystoretest.CA
	dir    string
	caFile string // the CA certificate, PEM (kcat's and the python clients' ssl.ca.location)
	addrs  map[string]string
}

func startSASLSSLBroker(t *testing.T) *saslSSLBroker {
	t.Helper()
	dir := t.TempDir()
	ca := keystoretest.NewCA(t, "sasl-ssl-ca")
	expired := ca.ValidBetween(time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
	b := &saslSSLBroker{ca: ca, dir: dir, caFile: ca.WritePEMTrust(t, dir, "ca.pem"), addrs: map[string]string{}}
	var listeners []string
	for _, l := range []string{"SASL_SSL", "PLAINONLY", "EXPIRED", "MTLS"} {
		b.addrs[l] = fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
		listeners = append(listeners, l+"://"+b.addrs[l])
	}
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required ` +
		`user_` + sslPlainUser + `="` + sslPlainPass + `";`
	b.Broker = harness.StartBroker(t, map[string]string{
		"listeners":                      strings.Join(listeners, ","),
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,PLAINONLY:SASL_SSL,EXPIRED:SASL_SSL,MTLS:SSL",
		// Shared by every listener that does not override it.
		"ssl.keystore.type":       "PKCS12",
		"ssl.keystore.location":   ca.Server(t, "broker-0").WritePKCS12(t, dir, "broker.p12", "p12-pass"),
		"ssl.keystore.password":   "p12-pass",
		"ssl.truststore.type":     "PKCS12",
		"ssl.truststore.location": ca.WritePKCS12Trust(t, dir, "trust.p12", "trust-pass"),
		"ssl.truststore.password": "trust-pass",
		"sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",

		"listener.name.sasl_ssl.plain.sasl.jaas.config": jaas,

		"listener.name.plainonly.sasl.enabled.mechanisms": "PLAIN",
		"listener.name.plainonly.plain.sasl.jaas.config":  jaas,

		"listener.name.expired.sasl.enabled.mechanisms": "PLAIN",
		"listener.name.expired.plain.sasl.jaas.config":  jaas,
		"listener.name.expired.ssl.keystore.location":   expired.Server(t, "broker-0").WritePKCS12(t, dir, "expired.p12", "p12-pass"),

		"listener.name.mtls.ssl.client.auth": "required",
	})
	gregorTool(t, "configs", "--bootstrap-server", b.Addr(), "--entity-type", "users", "--entity-name", sslScramUser, "--alter", "--add-config",
		"SCRAM-SHA-256=[iterations=8192,password="+sslScram256Pass+"],SCRAM-SHA-512=[iterations=8192,password="+sslScram512Pass+"]")
	harness.WaitSASL(t, "carol's SCRAM-SHA-512 credential", []string{b.addrs["SASL_SSL"]},
		scram.Auth{User: sslScramUser, Pass: sslScram512Pass}.AsSha512Mechanism(), true, b.tlsOpt())
	return b
}

// tlsConfig trusts the test's CA, as every well-configured client here does.
func (b *saslSSLBroker) tlsConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(b.ca.Cert)
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

func (b *saslSSLBroker) tlsOpt() kgo.Opt { return kgo.DialTLSConfig(b.tlsConfig()) }

// kcatArgs are kcat's flags for listener with SASL mechanism mech as
// user/pass over SASL_SSL, trusting the CA, followed by extra.
func (b *saslSSLBroker) kcatArgs(listener, mech, user, pass string, extra ...string) []string {
	return append([]string{"-b", b.addrs[listener], "-X", "security.protocol=SASL_SSL", "-X", "ssl.ca.location=" + b.caFile,
		"-X", "sasl.mechanisms=" + mech, "-X", "sasl.username=" + user, "-X", "sasl.password=" + pass}, extra...)
}

// kcatRoundTrip produces in (lines of key:value) to topic with kcat's
// connection flags produce, then reads topic back from the beginning
// with each of consume and fails unless it reads exactly in.
func kcatRoundTrip(t *testing.T, topic, in string, produce []string, consume ...[]string) {
	t.Helper()
	run(t, time.Minute, in, "kcat", append([]string{"-P", "-t", topic, "-K:"}, produce...)...)
	for _, c := range consume {
		out := run(t, time.Minute, "", "kcat", append([]string{"-C", "-t", topic, "-o", "beginning", "-e", "-f", "%k:%s\n"}, c...)...)
		if out != in {
			t.Errorf("kcat %v read back a different log:\n%s\nwant:\n%s", c, head(out), head(in))
		}
	}
}

// TestSASLSSLKcat: librdkafka over SASL_SSL with each of SCRAM-SHA-256,
// SCRAM-SHA-512 and PLAIN produces records (some larger than a TLS
// record) and consumes back exactly them.
func TestSASLSSLKcat(t *testing.T) {
	_, err := exec.LookPath("kcat")
	harness.NeedTool(t, err == nil, "kcat")
	b := startSASLSSLBroker(t)
	for _, c := range []struct{ mech, user, pass string }{
		{"SCRAM-SHA-256", sslScramUser, sslScram256Pass},
		{"SCRAM-SHA-512", sslScramUser, sslScram512Pass},
		{"PLAIN", sslPlainUser, sslPlainPass},
	} {
		t.Run(c.mech, func(t *testing.T) {
			topic := "kcat-" + strings.ToLower(c.mech)
			createTopic(t, b.Broker, topic, 1, nil)
			var in strings.Builder
			for i := 0; i < 100; i++ {
				fmt.Fprintf(&in, "%s-%d:%s\n", c.mech, i, strings.Repeat(fmt.Sprint(i%10), i*200))
			}
			args := b.kcatArgs("SASL_SSL", c.mech, c.user, c.pass)
			kcatRoundTrip(t, topic, in.String(), args, args)
		})
	}
	checkNoPasswordLogged(t, b.Broker)
}

// TestSASLSSLPythonClients: kafka-python over SASL_SSL with SCRAM-SHA-512
// and with PLAIN, confluent-kafka-python with SCRAM-SHA-256: each
// produces 100 values and consumes back exactly them, in order.
func TestSASLSSLPythonClients(t *testing.T) {
	b := startSASLSSLBroker(t)
	kafkaPython := func(mech, user, pass string) map[string]string {
		return map[string]string{"security_protocol": "SASL_SSL", "ssl_cafile": b.caFile,
			"sasl_mechanism": mech, "sasl_plain_username": user, "sasl_plain_password": pass}
	}
	for _, c := range []struct {
		name, mod string
		conf      map[string]string
	}{
		{"kafka-python SCRAM-SHA-512", "kafka", kafkaPython("SCRAM-SHA-512", sslScramUser, sslScram512Pass)},
		{"kafka-python PLAIN", "kafka", kafkaPython("PLAIN", sslPlainUser, sslPlainPass)},
		{"confluent-kafka SCRAM-SHA-256", "confluent_kafka", map[string]string{"security.protocol": "SASL_SSL", "ssl.ca.location": b.caFile,
			"sasl.mechanisms": "SCRAM-SHA-256", "sasl.username": sslScramUser, "sasl.password": sslScram256Pass}},
	} {
		t.Run(c.name, func(t *testing.T) {
			topic := strings.NewReplacer(" ", "-", "_", "-").Replace(c.name)
			createTopic(t, b.Broker, topic, 1, nil)
			pythonRoundTrip(t, c.mod, b.addrs["SASL_SSL"], topic, 100, c.conf)
		})
	}
	checkNoPasswordLogged(t, b.Broker)
}

// closing matches the broker's log line for a connection on listener it
// closes with msg, whose fields after the remote address begin with
// fields.
func closing(msg, listener, fields string) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta("closing connection: "+msg+"\t{\"listener\": \""+listener+"\", \"remote\": \"") +
		`[^"]+", ` + regexp.QuoteMeta(fields))
}

// checkNoPasswordLogged fails t if any of the tests' passwords (right or
// wrong) reached the broker's log.
func checkNoPasswordLogged(t *testing.T, b *harness.Broker) {
	t.Helper()
	log := b.Log()
	for _, pw := range []string{sslPlainPass, sslScram256Pass, sslScram512Pass, sslWrongPass, "p12-pass", "trust-pass"} {
		if strings.Contains(log, pw) {
			t.Errorf("the broker's log holds the password %q", pw)
		}
	}
}

// gssapi is a client that asks for GSSAPI, which Gregor does not serve;
// the broker refuses it at SaslHandshake, before any token.
type gssapi struct{}

func (gssapi) Name() string { return "GSSAPI" }
func (gssapi) Authenticate(context.Context, string) (sasl.Session, []byte, error) {
	return nil, nil, errors.New("GSSAPI: no token (the broker should have refused the mechanism)")
}

// TestSASLSSLRefusals: each refusal over SASL_SSL (and, for client
// certificates, over an mTLS SSL listener) as kcat reports it, and as the
// broker answers a Go client at the protocol level, which then sees the
// broker close the connection. Between refusals a client logged in
// before them keeps producing and a new one logs in: the broker serves
// on. No password, right or wrong, reaches the broker's log.
func TestSASLSSLRefusals(t *testing.T) {
	b := startSASLSSLBroker(t)
	_, err := exec.LookPath("kcat")
	haveKcat := err == nil
	createTopic(t, b.Broker, "steady", 1, nil)
	steady := b.Client(kgo.SeedBrokers(b.addrs["SASL_SSL"]), b.tlsOpt(), kgo.DefaultProduceTopic("steady"),
		kgo.SASL(scram.Auth{User: sslScramUser, Pass: sslScram512Pass}.AsSha512Mechanism()))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	old := b.ca.ValidBetween(time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)).Client(t, pkix.Name{CommonName: "old-client"})
	oldCert, oldKey := old.WriteCertAndKey(t, b.dir, "old-client")
	oldPair, err := tls.LoadX509KeyPair(oldCert, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	withOldCert := b.tlsConfig()
	withOldCert.Certificates = []tls.Certificate{oldPair}
	otherCA := b.tlsConfig()
	otherCA.RootCAs = x509.NewCertPool()
	otherCA.RootCAs.AddCert(keystoretest.NewCA(t, "someone-else").Cert)

	const scramFailed = "Authentication failed during authentication due to invalid credentials with SASL mechanism "
	const plainFailed = "Authentication failed: Invalid username or password"
	// librdkafka words it "SSL handshake failed: …certificate verify
	// failed: broker certificate could not be verified" or, from one
	// connection attempt to the next, "error:0A000086:SSL
	// routines::certificate verify failed"; OpenSSL's codes vary too.
	verifyFailed := []string{"certificate verify failed"}
	for _, c := range []struct {
		name string
		// The Go client's attempt and the error it meets.
		listener string
		tls      *tls.Config // nil: plain TCP
		mech     sasl.Mechanism
		goErr    string
		// kcat's flags (nil: kcat cannot ask for it) and what it prints
		// (each of kcatErr).
		kcat    []string
		kcatErr []string
		// The line the broker logs for it.
		logged *regexp.Regexp
	}{{
		name: "wrong password, SCRAM-SHA-256", listener: "SASL_SSL", tls: b.tlsConfig(),
		mech:  scram.Auth{User: sslScramUser, Pass: sslWrongPass}.AsSha256Mechanism(),
		goErr: "SASL_AUTHENTICATION_FAILED: " + scramFailed + "SCRAM-SHA-256",
		kcat:  b.kcatArgs("SASL_SSL", "SCRAM-SHA-256", sslScramUser, sslWrongPass), kcatErr: []string{"SASL authentication error: " + scramFailed + "SCRAM-SHA-256"},
		logged: closing("failed SASL authentication", "SASL_SSL", `"mechanism": "SCRAM-SHA-256", "reason": "`+scramFailed+`SCRAM-SHA-256"`),
	}, {
		name: "wrong password, PLAIN", listener: "SASL_SSL", tls: b.tlsConfig(),
		mech:  plain.Auth{User: sslPlainUser, Pass: sslWrongPass}.AsMechanism(),
		goErr: "SASL_AUTHENTICATION_FAILED: " + plainFailed,
		kcat:  b.kcatArgs("SASL_SSL", "PLAIN", sslPlainUser, sslWrongPass), kcatErr: []string{"SASL authentication error: " + plainFailed},
		logged: closing("failed SASL authentication", "SASL_SSL", `"mechanism": "PLAIN", "reason": "`+plainFailed+`"`),
	}, {
		// As Kafka, an unknown SCRAM user fails as a wrong password does:
		// the answer does not tell which users exist.
		name: "unknown user, SCRAM-SHA-512", listener: "SASL_SSL", tls: b.tlsConfig(),
		mech:  scram.Auth{User: "mallory", Pass: sslWrongPass}.AsSha512Mechanism(),
		goErr: "SASL_AUTHENTICATION_FAILED: " + scramFailed + "SCRAM-SHA-512",
		kcat:  b.kcatArgs("SASL_SSL", "SCRAM-SHA-512", "mallory", sslWrongPass), kcatErr: []string{"SASL authentication error: " + scramFailed + "SCRAM-SHA-512"},
		logged: closing("failed SASL authentication", "SASL_SSL", `"mechanism": "SCRAM-SHA-512", "reason": "`+scramFailed+`SCRAM-SHA-512"`),
	}, {
		name: "unknown user, PLAIN", listener: "SASL_SSL", tls: b.tlsConfig(),
		mech:  plain.Auth{User: "mallory", Pass: sslWrongPass}.AsMechanism(),
		goErr: "SASL_AUTHENTICATION_FAILED: " + plainFailed,
		kcat:  b.kcatArgs("SASL_SSL", "PLAIN", "mallory", sslWrongPass), kcatErr: []string{"SASL authentication error: " + plainFailed},
		logged: closing("failed SASL authentication", "SASL_SSL", `"mechanism": "PLAIN", "reason": "`+plainFailed+`"`),
	}, {
		name: "SCRAM-SHA-512 on a PLAIN-only listener", listener: "PLAINONLY", tls: b.tlsConfig(),
		mech:  scram.Auth{User: sslScramUser, Pass: sslScram512Pass}.AsSha512Mechanism(),
		goErr: "UNSUPPORTED_SASL_MECHANISM (enabled: [PLAIN])",
		kcat:  b.kcatArgs("PLAINONLY", "SCRAM-SHA-512", sslScramUser, sslScram512Pass),
		// librdkafka names the error, then lists the mechanisms the handshake answered.
		kcatErr: []string{"SASL SCRAM-SHA-512 mechanism handshake failed: Broker: Unsupported SASL mechanism: broker's supported mechanisms: PLAIN"},
		logged:  closing("unsupported SASL mechanism", "PLAINONLY", `"mechanism": "SCRAM-SHA-512", "enabled": ["PLAIN"]`),
	}, {
		// kcat (librdkafka without Kerberos) cannot ask for GSSAPI.
		name: "GSSAPI", listener: "SASL_SSL", tls: b.tlsConfig(), mech: gssapi{},
		goErr:  "UNSUPPORTED_SASL_MECHANISM (enabled: [PLAIN SCRAM-SHA-256 SCRAM-SHA-512])",
		logged: closing("unsupported SASL mechanism", "SASL_SSL", `"mechanism": "GSSAPI", "enabled": ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]`),
	}, {
		name: "expired server certificate", listener: "EXPIRED", tls: b.tlsConfig(),
		mech:  plain.Auth{User: sslPlainUser, Pass: sslPlainPass}.AsMechanism(),
		goErr: "tls: failed to verify certificate: x509: certificate has expired or is not yet valid",
		// OpenSSL's verify result is not in librdkafka's message: an expired
		// certificate reads as an untrusted one.
		kcat: b.kcatArgs("EXPIRED", "PLAIN", sslPlainUser, sslPlainPass), kcatErr: verifyFailed,
		logged: closing("TLS handshake failed", "EXPIRED", `"reason": "the client refused the handshake`),
	}, {
		name: "untrusted server certificate", listener: "SASL_SSL", tls: otherCA,
		mech:  plain.Auth{User: sslPlainUser, Pass: sslPlainPass}.AsMechanism(),
		goErr: "tls: failed to verify certificate: x509: certificate signed by unknown authority",
		// Without ssl.ca.location: the system's CAs, which do not hold the test's.
		kcat:    []string{"-b", b.addrs["SASL_SSL"], "-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=PLAIN", "-X", "sasl.username=" + sslPlainUser, "-X", "sasl.password=" + sslPlainPass},
		kcatErr: verifyFailed,
		logged:  closing("TLS handshake failed", "SASL_SSL", `"reason": "the client refused the handshake`),
	}, {
		// TLS 1.3: the client's handshake is done before the broker checks
		// its certificate, so the refusal is the alert on the first read.
		name: "expired client certificate on mTLS", listener: "MTLS", tls: withOldCert,
		goErr: "remote error: tls: expired certificate",
		kcat: []string{"-b", b.addrs["MTLS"], "-X", "security.protocol=SSL", "-X", "ssl.ca.location=" + b.caFile,
			"-X", "ssl.certificate.location=" + oldCert, "-X", "ssl.key.location=" + oldKey},
		kcatErr: []string{"Receive failed: ", "sslv3 alert certificate expired"},
		logged:  closing("TLS handshake failed", "MTLS", `"reason": "the client certificate failed verification`),
	}, {
		name: "plaintext client on the SASL_SSL port", listener: "SASL_SSL",
		mech:    plain.Auth{User: sslPlainUser, Pass: sslPlainPass}.AsMechanism(),
		goErr:   "EOF", // closed without an answer
		kcat:    []string{"-b", b.addrs["SASL_SSL"], "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=PLAIN", "-X", "sasl.username=" + sslPlainUser, "-X", "sasl.password=" + sslPlainPass},
		kcatErr: []string{"Disconnected while requesting ApiVersion: might be caused by incorrect security.protocol configuration (connecting to a SSL listener?)"},
		logged:  closing("TLS handshake failed", "SASL_SSL", `"reason": "the client does not speak TLS (a PLAINTEXT client on an SSL listener?)"`),
	}} {
		t.Run(c.name, func(t *testing.T) {
			closed, err := saslAttempt(b.addrs[c.listener], c.tls, c.mech)
			if err == nil || !strings.HasPrefix(err.Error(), c.goErr) {
				t.Errorf("Go client: %v, want %s", err, c.goErr)
			}
			if !closed {
				t.Error("the broker left the connection open after refusing it")
			}
			if c.kcat != nil && haveKcat {
				cmd := exec.Command("kcat", append(c.kcat, "-L", "-m", "1")...)
				out, _ := cmd.CombinedOutput()
				if cmd.ProcessState.ExitCode() == 0 || !containsAll(string(out), c.kcatErr) {
					t.Errorf("kcat: exit %d, printed\n%s\nwant %s", cmd.ProcessState.ExitCode(), out, c.kcatErr)
				}
			}
			if !c.logged.MatchString(b.Log()) {
				t.Errorf("the broker's log has no line matching %s", c.logged)
			}
			// The broker serves on: the client connected before goes on
			// producing, a new one logs in.
			if err := steady.ProduceSync(ctx, &kgo.Record{Value: []byte(c.name)}).FirstErr(); err != nil {
				t.Fatalf("the steady client after the refusal: %v", err)
			}
			if err := harness.SASLLogin(b.addrs["SASL_SSL"], plain.Auth{User: sslPlainUser, Pass: sslPlainPass}.AsMechanism(), b.tlsOpt()); err != nil {
				t.Fatalf("a new login after the refusal: %v", err)
			}
		})
	}
	harness.NeedTool(t, haveKcat, "kcat")
	checkNoPasswordLogged(t, b.Broker)
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// saslAttempt connects to addr (over TLS with cfg, plain TCP when cfg is
// nil), asks for m's mechanism (nil m: an SSL listener, ApiVersions instead) with SaslHandshake v1 and runs m's
// exchange through SaslAuthenticate v1, within 10 s. err is nil when
// the login succeeded; otherwise the first failure: the TLS error, the
// broker's answer as "ERROR_NAME: message" (SaslAuthenticate) or
// "ERROR_NAME (enabled: [mechanisms])" (SaslHandshake), or io.EOF when the
// broker closed without answering. closed reports that the broker then
// closed the TCP connection (within 10 s).
func saslAttempt(addr string, cfg *tls.Config, m sasl.Mechanism) (closed bool, err error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return false, err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := saslExchange(nc, cfg, m); err != nil {
		// Whatever the client or the broker still had to send (a TLS
		// alert), then EOF: a timeout means the broker kept it open.
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		_, rerr := io.Copy(io.Discard, nc)
		var ne net.Error
		return !(errors.As(rerr, &ne) && ne.Timeout()), err
	}
	return false, nil
}

func saslExchange(nc net.Conn, cfg *tls.Config, m sasl.Mechanism) error {
	c := nc
	if cfg != nil {
		cfg = cfg.Clone()
		cfg.ServerName, _, _ = net.SplitHostPort(nc.RemoteAddr().String()) // as franz-go and librdkafka verify: the address dialled
		tc := tls.Client(nc, cfg)
		if err := tc.Handshake(); err != nil {
			return err
		}
		c = tc
	}
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("sasl-attempt"))
	corr := int32(0)
	roundTrip := func(req kmsg.Request, resp kmsg.Response) error {
		corr++
		if _, err := c.Write(f.AppendRequest(nil, req, corr)); err != nil {
			return err
		}
		var size [4]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(size[:])
		if n < 4 || n > 1<<20 {
			return fmt.Errorf("response of %d bytes", n)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(c, body); err != nil {
			return err
		}
		if got := int32(binary.BigEndian.Uint32(body)); got != corr {
			return fmt.Errorf("correlation id %d, want %d", got, corr)
		}
		resp.SetVersion(req.GetVersion())
		return resp.ReadFrom(body[4:]) // v1 headers: no tagged fields
	}
	name := func(code int16) string {
		var ke *kerr.Error
		if errors.As(kerr.ErrorForCode(code), &ke) {
			return ke.Message
		}
		return fmt.Sprint("error code ", code)
	}
	if m == nil { // an SSL listener: any request will do
		return roundTrip(kmsg.NewPtrApiVersionsRequest(), kmsg.NewPtrApiVersionsResponse())
	}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, m.Name()
	hsr := kmsg.NewPtrSASLHandshakeResponse()
	if err := roundTrip(hs, hsr); err != nil {
		return err
	}
	if hsr.ErrorCode != 0 {
		return fmt.Errorf("%s (enabled: %v)", name(hsr.ErrorCode), hsr.SupportedMechanisms)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sess, msg, err := m.Authenticate(ctx, nc.RemoteAddr().String())
	if err != nil {
		return err
	}
	for {
		a := kmsg.NewPtrSASLAuthenticateRequest()
		a.Version, a.SASLAuthBytes = 1, msg
		ar := kmsg.NewPtrSASLAuthenticateResponse()
		if err := roundTrip(a, ar); err != nil {
			return err
		}
		if ar.ErrorCode != 0 {
			text := ""
			if ar.ErrorMessage != nil {
				text = *ar.ErrorMessage
			}
			return fmt.Errorf("%s: %s", name(ar.ErrorCode), text)
		}
		done, next, err := sess.Challenge(ar.SASLAuthBytes)
		if err != nil || done {
			return err
		}
		msg = next
	}
}

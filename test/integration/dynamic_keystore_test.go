package integration

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/test/harness"
	"gregor/wire/security/keystore/keystoretest"
)

// TestDynamicKeystoreReload: a per-broker dynamic config replaces an SSL
// listener's keystore at run time (kafka-configs --entity-name 0
// listener.name.ssl.ssl.keystore.location/password): new handshakes
// present the new certificate, a connection opened before keeps working,
// the password is stored encrypted with password.encoder.secret (the
// metadata file never holds it in clear), a keystore that does not load
// or a <default> keystore is refused and changes nothing.
func TestDynamicKeystoreReload(t *testing.T) {
	dir := t.TempDir()
	ca := keystoretest.NewCA(t, "gregor-test-ca")
	sslPort := harness.FreePort(t)
	b := harness.StartBroker(t, map[string]string{
		"listeners":                               fmt.Sprintf("SSL://127.0.0.1:%d", sslPort),
		"listener.security.protocol.map":          "PLAINTEXT:PLAINTEXT,SSL:SSL",
		"listener.name.ssl.ssl.keystore.type":     "PKCS12",
		"listener.name.ssl.ssl.keystore.location": ca.Server(t, "broker-first").WritePKCS12(t, dir, "first.p12", "first-pass"),
		"listener.name.ssl.ssl.keystore.password": "first-pass",
		"password.encoder.secret":                 "encoder-secret-for-the-test",
	})
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	sslAddr := fmt.Sprintf("127.0.0.1:%d", sslPort)
	peerCN := func() (string, *tls.Conn) {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", sslAddr, &tls.Config{RootCAs: pool, ServerName: "localhost"})
		if err != nil {
			t.Fatalf("TLS dial: %v", err)
		}
		return c.ConnectionState().PeerCertificates[0].Subject.CommonName, c
	}
	cn, old := peerCN()
	defer old.Close()
	if cn != "broker-first" {
		t.Fatalf("first certificate CN %q", cn)
	}
	configs := func(args ...string) (string, error) {
		return gregorConfigs(t, append([]string{"--bootstrap-server", b.Addr(), "--entity-type", "brokers"}, args...)...)
	}

	// Refusals change nothing.
	if out, err := configs("--entity-default", "--alter", "--add-config", "listener.name.ssl.ssl.keystore.location=/x"); err == nil ||
		!strings.Contains(out, "Cannot update these configs at default cluster level, broker id must be specified") {
		t.Fatalf("keystore at <default>: %v %s", err, out)
	}
	if out, err := configs("--entity-name", "0", "--alter", "--add-config", "listener.name.ssl.ssl.keystore.location="+filepath.Join(dir, "missing.p12")+",listener.name.ssl.ssl.keystore.password=x"); err == nil ||
		!strings.Contains(out, "keystore") {
		t.Fatalf("a keystore that does not load: %v %s", err, out)
	}
	if out, err := configs("--entity-name", "0", "--alter", "--add-config", "listener.name.plaintext.ssl.keystore.location=/x"); err == nil ||
		!strings.Contains(out, "no keystore") {
		t.Fatalf("a keystore on the PLAINTEXT listener: %v %s", err, out)
	}
	if cn, c := peerCN(); cn != "broker-first" {
		t.Fatalf("after refused updates the certificate is %q", cn)
	} else {
		c.Close()
	}

	const secondPass = "second-keystore-pass-7c1e"
	second := ca.Server(t, "broker-second").WritePKCS12(t, dir, "second.p12", secondPass)
	if out, err := configs("--entity-name", "0", "--alter", "--add-config",
		"listener.name.ssl.ssl.keystore.location="+second+",listener.name.ssl.ssl.keystore.password="+secondPass); err != nil {
		t.Fatalf("alter: %v %s", err, out)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		cn, c := peerCN()
		c.Close()
		if cn == "broker-second" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("new handshakes still present %q after 20 s", cn)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The connection opened before the reload still answers.
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 0
	if _, err := old.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, 1)); err != nil {
		t.Fatalf("old connection: %v", err)
	}
	var size [4]byte
	_ = old.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := old.Read(size[:]); err != nil {
		t.Fatalf("old connection after the reload: %v", err)
	}
	// Described as a sensitive value; stored encrypted.
	out, err := configs("--entity-name", "0", "--describe")
	if err != nil || !strings.Contains(out, "listener.name.ssl.ssl.keystore.password=null sensitive=true") || strings.Contains(out, secondPass) {
		t.Fatalf("describe: %v %s", err, out)
	}
	db, err := os.ReadFile(filepath.Join(b.DataDir, "__gregor_metadata.db"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(db, []byte(secondPass)) || !bytes.Contains(db, []byte("encryptedPassword:")) {
		t.Fatal("the metadata store holds the keystore password in clear, or no encrypted password")
	}
}

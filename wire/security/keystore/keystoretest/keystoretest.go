// Package keystoretest makes the certificates and keystores that tests use:
// a throw-away CA, server and client certificates signed by it, written as
// PKCS12, JKS or PEM files (or returned as inline PEM) with passwords the
// test chooses. Nothing it makes is committed; everything lives in the
// test's temporary directory.
//
// The functions taking a testing.TB fail the test on error. Programs that
// are not tests (test/bench/compare's security mode) use the
// error-returning core they wrap: GenerateCA, CA.IssueServer, Leaf.PKCS12
// and CA.PKCS12Trust.
package keystoretest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	jks "github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// CA is a certificate authority for one test.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// notBefore/notAfter, when set (ValidBetween), replace the leaves'
	// default validity of an hour ago to a day from now.
	notBefore, notAfter time.Time
}

// Leaf is a certificate signed by a CA, with its key.
type Leaf struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	CA   *CA
}

// serial numbers every certificate differently (parallel tests share it).
var serial atomic.Int64

func init() { serial.Store(time.Now().UnixNano()) }

func next() *big.Int { return big.NewInt(serial.Add(1)) }

// fatalIf fails t with err, if any.
func fatalIf(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// NewCA makes a self-signed CA valid for a day.
func NewCA(t testing.TB, cn string) *CA {
	t.Helper()
	ca, err := GenerateCA(cn)
	fatalIf(t, err)
	return ca
}

// GenerateCA is NewCA returning its error: a self-signed ECDSA P-256 CA
// (subject CN=cn,O=Gregor tests) valid from an hour ago for a day.
func GenerateCA(cn string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: next(), Subject: pkix.Name{CommonName: cn, Organization: []string{"Gregor tests"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: c, key: key}, nil
}

// ValidBetween returns the same CA (same key and certificate) signing
// leaves valid from notBefore to notAfter only: a notAfter in the past makes
// expired certificates, which a peer that verifies them refuses. ca itself
// is unchanged.
func (ca *CA) ValidBetween(notBefore, notAfter time.Time) *CA {
	c := *ca
	c.notBefore, c.notAfter = notBefore, notAfter
	return &c
}

// Server makes a server certificate for 127.0.0.1, ::1 and localhost (plus
// extra DNS names) whose subject is CN=cn,OU=…,O=Gregor tests.
func (ca *CA) Server(t testing.TB, cn string, dnsNames ...string) *Leaf {
	t.Helper()
	l, err := ca.IssueServer(cn, dnsNames...)
	fatalIf(t, err)
	return l
}

// IssueServer is Server returning its error.
func (ca *CA) IssueServer(cn string, dnsNames ...string) (*Leaf, error) {
	return ca.issue(pkix.Name{CommonName: cn, OrganizationalUnit: []string{"brokers"}, Organization: []string{"Gregor tests"}},
		append([]string{"localhost"}, dnsNames...), []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth})
}

// Client makes a client certificate with the given subject (its RFC 2253
// form is what the broker's principal builder sees).
func (ca *CA) Client(t testing.TB, subject pkix.Name) *Leaf {
	t.Helper()
	l, err := ca.issue(subject, nil, nil, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth})
	fatalIf(t, err)
	return l
}

func (ca *CA) issue(subject pkix.Name, dns []string, ips []net.IP, usage []x509.ExtKeyUsage) (*Leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	notBefore, notAfter := time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	if !ca.notAfter.IsZero() {
		notBefore, notAfter = ca.notBefore, ca.notAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: next(), Subject: subject, DNSNames: dns, IPAddresses: ips,
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usage,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Leaf{Cert: c, Key: key, CA: ca}, nil
}

// CertPEM is the leaf's certificate chain (leaf, then CA) as PEM.
func (l *Leaf) CertPEM() string {
	var b bytes.Buffer
	pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: l.Cert.Raw})
	pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: l.CA.Cert.Raw})
	return b.String()
}

// KeyPEM is the leaf's private key as unencrypted PKCS#8 PEM.
func (l *Leaf) KeyPEM() string {
	der, err := x509.MarshalPKCS8PrivateKey(l.Key)
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// CertPEM is the CA's certificate as PEM (a PEM truststore).
func (ca *CA) CertPEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw}))
}

// WritePKCS12 writes the leaf's key and chain as a PKCS12 keystore in dir
// and returns its path.
func (l *Leaf) WritePKCS12(t testing.TB, dir, name, password string) string {
	t.Helper()
	data, err := l.PKCS12(password)
	fatalIf(t, err)
	return write(t, dir, name, data)
}

// PKCS12 is the leaf's key and chain (leaf, then CA) as a PKCS12 keystore
// protected by password (go-pkcs12's Modern encoding).
func (l *Leaf) PKCS12(password string) ([]byte, error) {
	return pkcs12.Modern.Encode(l.Key, l.Cert, []*x509.Certificate{l.CA.Cert}, password)
}

// WriteJKS writes the leaf's key (with keyPassword) and chain as a JKS
// keystore protected by storePassword.
func (l *Leaf) WriteJKS(t testing.TB, dir, name, storePassword, keyPassword string) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(l.Key)
	if err != nil {
		t.Fatal(err)
	}
	ks := jks.New()
	err = ks.SetPrivateKeyEntry("gregor", jks.PrivateKeyEntry{
		CreationTime: time.Now(), PrivateKey: der,
		CertificateChain: []jks.Certificate{{Type: "X509", Content: l.Cert.Raw}, {Type: "X509", Content: l.CA.Cert.Raw}},
	}, []byte(keyPassword))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ks.Store(&b, []byte(storePassword)); err != nil {
		t.Fatal(err)
	}
	return write(t, dir, name, b.Bytes())
}

// WritePEM writes the leaf's key and chain into one PEM file (a KIP-651
// PEM keystore file).
func (l *Leaf) WritePEM(t testing.TB, dir, name string) string {
	return write(t, dir, name, []byte(l.KeyPEM()+l.CertPEM()))
}

// WriteCertAndKey writes the leaf's chain to dir/name.crt and its key to
// dir/name.key, both PEM, as openssl-based clients (kcat's
// ssl.certificate.location and ssl.key.location) take them.
func (l *Leaf) WriteCertAndKey(t testing.TB, dir, name string) (certFile, keyFile string) {
	return write(t, dir, name+".crt", []byte(l.CertPEM())), write(t, dir, name+".key", []byte(l.KeyPEM()))
}

// WritePKCS12Trust writes the CA as a PKCS12 truststore.
func (ca *CA) WritePKCS12Trust(t testing.TB, dir, name, password string) string {
	t.Helper()
	data, err := ca.PKCS12Trust(password)
	fatalIf(t, err)
	return write(t, dir, name, data)
}

// PKCS12Trust is the CA certificate as a PKCS12 truststore protected by
// password.
func (ca *CA) PKCS12Trust(password string) ([]byte, error) {
	return pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca.Cert}, password)
}

// WriteJKSTrust writes the CA as a JKS truststore.
func (ca *CA) WriteJKSTrust(t testing.TB, dir, name, password string) string {
	t.Helper()
	ks := jks.New()
	if err := ks.SetTrustedCertificateEntry("ca", jks.TrustedCertificateEntry{
		CreationTime: time.Now(), Certificate: jks.Certificate{Type: "X509", Content: ca.Cert.Raw},
	}); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ks.Store(&b, []byte(password)); err != nil {
		t.Fatal(err)
	}
	return write(t, dir, name, b.Bytes())
}

// WritePEMTrust writes the CA certificate as a PEM file (ca.crt, as
// openssl-based clients such as kcat and kafka-python take it).
func (ca *CA) WritePEMTrust(t testing.TB, dir, name string) string {
	return write(t, dir, name, []byte(ca.CertPEM()))
}

func write(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
